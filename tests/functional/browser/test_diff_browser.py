"""The Changes page (``/diff``) in Debian's Chromium, over a real uvicorn and a real ProjectSession that
watches a git project built here: opened from the header, updated live when a file is saved."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from diff_helpers import make_project
from web_conftest_helpers import live_server, new_page, require_browser

from crux_devtools.inspector.session.service import ProjectSession
from crux_devtools.web.app import create_app

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="session")]


async def until(page: Any, expression: str, timeout: float) -> None:
    """Poll ``expression`` in the page (through the debugging protocol: the page's CSP forbids eval)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not await page.evaluate(expression):
        assert asyncio.get_running_loop().time() < deadline, f"not true after {timeout} s: {expression}"
        await asyncio.sleep(0.05)


async def test_the_changes_page_opens_from_the_header_and_follows_a_save(tmp_path: Path, browser: Any) -> None:
    require_browser()
    root = make_project(tmp_path)
    with live_server(create_app(ProjectSession(root, history=False))) as server:
        async with new_page(browser) as page:
            await page.goto(server.url + "/")
            await page.click("#nav-diff")
            await until(page, "() => !!document.querySelector('#diff-headline')", timeout=60)
            assert (await page.inner_text("#diff-headline")) == "no prompt changes"
            shared = root / "shared.py"
            shared.write_text(shared.read_text().replace("- Be kind.", "- Be kind.\\n- Say <script>alert(1)</script> never."))
            await until(page, "() => document.querySelectorAll('tr.diff-row').length === 4", timeout=60)
            assert "4 of 4 examples changed" in await page.inner_text("#diff-headline")
            row = page.locator('tr.diff-row[data-prompt="reply"][data-example="refund"]')
            text = await row.inner_text()
            assert "context house-rules changed" in text and "(edited at shared.py:12)" in text and "broken by house-rules" in text
            # the text change's diff under its line, the added line shown as text (never run)
            added = row.locator("pre.diff-text .dl-add")
            assert await added.count() == 1 and await added.inner_text() == "+- Say <script>alert(1)</script> never."
            assert await row.locator("pre.diff-text .dl-same").first.inner_text() == " ## House rules"
            assert await page.evaluate("() => document.querySelectorAll('script:not([src])').length") == 0
            await page.screenshot(path=str(tmp_path / "diff.png"))
            # the list's header says how many prompts differ, and links here
            await page.goto(server.url + "/")
            await until(page, "() => document.querySelector('#diff-badge')?.dataset.changed === '3'", timeout=60)
            # each changed prompt's row carries a mark linking to its rows on the Changes page
            await until(page, "() => document.querySelectorAll('tr.prompt-row .diff-mark').length === 3", timeout=60)
            marked = await page.evaluate("() => [...document.querySelectorAll('tr.prompt-row .diff-mark')].map(a => a.closest('tr').dataset.id).sort()")
            unmarked = await page.evaluate("() => [...document.querySelectorAll('tr.prompt-row:not(:has(.diff-mark))')].map(tr => tr.dataset.id)")
            assert len(marked) == 3 and not set(marked) & set(unmarked)
            await page.screenshot(path=str(tmp_path / "list-marks.png"))
            await page.click('tr.prompt-row[data-id="reply"] .diff-mark')
            await until(page, "() => location.pathname === '/diff' && location.hash === '#diff-reply'", timeout=60)
            await until(page, "() => document.querySelector('tr.diff-row:target')?.dataset.prompt === 'reply'", timeout=60)
            await page.goto(server.url + "/")
            await page.click("#diff-badge")
            await until(page, "() => location.pathname === '/diff' && !!document.querySelector('tr.diff-row')", timeout=60)
            # live: the save that undoes the edit takes the marks off the open list
            await page.goto(server.url + "/")
            await until(page, "() => document.querySelectorAll('tr.prompt-row .diff-mark').length === 3", timeout=60)
            shared.write_text(shared.read_text().replace("\\n- Say <script>alert(1)</script> never.", ""))
            await until(page, "() => document.querySelector('#diff-badge')?.dataset.changed === '0'", timeout=60)
            await until(page, "() => document.querySelectorAll('.diff-mark').length === 0", timeout=60)


async def test_a_link_to_another_base_asks_first_and_the_button_compares(tmp_path: Path, browser: Any) -> None:
    from diff_helpers import commit_all, git

    require_browser()
    root = make_project(tmp_path)
    git(root, "branch", "older")
    (root / "other.py").write_text((root / "other.py").read_text().replace("Sort the ticket.", "Sort it."))
    commit_all(root, "second")
    app = create_app(ProjectSession(root, history=False))
    with live_server(app) as server:
        async with new_page(browser) as page:
            await page.goto(server.url + "/diff?base=older")  # as a link from anywhere would open it
            await until(page, "() => !!document.querySelector('#diff-confirm-button')", timeout=60)
            assert app.state.live_diff.base_evaluations == 0 and not await page.locator("tr.diff-row").count()
            await page.screenshot(path=str(tmp_path / "confirm.png"))
            await page.click("#diff-confirm-button")  # a POST from the page itself, with its Origin
            await until(page, "() => document.querySelector('tr.diff-row')?.dataset.prompt === 'triage'", timeout=60)
            assert "older" in await page.inner_text("#review") and app.state.live_diff.base_evaluations == 1
