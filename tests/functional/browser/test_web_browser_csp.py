"""Clickjacking and script injection, in a real Chromium: the page refuses to be framed by any other
origin, and works in full (htmx swaps, server-sent events, Run) under its strict
Content-Security-Policy without a single violation."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from web_conftest_helpers import LiveServer, live_server, new_page, require_browser
from web_fakes import FakeSession, default_prompts, support_prompt

from crux_devtools.web.app import create_app
from crux_devtools.web.slow_clients import RequestHeadDeadline

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="session")]

RECORD_VIOLATIONS = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) => window.__csp.push(e.violatedDirective + " " + e.blockedURI));
"""


def attacker_app(target: str) -> Any:
    """Another site's page that frames the inspector under a decoy, to click its Run button."""
    html = f"""<!doctype html><title>win a prize</title>
<p>Click the green button to claim your prize!</p>
<iframe id="victim" src="{target}" width="1200" height="800"></iframe>""".encode()

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/html")]})
        await send({"type": "http.response.body", "body": html})

    return app


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> FakeSession:
    return FakeSession(tmp_path_factory.mktemp("csp"), agent_ids=("support-reply",))


@pytest.fixture(scope="module")
def server(session: FakeSession) -> Iterator[LiveServer]:
    require_browser()
    srv = LiveServer(create_app(session))
    srv.server.config.http = RequestHeadDeadline  # the protocol ``serve`` runs with
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


async def test_every_response_forbids_framing_and_foreign_scripts(server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=server.url) as client:
        for path in ("/", "/prompts/support-reply", "/api/prompts", "/static/app.css", "/source?file=nope.py"):
            r = await client.get(path)
            csp = r.headers["content-security-policy"]
            assert "frame-ancestors 'none'" in csp and "script-src 'self'" in csp, path
            assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
            assert r.headers["x-frame-options"] == "DENY"
            assert r.headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize("attacker_host", ["localhost", "127.0.0.1"], ids=["cross-site", "same-site-other-port"])
async def test_another_origin_cannot_frame_the_page(server: LiveServer, browser: Any, attacker_host: str) -> None:
    target = server.url + "/prompts/support-reply"
    with live_server(attacker_app(target)) as attacker:
        async with new_page(browser) as page:
            console: list[str] = []
            page.on("console", lambda m: console.append(m.text))
            await page.goto(f"http://{attacker_host}:{attacker.port}/")
            await page.wait_for_timeout(1500)
            frame = next(f for f in page.frames if f is not page.main_frame)
            assert not frame.url.startswith(server.url), frame.url  # Chromium shows its error page instead
            assert await frame.locator("button.run").count() == 0
            assert any("frame-ancestors" in line or "X-Frame-Options" in line for line in console), console


async def test_the_page_works_under_its_policy_with_no_violation(server: LiveServer, browser: Any, session: FakeSession) -> None:
    async with new_page(browser) as page:
        await page.add_init_script(RECORD_VIOLATIONS)
        console: list[str] = []
        page.on("console", lambda m: console.append(m.text))
        page.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
        await page.goto(server.url + "/")
        await page.wait_for_selector("#live-status[data-state='live']")  # htmx + the SSE extension ran
        await page.locator("tr.prompt-row a").get_by_text("support-reply", exact=True).click()
        await page.wait_for_selector("#sent-system")
        widths = await page.eval_on_selector_all(".tokenbar .seg", "els => els.map(e => e.getBoundingClientRect().width)")
        assert widths and all(w > 1 for w in widths)  # segment widths are applied without inline styles
        await page.select_option("#example", "french")  # an htmx swap
        await page.wait_for_selector("#report[data-example='french']")
        await page.select_option("#budget-for", "system")
        await page.wait_for_selector("#report[data-budget-for='system']")
        await page.locator("#budget-number").fill("30")
        await page.locator("#budget-number").dispatch_event("change")
        await page.wait_for_selector("#report[data-budget='30']")
        assert await page.locator(".budget-mark").count() == 1
        assert (await page.locator(".budget-mark").bounding_box())["x"] > 0
        await server.acall(session.replace([support_prompt("Sign every reply as Ari."), *default_prompts()[1:]]))
        # an SSE event, then an htmx swap (a locator wait: the policy forbids Playwright's string eval)
        await page.locator("#sent-system").get_by_text("Sign every reply as Ari.").wait_for()
        await page.click("button.run")
        await page.wait_for_selector("#run-output .step")
        await page.click(".custom-input summary")
        await page.click("#input-load")  # app.js reads the example inputs (a JSON data block)
        assert "Bonjour" in await page.input_value("#input")
        assert await page.evaluate("window.__csp") == []
        assert not [line for line in console if "Content Security Policy" in line or "pageerror" in line], console
