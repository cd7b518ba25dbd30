"""The web list's change marks follow a commit: with an edit on disk the badge says one prompt differs
from HEAD and its row is marked; committing that edit (the working tree does not change, nothing is
saved) moves HEAD, and the open page's badge and marks go. Real git, real project session (worker,
watcher), real uvicorn, real Chromium."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from waits import WAIT
from web_conftest_helpers import new_page, project_server

sys.path.insert(0, str(Path(__file__).parents[2]))
from diff_helpers import commit_all, make_project  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="session")]


async def until(page: Any, check: str, expected: Any) -> None:
    """Poll ``page.evaluate(check)`` until it equals ``expected`` (the page's CSP forbids wait_for_function)."""
    deadline = asyncio.get_running_loop().time() + WAIT
    value = None
    while asyncio.get_running_loop().time() < deadline:
        value = await page.evaluate(check)
        if value == expected:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{check} stayed {value!r}, expected {expected!r}")


BADGE = "document.getElementById('diff-badge') && document.getElementById('diff-badge').dataset.changed"
MARKED = "Array.from(document.querySelectorAll('tr.prompt-row .diff-mark')).map(a => a.closest('tr').dataset.id)"


async def test_a_commit_moves_the_lists_change_marks_without_a_save(tmp_path: Path, browser: Any) -> None:
    root = make_project(tmp_path)
    (root / "other.py").write_text((root / "other.py").read_text().replace("Sort the ticket.", "Sort the ticket by urgency."))
    with project_server(root) as server:
        async with new_page(browser) as page:
            await page.goto(server.url + "/")
            await page.wait_for_selector("#live-status[data-state='live']")
            await until(page, BADGE, "1")
            await until(page, MARKED, ["triage"])
            commit_all(root, "sort by urgency")  # HEAD moves; the working tree is what it was
            await until(page, BADGE, "0")
            await until(page, MARKED, [])
            assert "no changes against HEAD" in await page.inner_text("#diff-summary")
