"""Navigating the prompt list in a real Chromium (Playwright) over a real uvicorn and project session:
``/`` focuses the search, typing narrows the list in place (no page load), Escape clears, a status
filter and a live report keep the search, and a group closed by hand stays closed across updates.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from waits import WAIT
from web_conftest_helpers import LiveServer, new_page, project_server

from crux_devtools.inspector.transport.inprocess import in_process

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="session")]
REPO = Path(__file__).resolve().parents[3]
EVERY = ["support-reply", "responder", "budgeted-reply", "ladder-reply", "agent-reply", "support-agent", "support-with-memory"]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("listnav") / "sample"
    shutil.copytree(REPO / "sample_project", root, ignore=shutil.ignore_patterns("data", "__pycache__", ".crux"))
    return root


@pytest.fixture(scope="module")
def server(project: Path) -> Iterator[LiveServer]:
    """The page is the subject, not the worker: the session loads and reloads in the test process."""
    with project_server(project, transport=in_process) as srv:
        yield srv


async def rows(page: Any) -> list[str]:
    return list(await page.evaluate("Array.from(document.querySelectorAll('#listing tr.prompt-row')).map(tr => tr.dataset.id)"))


async def until(page: Any, check: str, expected: Any, timeout: float = WAIT) -> Any:
    """Poll ``page.evaluate(check)`` until it equals ``expected`` (the page's CSP forbids wait_for_function)."""
    deadline = asyncio.get_running_loop().time() + timeout
    value = None
    while asyncio.get_running_loop().time() < deadline:
        value = await page.evaluate(check)
        if value == expected:
            return value
        await asyncio.sleep(0.05)
    raise AssertionError(f"{check} stayed {value!r}, expected {expected!r}")


async def test_slash_focuses_the_search_and_typing_narrows_the_list_in_place(server: LiveServer, browser: Any) -> None:
    async with new_page(browser) as page:
        await page.goto(server.url + "/")
        await page.wait_for_selector("#live-status[data-state='live']")
        assert await rows(page) == EVERY
        assert "press /" in (await page.get_attribute("#list-q", "placeholder") or "")
        await page.evaluate("window.__samePage = 'yes'")  # gone if the browser loads a new page
        await page.keyboard.press("/")
        assert await page.evaluate("document.activeElement.id") == "list-q"
        await page.keyboard.type("support")
        await until(page, "document.querySelector('#listing').dataset.shown", "3")
        assert await rows(page) == ["support-reply", "support-agent", "support-with-memory"]
        assert await page.input_value("#list-q") == "support"  # the "/" that focused it is not in it
        assert await page.evaluate("window.__samePage") == "yes"
        await until(page, "location.search", "?q=support")  # the address can be shared or reloaded
        # a second word narrows further; a "/" typed in the box is text, not the shortcut
        await page.keyboard.type(" 05_agent/")
        await until(page, "document.querySelector('#listing').dataset.shown", "0")
        assert await page.input_value("#list-q") == "support 05_agent/"
        assert "No prompt or agent matches" in await page.inner_text("#list-empty")
        await page.click("#list-clear")
        await until(page, "document.querySelector('#listing').dataset.shown", str(len(EVERY)))
        assert await page.input_value("#list-q") == "" and await page.evaluate("location.search") == ""
        # Escape clears the search, a second Escape leaves the box
        await page.keyboard.press("/")
        await page.keyboard.type("ladder")
        await until(page, "document.querySelector('#listing').dataset.shown", "1")
        await page.keyboard.press("Escape")
        await until(page, "document.querySelector('#listing').dataset.shown", str(len(EVERY)))
        assert await page.input_value("#list-q") == ""
        assert await page.evaluate("document.activeElement.id") == "list-q"
        await page.keyboard.press("Escape")
        assert await page.evaluate("document.activeElement === document.body")
        assert await page.evaluate("window.__samePage") == "yes"


async def test_a_shared_search_link_and_a_status_filter_survive_a_live_report(server: LiveServer, browser: Any, project: Path) -> None:
    async with new_page(browser) as page:
        await page.goto(server.url + "/?q=ladders")  # by file name: 04_ladders.py
        await page.wait_for_selector("#live-status[data-state='live']")
        assert await page.input_value("#list-q") == "ladders"
        assert await rows(page) == ["ladder-reply"]
        await page.click("#listing a.facet-fits")
        await until(page, "document.querySelector('.facet[aria-current]').dataset.status", "fits")
        await until(page, "location.search", "?q=ladders&status=fits")
        version = int(await page.get_attribute("#listing", "data-version") or 0)
        await page.evaluate("window.__samePage = 'yes'")
        source = project / "04_ladders.py"
        source.write_text(source.read_text() + '\n\nladder_extra = prompt("ladder-extra", system="One more.", examples={"a": {}})\n')
        await until(page, "Number(document.querySelector('#listing').dataset.version) > " + str(version), True)
        assert await rows(page) == ["ladder-reply", "ladder-extra"]  # the new prompt matches; nothing else came back
        assert await page.input_value("#list-q") == "ladders"
        assert await page.get_attribute("#listing a.facet-fits", "aria-current") == "true"
        assert await page.evaluate("window.__samePage") == "yes"
        assert await page.evaluate("location.search") == "?q=ladders&status=fits"


async def test_a_file_group_closed_by_hand_stays_closed_after_a_live_report(server: LiveServer, browser: Any, project: Path) -> None:
    async with new_page(browser) as page:
        await page.goto(server.url + "/")
        await page.wait_for_selector("#live-status[data-state='live']")
        group = "#listing details.group[data-group='02_conditions.py']"
        await page.click(f"{group} > summary")
        assert await page.evaluate(f"document.querySelector(\"{group}\").open") is False
        assert not await page.locator(f"{group} tr.prompt-row").first.is_visible()
        version = int(await page.get_attribute("#listing", "data-version") or 0)
        # An edit that changes what is shown: a comment alone may be folded into a verification still
        # running from an earlier edit, which agrees with the report and keeps its version.
        source = project / "03_budgets.py"
        source.write_text(source.read_text() + '\n\nbudget_extra = prompt("budget-extra", system="One more.", examples={"a": {}})\n')
        await until(page, "Number(document.querySelector('#listing').dataset.version) > " + str(version), True)
        assert await page.evaluate(f"document.querySelector(\"{group}\").open") is False
        assert await page.evaluate("document.querySelector(\"#listing details.group[data-group='03_budgets.py']\").open") is True
        await page.click("#groups-open")  # "expand all" is there with script, and forgets the closed ones
        assert await page.evaluate(f"document.querySelector(\"{group}\").open") is True
        await page.reload()
        await page.wait_for_selector("#listing")
        assert await page.evaluate(f"document.querySelector(\"{group}\").open") is True


async def test_without_javascript_the_search_is_a_plain_form_and_the_filters_are_links(server: LiveServer, browser: Any) -> None:
    context = await browser.new_context(java_script_enabled=False, viewport={"width": 1360, "height": 900})
    context.set_default_timeout(WAIT * 1000)
    try:
        page = await context.new_page()
        await page.goto(server.url + "/")
        await page.fill("#list-q", "memory")
        await page.press("#list-q", "Enter")  # the browser submits the GET form: a new page
        await page.wait_for_url("**/?q=memory*")
        assert await rows(page) == ["support-with-memory"]
        await page.click("#listing a.facet-stale")  # a filter no row matches: an empty list that says so
        await page.wait_for_url("**/?q=memory&status=stale")
        assert await rows(page) == []
        await page.click("#list-clear")
        await page.wait_for_url(server.url + "/")
        assert len(await rows(page)) >= len(EVERY)
    finally:
        await context.close()
