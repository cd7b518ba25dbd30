"""The Cache panel of the prompt page in Debian's Chromium, over a real uvicorn and a real
ProjectSession: the request as a bar in order coloured by class, the breakpoints, the blocks and
the suggested use order, as ``crux-devtools cache`` says them."""

from __future__ import annotations

import shutil
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from test_diff_browser import until as until_within
from waits import WAIT
from web_conftest_helpers import live_server, new_page, require_browser

from crux_devtools.inspector.session.service import ProjectSession
from crux_devtools.web.app import create_app

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="session")]
PROJECTS = Path(__file__).parents[2] / "projects"
until = partial(until_within, timeout=WAIT)


async def test_the_cache_panel_draws_the_request_by_class_with_breakpoints_and_the_suggestion(tmp_path: Path, browser: Any) -> None:
    require_browser()
    root = tmp_path / "breakers"
    shutil.copytree(PROJECTS / "cache_breakers", root)
    with live_server(create_app(ProjectSession(root, history=False))) as server:
        async with new_page(browser) as page:
            await page.goto(server.url + "/prompts/timestamp")
            await until(page, "() => !!document.querySelector('#cache-panel svg.cache-bar')")
            order = await page.evaluate("() => [...document.querySelectorAll('rect.cache-seg')].map(r => [r.dataset.block, r.classList[1]])")
            assert order == [["tools", "cache-static"], ["prompt", "cache-static"], ["clock", "cache-per-request"], ["catalog", "cache-static"]]
            widths = await page.evaluate("() => [...document.querySelectorAll('rect.cache-seg')].map(r => r.getBoundingClientRect().width)")
            assert widths[3] > 50 * widths[2]  # the catalogue's ~4,900 tokens against the clock's 19
            colours = await page.evaluate("() => [...document.querySelectorAll('rect.cache-seg')].map(r => getComputedStyle(r).fill)")
            assert colours[2] != colours[3]
            suggestion = await page.inner_text(".cache-suggestion")
            assert "move clock (per-request, 19 tokens, breakers.py:36) after catalog (static, 4,904 tokens)" in suggestion
            prefix = await page.inner_text(".cache-prefix")
            assert " requests, each planned twice" in prefix and "(s)" not in prefix
            row = await page.inner_text('table.cache-blocks tr[data-block="clock"]')
            assert "per-request" in row and "breakers.py:36" in row
            await page.locator("section.cache-card").scroll_into_view_if_needed()
            await page.screenshot(path=str(tmp_path / "cache-timestamp.png"))
            await page.goto(server.url + "/prompts/per-user")
            await until(page, "() => document.querySelectorAll('rect.cache-break').length === 1")
            assert "(user)" in await page.inner_text('table.cache-blocks tr[data-block="user-profile"]')
            await page.locator("section.cache-card").scroll_into_view_if_needed()
            await page.screenshot(path=str(tmp_path / "cache-per-user.png"))
