"""The Replay panel in a real Chromium: open a step's panel, add variants, send one with confirmation.

The project is a copy of ``sample_project/`` whose agent runs were recorded by a real process
(``record_demo.py``); the inspector is the real ``ProjectSession`` under uvicorn on 127.0.0.1.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from recorded_sample import record_sample
from web_conftest_helpers import LiveServer, new_page, project_server

from crux_devtools.core.record.runstore import RunStore, child_runs

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="session")]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record_sample(tmp_path_factory.mktemp("replay-browser"))


@pytest.fixture(scope="module")
def server(project: Path) -> Iterator[LiveServer]:
    with project_server(project) as srv:
        yield srv


async def test_variants_sit_side_by_side_and_a_send_asks_first(server: LiveServer, browser: Any, project: Path) -> None:
    run_id = str(RunStore.for_project(project).list()[-1]["id"])
    async with new_page(browser) as page:
        await page.goto(f"{server.url}/runs/{run_id}")
        await page.click("#replay-1 > summary")
        await page.click("#replay-form-1 .replay-add")
        await page.wait_for_selector("#replay-out-1 .variant[data-variant='1'] .identical", timeout=60_000)
        await page.fill("#replay-form-1 input[name=max]", "2000")
        await page.click("#replay-form-1 .replay-add")
        second = page.locator("#replay-out-1 .variant[data-variant='2']")
        await second.wait_for(timeout=60_000)
        assert "example-replies is sent as omitted (was full)" in await second.inner_text()
        assert await page.locator("#replay-out-1 .variant[data-variant='1'] .identical").count() == 1  # the first variant stayed
        dialogs: list[str] = []

        async def dismiss(dialog: Any) -> None:
            dialogs.append(dialog.message)
            await dialog.dismiss()

        page.once("dialog", dismiss)
        await second.locator(".replay-send button").click()
        await page.wait_for_function("() => true")
        assert dialogs and "Send this replayed request" in dialogs[0]
        assert child_runs(RunStore.for_project(project), run_id) == []  # refused: nothing was sent

        async def accept(dialog: Any) -> None:
            await dialog.accept()

        page.once("dialog", accept)
        await second.locator(".replay-send button").click()
        answer = second.locator(".sent-answer")
        await answer.wait_for(timeout=60_000)
        assert "tool calls:" in await answer.inner_text()
        children = child_runs(RunStore.for_project(project), run_id)
        assert len(children) == 1 and children[0]["fork_step"] == 1
        await page.screenshot(path=str(project.parent / "replay-panel.png"), full_page=False)
