"""MCP over streamable HTTP at ``/mcp`` of a real ``crux-devtools serve`` (uvicorn on 127.0.0.1): the
SDK's client reads the page's own session; a foreign Host or Origin is refused like on the page."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402
from waits import Lines, until  # noqa: E402
from web_conftest_helpers import free_port  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
CLI = str(Path(sys.executable).with_name("crux-devtools"))
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    project = tmp_path_factory.mktemp("mcp_http") / "sample"
    shutil.copytree(REPO / "sample_project", project, ignore=shutil.ignore_patterns(".crux", "__pycache__"))
    port = free_port()
    child = subprocess.Popen([CLI, "serve", str(project), "--no-open", "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, stdin=subprocess.DEVNULL)
    lines = Lines(child.stdout)  # type: ignore[arg-type]
    url = f"http://127.0.0.1:{port}"
    try:
        said = [lines.next() for _ in range(3)]
        assert said[2].strip() == f"MCP (streamable HTTP) at {url}/mcp", said

        def answers() -> bool:
            try:
                return httpx.get(url + "/api/prompts").status_code == 200
            except httpx.HTTPError:
                return False

        until(answers, "serve answers after the project's first load")
        yield url
    finally:
        child.terminate()
        child.wait()


async def test_the_sdk_client_reads_the_pages_session_over_http(served: str) -> None:
    async with Client(served + "/mcp") as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert {"list_targets", "inspect", "check", "diff", "runs", "run", "replay"} <= names
        assert not names & {"run_target", "replay_send"}  # serve never offers a tool that spends
        listed = json.loads((await client.call_tool("list_targets", {})).content[0].text)
        page = httpx.get(served + "/api/prompts").json()
        assert listed["targets"] == page  # the page's own list, from the same session
        result = await client.call_tool("inspect", {"target": "budgeted-reply", "example": "with-brand-voice", "detail": "full"})
        inspected = json.loads(result.content[0].text)
        rows = {row["id"]: row for row in inspected["decisions"][0]["contexts"]}
        assert rows["style-examples"]["decision"] == "dropped" and rows["style-examples"]["where"] == "03_budgets.py:21"


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Host": "evil.example"}, 400),
        ({"Host": "127.0.0.1.evil.example"}, 400),
        ({"Origin": "http://evil.example"}, 403),
        ({"Origin": "http://localhost:1@evil.example"}, 403),
        ({"Origin": "null"}, 403),
    ],
)
def test_a_foreign_host_or_origin_is_refused_before_the_protocol(served: str, headers: dict[str, str], status: int) -> None:
    posted = httpx.post(served + "/mcp", json=PING, headers={**ACCEPT, **headers})
    assert posted.status_code == status, posted.text
    if "Origin" in headers:  # a stream opened from another site's page is refused too
        opened = httpx.get(served + "/mcp", headers={"Accept": "text/event-stream", **headers})
        assert opened.status_code == 403


def test_a_local_client_without_an_origin_reaches_the_protocol(served: str) -> None:
    posted = httpx.post(served + "/mcp", json=PING, headers=ACCEPT)
    assert posted.status_code == 400 and "session" in posted.text.lower()  # the MCP server's own answer: no session yet
    same = httpx.post(served + "/mcp", json=PING, headers={**ACCEPT, "Origin": served})
    assert same.status_code == 400 and "session" in same.text.lower()
