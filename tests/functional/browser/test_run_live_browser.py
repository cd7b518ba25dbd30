"""A run page in a real Chromium while the run is recorded: the streaming step's text grows piece
by piece before the step finishes (each piece released by the test, each awaited on the page), then
the page turns into the finished run, whose step shows its time to first token."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from streamed_run import PacedRun
from test_web_runs_browser import until
from web_conftest_helpers import new_page, project_server

from crux_devtools.core.record.live import figures_text

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="session")]
REPO = Path(__file__).resolve().parents[3]


async def test_the_run_page_shows_the_text_grow_before_the_step_finishes(browser: Any, tmp_path: Path) -> None:
    project = tmp_path / "sample"
    shutil.copytree(REPO / "sample_project", project, ignore=shutil.ignore_patterns("data", "__pycache__", ".crux"))
    with project_server(project) as server:
        paced = PacedRun(project)
        run_id = paced.start()
        async with new_page(browser) as page:
            await page.goto(f"{server.url}/runs/{run_id}")
            await page.wait_for_selector("#live-status[data-state='live']")
            assert "waiting for the first token" in await page.locator("#run-live-figures").inner_text()
            await page.evaluate("window.__still_here = true")  # gone if the page reloads
            for i in range(len(paced.pieces) - 1):
                paced.release(i)
                await until(page, "(t) => document.querySelector('#run-live-text').textContent === t", arg=paced.shown(i))
                assert await page.evaluate("window.__still_here") is True  # swapped in place, not reloaded
            figures = await page.locator("#run-live-figures").inner_text()
            assert "first token" in figures and "tok/s" in figures
            shots = Path(os.environ.get("CRUX_SCREENSHOT_DIR") or tmp_path)  # set it to look at them
            shots.mkdir(parents=True, exist_ok=True)
            await page.screenshot(path=str(shots / "run-live-streaming.png"), full_page=True)
            result = paced.finish()
            await page.wait_for_selector("#step-0 .step-stream")  # the finished run, reloaded once it was written
            assert (await page.locator("#run-text").inner_text()) == result.text
            ttft = result.steps[0].stream["first_token_ms"]
            assert (await page.locator("#step-0 .step-stream").inner_text()) == figures_text(ttft, result.steps[0].latency_ms, None)
            await page.screenshot(path=str(shots / "run-live-finished.png"))
