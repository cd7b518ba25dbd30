"""In a real Chromium over a real session: the live dot never says all is well under a "Stale report"
banner, and the list shows each prompt's one status word and which files were imported."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from web_conftest_helpers import live_server, new_page, require_browser

from crux_devtools.inspector.session.service import ProjectSession
from crux_devtools.statuses import word
from crux_devtools.web.app import create_app

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="session")]
STATUSES = Path(__file__).parents[2] / "projects" / "statuses"
SHOTS = os.environ.get("CRUX_SCREENSHOTS")  # a folder: save screenshots there to look at


async def test_the_live_dot_says_the_report_is_stale_and_the_list_says_what_it_imported(tmp_path: Path, browser: Any) -> None:
    require_browser()
    root = tmp_path / "project"
    shutil.copytree(STATUSES, root, ignore=shutil.ignore_patterns("__pycache__", ".crux"))
    (root / "other.py").write_text("from crux_devtools import prompt\n\nother = prompt('other', system='Hi.', examples={'one': {}})\n")
    with live_server(create_app(ProjectSession(root, history=False))) as server:
        async with new_page(browser) as page:
            await page.goto(server.url + "/")
            await page.wait_for_selector("#live-status[data-state='live']")
            assert await page.get_attribute("#live-status", "data-report") == "current"
            note = await page.inner_text("#imported-note")
            assert note.startswith("imported: other.py, prompts.py (every .py file that imports crux_devtools")
            chips = await page.eval_on_selector_all(".prompt-row .chip", "els => els.map(e => e.textContent)")
            assert set(chips) == {word(k) for k in ("fits", "over-optimize-at", "over-limit", "over-budget", "unmatched", "invalid-input", "error", "not-checked")}
            if SHOTS:
                await page.screenshot(path=f"{SHOTS}/list.png", full_page=True)
                for prompt_id in ("unchecked", "modes"):
                    await page.goto(f"{server.url}/prompts/{prompt_id}")
                    await page.wait_for_selector("#report")
                    await page.screenshot(path=f"{SHOTS}/{prompt_id}.png", full_page=True)
                await page.goto(server.url + "/")
                await page.wait_for_selector("#live-status[data-state='live']")
            (root / "other.py").write_text("from crux_devtools import prompt\n\nraise RuntimeError('half-saved')\n")  # its prompt is stale
            await page.wait_for_selector(".banner-stale", timeout=60_000)
            await page.wait_for_selector("#live-status[data-report='stale']", timeout=60_000)
            assert "stale report" in await page.inner_text("#live-status")
            if SHOTS:
                await page.screenshot(path=f"{SHOTS}/stale.png")
