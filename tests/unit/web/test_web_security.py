"""Security of the web inspector: local Host only, same-origin writes, no path escapes, inert HTML."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from web_fakes import FakeSession

from crux_devtools.web.app import create_app
from crux_devtools.web.security import allowed_host_set, host_name


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "prompts.py").write_text("import crux_devtools\n" + "\n".join(f"line_{n} = {n}" for n in range(2, 40)) + "\n")
    (root / ".env").write_text("OPENAI_API_KEY=sk-secret\n")
    (tmp_path / "outside.py").write_text("SECRET = 'outside the project'\n")
    return root


@pytest.fixture
async def client(project: Path) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(FakeSession(project, agent_ids=("support-reply",)), bound_host="127.0.0.1")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:4400") as c:
        yield c


@pytest.mark.parametrize("host", ["127.0.0.1:4400", "localhost:4400", "localhost", "[::1]:4400"])
async def test_local_host_headers_are_served(client: httpx.AsyncClient, host: str) -> None:
    assert (await client.get("/", headers={"Host": host})).status_code == 200


@pytest.mark.parametrize("host", ["evil.example:4400", "attacker.com", "127.0.0.1.nip.io:4400", "", "localhost.evil.com"])
async def test_a_foreign_host_is_refused_before_any_route_runs(client: httpx.AsyncClient, host: str) -> None:
    for path in ("/", "/api/prompts", "/events", "/static/app.css"):
        r = await client.get(path, headers={"Host": host})
        assert r.status_code == 400, path
        assert "not allowed" in r.text


async def test_the_bound_host_is_allowed_but_a_wildcard_bind_is_not_a_free_pass() -> None:
    assert "192.168.1.5" in allowed_host_set("192.168.1.5")
    assert "0.0.0.0" not in allowed_host_set("0.0.0.0")
    assert host_name("[::1]:80") == "::1" and host_name("LocalHost:1") == "localhost"


async def test_a_state_changing_request_from_a_foreign_origin_is_refused(client: httpx.AsyncClient) -> None:
    for origin in ("http://evil.example", "null", "http://localhost.evil.com"):
        r = await client.post("/prompts/support-reply/run", data={"example": "billing"}, headers={"Origin": origin})
        assert r.status_code == 403, origin
    cross = await client.post("/prompts/support-reply/run", data={}, headers={"Sec-Fetch-Site": "cross-site"})
    assert cross.status_code == 403


async def test_a_same_origin_post_is_accepted(client: httpx.AsyncClient) -> None:
    r = await client.post(
        "/prompts/support-reply/run", data={"example": "billing"}, headers={"Origin": "http://127.0.0.1:4400", "Sec-Fetch-Site": "same-origin"}
    )
    assert r.status_code == 200 and "step 0" in r.text


async def test_source_view_shows_a_project_file_around_the_line(client: httpx.AsyncClient) -> None:
    r = await client.get("/source", params={"file": "prompts.py", "line": 20})
    assert r.status_code == 200 and "line_20 = 20" in r.text and "src-hit" in r.text


@pytest.mark.parametrize(
    "file", ["../outside.py", "../../etc/passwd", "/etc/passwd", ".env", "sub/../../outside.py", "prompts.py\x00.txt", "%2e%2e/outside.py"]
)
async def test_no_route_reads_a_path_outside_the_project_or_a_hidden_file(client: httpx.AsyncClient, file: str) -> None:
    r = await client.get("/source", params={"file": file})
    assert r.status_code == 404
    assert "outside the project" in r.text or "no such source file" in r.text
    assert "SECRET" not in r.text and "sk-secret" not in r.text and "root:" not in r.text


async def test_static_files_cannot_escape_their_folder(client: httpx.AsyncClient) -> None:
    for path in ("/static/../pyproject.toml", "/static/%2e%2e/pyproject.toml", "/static/..%2fpyproject.toml"):
        r = await client.get(path)
        assert r.status_code == 404, path
        assert "[project]" not in r.text


async def test_prompt_text_with_html_is_escaped_everywhere(client: httpx.AsyncClient) -> None:
    for path in ("/prompts/xss-probe", "/"):
        r = await client.get(path)
        assert "<script>window.__xss" not in r.text and "<img src=x" not in r.text
    page = (await client.get("/prompts/xss-probe")).text
    assert "&lt;script&gt;window.__xss = 1&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=" in page and "Show &lt;b&gt;this&lt;/b&gt; literally." in page


async def test_a_custom_input_with_html_is_escaped_in_the_editor_and_the_errors(client: httpx.AsyncClient) -> None:
    payload = '{"</textarea><script>alert(1)</script>": 1}'
    r = await client.get("/prompts/support-reply", params={"input": payload})
    assert "<script>alert(1)</script>" not in r.text
    assert "&lt;/textarea&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in r.text


async def test_a_foreign_page_cannot_fetch_or_embed_a_page_but_may_link_to_it(client: httpx.AsyncClient) -> None:
    for mode in ("cors", "no-cors"):
        r = await client.get("/prompts/support-reply", headers={"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": mode})
        assert r.status_code == 403
    link = await client.get("/prompts/support-reply", headers={"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"})
    assert link.status_code == 200


async def test_autoescaping_is_on_for_every_template(project: Path) -> None:
    templates = create_app(FakeSession(project)).state.templates
    assert templates.env.autoescape is True
    assert templates.env.from_string("{{ x }}").render(x="<b>") == "&lt;b&gt;"
