"""An answer that comes back late never paints over a newer choice.

A saved file makes the page fetch the report again (the live hook) with the controls as they were.
If the person picks another example before that answer is back, the page must end showing the
example picked, whichever answer the server finishes first.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from web_conftest_helpers import LiveServer, new_page, project_server

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="session")]

MODULE = '''
from crux_devtools import context, prompt

note = context("note", system="Greeting version {version}.")
greeter = prompt("greeter", system="You greet people.", use=[note], examples={{"first": {{}}, "second": {{}}}})
'''


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("stale") / "project"
    root.mkdir()
    (root / "greet.py").write_text(MODULE.format(version=1))
    return root


@pytest.fixture(scope="module")
def server(project: Path) -> Iterator[LiveServer]:
    with project_server(project) as srv:
        yield srv


class LateAnswer:
    """Holds the first request a page's live hook (the element with id ``hook``) makes, until
    ``release``; says whether the page then took the answer or had already given the request up."""

    def __init__(self, page: Any, hook: str) -> None:
        self.page = page
        self.hook = hook
        loop = asyncio.get_running_loop()
        self.held: asyncio.Future[tuple[Any, Any]] = loop.create_future()
        self.fate: asyncio.Future[str] = loop.create_future()

    async def install(self, pattern: str) -> None:
        async def hold(route: Any, request: Any) -> None:
            if request.headers.get("hx-trigger") == self.hook and not self.held.done():
                self.held.set_result((route, request))  # answered only when the test says so
                return
            await route.continue_()

        await self.page.route(pattern, hold)
        self.page.on("requestfinished", lambda r: self._settle(r, "answered"))
        self.page.on("requestfailed", lambda r: self._settle(r, "abandoned"))

    def _settle(self, request: Any, fate: str) -> None:
        if self.held.done() and request is self.held.result()[1] and not self.fate.done():
            self.fate.set_result(fate)

    async def request(self) -> Any:
        return (await self.held)[1]

    async def release(self) -> str:
        """Let the held request through; what became of it."""
        route, request = await self.held
        try:
            await route.continue_()
        except Exception:  # the page already gave the request up: there is nothing to answer
            self._settle(request, "abandoned")
        return await self.fate


async def test_a_live_update_answered_after_a_new_example_was_picked_does_not_replace_it(server: LiveServer, browser: Any, project: Path) -> None:
    async with new_page(browser) as page:
        late = LateAnswer(page, "report-live")
        await late.install("**/prompts/greeter*")
        await page.goto(server.url + "/prompts/greeter?example=first")
        await page.wait_for_selector("#live-status[data-state='live']")
        (project / "greet.py").write_text(MODULE.format(version=2))
        assert "example=first" in (await late.request()).url  # the live update asked with example=first and waits

        await page.select_option("#example", "second")
        await page.wait_for_selector("#report[data-example='second']")
        assert await late.release() == "abandoned"
        assert await page.locator("#report").get_attribute("data-example") == "second"
        assert await page.input_value("#example") == "second"
        await page.locator("#sent-system").get_by_text("Greeting version 2.").first.wait_for()


async def test_a_live_update_of_the_list_answered_after_a_search_does_not_undo_it(server: LiveServer, browser: Any, project: Path) -> None:
    async with new_page(browser) as page:
        late = LateAnswer(page, "listing-live")
        await late.install(server.url + "/?*")
        await page.goto(server.url + "/")
        await page.wait_for_selector("#live-status[data-state='live']")
        await page.wait_for_selector("#listing[data-shown='1']")
        (project / "greet.py").write_text(MODULE.format(version=3))
        await late.request()  # the live update asked for the unfiltered list and waits

        await page.fill("#list-q", "nothing-is-called-this")
        await page.wait_for_selector("#listing[data-shown='0'][data-filtered='1']")
        assert await late.release() == "abandoned"
        assert await page.locator("#listing").get_attribute("data-shown") == "0"
        assert await page.input_value("#list-q") == "nothing-is-called-this"
