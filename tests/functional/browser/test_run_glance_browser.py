"""The run page's glance in a real Chromium: clicking a step's bar opens that step."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from waits import WAIT
from web_conftest_helpers import live_server, new_page
from web_runs_fakes import RecordingSession, run_record

from crux_devtools.web.app import create_app

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]


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
