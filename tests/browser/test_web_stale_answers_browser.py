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

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

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


async def test_a_live_update_answered_after_a_new_example_was_picked_does_not_replace_it(server: LiveServer, browser: Any, project: Path) -> None:
    async with new_page(browser) as page:
        held: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

        async def hold_the_live_update(route: Any, request: Any) -> None:
            if request.headers.get("hx-trigger") == "report-live" and not held.done():
                held.set_result((route, request))  # answered only when the test says so
                return
            await route.continue_()

        await page.route("**/prompts/greeter*", hold_the_live_update)
        fates: dict[Any, asyncio.Future[str]] = {}

        def settle(request: Any, fate: str) -> None:
            future = fates.get(request)
            if future is not None and not future.done():
                future.set_result(fate)

        page.on("requestfinished", lambda r: settle(r, "answered"))
        page.on("requestfailed", lambda r: settle(r, "abandoned"))

        await page.goto(server.url + "/prompts/greeter?example=first")
        await page.wait_for_selector("#live-status[data-state='live']")
        (project / "greet.py").write_text(MODULE.format(version=2))
        route, request = await held  # the live update asked with example=first and waits
        assert "example=first" in request.url
        fates[request] = asyncio.get_running_loop().create_future()

        await page.select_option("#example", "second")
        await page.wait_for_selector("#report[data-example='second']")
        try:
            await route.continue_()  # the late answer is let through now
        except Exception:  # the page already gave the request up: there is nothing to answer
            settle(request, "abandoned")
        assert await fates[request] == "abandoned"
        assert await page.locator("#report").get_attribute("data-example") == "second"
        assert await page.input_value("#example") == "second"
        await page.locator("#sent-system").get_by_text("Greeting version 2.").first.wait_for()
