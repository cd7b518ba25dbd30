"""The run page's glance in a real Chromium: clicking a step's bar opens that step."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from waits import WAIT
from web_conftest_helpers import live_server, new_page
from web_runs_fakes import RecordingSession, long_run, run_record

from crux_devtools.web.app import create_app

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="session")]


async def test_clicking_a_step_bar_opens_that_step(browser: Any, tmp_path: Path) -> None:
    session = RecordingSession(tmp_path, agent_ids=("billing-agent",))
    session.record(run_record(run_id="agent"))
    with live_server(create_app(session)) as server:
        async with new_page(browser, 1360, 700) as page:
            await page.goto(server.url + "/runs/agent")
            step = page.locator("#step-1")
            assert not await step.evaluate("el => el.getBoundingClientRect().top < window.innerHeight")  # below the fold
            bar = page.locator('#step-bars a.step-bar[data-step="1"]')
            assert "step 1:" in (await bar.locator("title").text_content() or "")
            await bar.click()
            await page.wait_for_function("location.hash === '#step-1'", timeout=WAIT * 1000)
            await page.wait_for_function("document.querySelector('#step-1').getBoundingClientRect().top < window.innerHeight / 2", timeout=WAIT * 1000)
            assert await page.evaluate("document.querySelector('#step-1').matches(':target')")
            assert await page.evaluate("getComputedStyle(document.querySelector('#step-1')).outlineStyle") == "solid"  # marked as the one opened


async def test_a_long_runs_compact_steps_open_from_their_bar_their_link_and_their_address(browser: Any, tmp_path: Path) -> None:
    session = RecordingSession(tmp_path, agent_ids=("billing-agent",))
    session.record(long_run(500, "long"))
    with live_server(create_app(session)) as server:
        async with new_page(browser, 1360, 700) as page:
            await page.goto(server.url + "/runs/long")
            assert await page.locator("#step-250.step-row").count() == 1  # a compact row, not yet its card
            await page.locator('#step-bars a.step-bar[data-step="250"]').click()
            await page.wait_for_function("location.hash === '#step-250'", timeout=WAIT * 1000)
            await page.wait_for_selector("#step-250.step-card", timeout=WAIT * 1000)  # the bar swapped its card in
            assert await page.locator("#step-250 .step-grid").count() == 1
            row = page.locator("#step-300.step-row")
            await row.scroll_into_view_if_needed()
            await row.locator("a.step-open").click()
            await page.wait_for_selector("#step-300.step-card", timeout=WAIT * 1000)
            assert await page.evaluate("location.search") == ""  # swapped in place: the page was not reloaded
            assert await page.locator("section.step-row").count() == 480 - 2
            await page.goto(server.url + "/runs/long?step=400#step-400")  # the address of a step shows it whole
            assert await page.locator("#step-400.step-card").count() == 1
            await page.wait_for_function("document.querySelector('#step-400').getBoundingClientRect().top < window.innerHeight", timeout=WAIT * 1000)
