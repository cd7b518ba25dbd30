"""Prompt ids round-trip through URLs in a real Chromium: ``a/b``, ``..``, ``x?y#z`` and friends.

A browser resolves ``..`` path segments (even as ``%2e%2e``) and splits at ``?`` and ``#``; each link
on the list must still open its own prompt, and the page's htmx requests must reach it too.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from waits import WAIT
from web_conftest_helpers import LiveServer, live_server, new_page, require_browser
from web_fakes import FakeSession, Ticket

from crux_devtools import prompt
from crux_devtools.web.app import create_app
from crux_devtools.web.views.prompt import prompt_href

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="session")]

AWKWARD_IDS = ["a/b", "..", "x?y#z", ".", "50% off", "back\\slash", "a/b/run", "sp ace+plus&amp"]


def id_prompt(prompt_id: str) -> Any:
    return prompt(
        prompt_id,
        system=f"System text of {prompt_id}.",
        input=Ticket,
        prompt=lambda i: i.message,
        examples={"first": {"message": "one"}, "second": {"message": "two"}},
    )


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> FakeSession:
    root = tmp_path_factory.mktemp("ids")
    return FakeSession(root, [id_prompt(i) for i in AWKWARD_IDS], agent_ids=("a/b", ".."))


@pytest.fixture(scope="module")
def server(session: FakeSession) -> Iterator[LiveServer]:
    require_browser()
    with live_server(create_app(session)) as srv:
        yield srv


async def test_links_encode_every_reserved_character_and_dot_segments_use_the_query() -> None:
    assert prompt_href("a/b") == "/prompts/a%2Fb"
    assert prompt_href("x?y#z") == "/prompts/x%3Fy%23z"
    assert prompt_href("..") == "/prompt?id=.."
    assert prompt_href(".", "/run") == "/prompt/run?id=."
    assert prompt_href("a/b", "/run") == "/prompts/a%2Fb/run"


@pytest.mark.parametrize("prompt_id", AWKWARD_IDS)
async def test_each_id_round_trips_through_the_api(server: LiveServer, prompt_id: str) -> None:
    async with httpx.AsyncClient(base_url=server.url, timeout=WAIT) as client:
        [row] = [p for p in (await client.get("/api/prompts")).json() if p["id"] == prompt_id]
        page = await client.get(row["url"])
        assert page.status_code == 200 and f"System text of {prompt_id}." in page.text.replace("&amp;", "&")


@pytest.mark.parametrize("prompt_id", ["a/b", "..", "x?y#z", ".", "50% off", "back\\slash", "a/b/run"])
async def test_clicking_a_prompt_on_the_list_opens_that_prompt(server: LiveServer, browser: Any, prompt_id: str) -> None:
    async with new_page(browser) as page:
        await page.goto(server.url + "/")
        await page.locator("tr.prompt-row a").get_by_text(prompt_id, exact=True).click()
        await page.wait_for_selector("h1.mono")
        assert await page.locator("h1.mono").inner_text() == prompt_id
        assert f"System text of {prompt_id}." in await page.locator("#sent-system").inner_text()
        # the controls' htmx request goes to the same prompt, and the pushed URL reopens it
        await page.select_option("#example", "second")
        await page.wait_for_selector("#report[data-example='second']")
        assert "two" in await page.locator("#sent-messages").inner_text()
        await page.reload()
        await page.wait_for_selector("#report[data-example='second']")
        assert await page.locator("h1.mono").inner_text() == prompt_id


@pytest.mark.parametrize("prompt_id", ["a/b", ".."])
async def test_run_reaches_an_agent_with_an_awkward_id(server: LiveServer, browser: Any, session: FakeSession, prompt_id: str) -> None:
    async with new_page(browser) as page:
        await page.goto(server.url + prompt_href(prompt_id))
        await page.click("button.run")
        await page.wait_for_selector("#run-output .step")
        assert session.run_calls[-1]["prompt_id"] == prompt_id
