"""The Replay panel's "plan from: today's source" in a real Chromium, after a context's text was edited.

The project is a copy of ``sample_project/`` whose agent runs were recorded by a real process
(``record_demo.py``); the inspector is the real ``ProjectSession`` (worker, watcher) under uvicorn.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from test_web_replay_browser import project, server  # noqa: F401 - the fixtures: a recorded copy of the sample project, its live inspector
from web_conftest_helpers import LiveServer, new_page

from crux_devtools.core.record.runstore import RunStore

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="session")]

OLD_RULE = "- Never ask for passwords or full card numbers.\\n"
NEW_RULE = "- Never ask for passwords, card numbers or one-time codes.\\n"


async def test_todays_source_shows_the_edited_text_in_its_column(server: LiveServer, browser: Any, project: Path) -> None:
    run_id = str(RunStore.for_project(project).list()[-1]["id"])
    async with new_page(browser) as page:
        await page.goto(f"{server.url}/runs/{run_id}")
        await page.click("#replay-1 > summary")
        assert await page.is_checked("#replay-form-1 input[name=source][value=recorded]")  # the recording, as the CLI's default
        shared = project / "shared.py"
        shared.write_text(shared.read_text().replace(OLD_RULE, NEW_RULE))
        await page.check("#replay-form-1 input[name=source][value=current]")
        column = page.locator("#replay-out-1 .variant[data-source='current']")
        deadline = time.monotonic() + 60  # a failure bound: the watcher reloads the edited module meanwhile
        text = ""
        while "one-time codes" not in text:
            assert time.monotonic() < deadline, f"the edited text never showed; last column:\n{text}"
            await page.click("#replay-form-1 .replay-add")
            await column.locator(".variant-tokens, .replay-error").first.wait_for(timeout=60_000)
            await column.locator("details.replayed-request > summary").click()
            text = await column.inner_text()
        assert "today's source" in await column.locator("h4").inner_text()
        assert "context house-rules changed" in text and "(shared.py:35)" in text
        assert await page.locator("#replay-out-1 .variant").count() == 2  # the recorded request beside the one variant
        await page.locator("#replay-1").screenshot(path=str(project.parent / "replay-source.png"))


async def test_a_step_recorded_before_plan_inputs_offers_todays_source(server: LiveServer, browser: Any, project: Path) -> None:
    store = RunStore.for_project(project)
    run = store.get(str(store.list()[-1]["id"]))
    assert run is not None
    store.write({**run, "id": "old-run"})  # as an older release wrote it: no plan inputs
    async with new_page(browser) as page:
        await page.goto(f"{server.url}/runs/old-run")
        await page.click("#replay-1 > summary")
        await page.click("#replay-form-1 .replay-add")
        error = page.locator("#replay-out-1 .replay-error")
        await error.wait_for()
        assert "recorded before plan inputs were kept" in await error.inner_text()
        await page.click("#replay-out-1 .replay-from-source")
        column = page.locator("#replay-out-1 .variant[data-source='current']")
        await column.locator(".variant-tokens").wait_for()
        assert await page.locator("#replay-out-1 .replay-error").count() == 0  # the column that could not be planned was replaced
        assert await page.is_checked("#replay-form-1 input[name=source][value=current]")  # the form follows, for the next variant
