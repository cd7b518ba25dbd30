"""The prompt page shows each example's expectations, held or not, in a real Chromium over a real session."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from web_conftest_helpers import LiveServer, new_page, project_server

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="session")]
REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    root = tmp_path_factory.mktemp("expect") / "sample"
    shutil.copytree(REPO / "sample_project", root, ignore=shutil.ignore_patterns("data", "__pycache__", ".crux"))
    with project_server(root) as srv:
        yield srv


async def test_the_page_lists_the_examples_expectations_and_a_lower_budget_breaks_one(server: LiveServer, browser: Any) -> None:
    async with new_page(browser) as page:
        await page.goto(server.url + "/prompts/budgeted-reply?example=with-brand-voice")
        await page.wait_for_selector("#expectations .expectation")
        rows = page.locator("#expectations .expectation")
        assert await rows.count() == 4
        assert await page.locator("#expectations .expectation[data-state='held']").count() == 4
        assert await page.locator("#expectation-count").inner_text() == "4 of 4 expectations hold"
        text = await page.locator("#expectations").inner_text()
        assert "expect().dropped('style-examples', reason='budget')" in text and "03_budgets.py:" in text
        # At a budget of 100 the page plans again: brand-voice leaves, and its claim says why.
        await page.locator("#budget-range").fill("100")
        await page.wait_for_selector("#report[data-budget='100']")
        failed = page.locator("#expectations .expectation[data-state='failed']")
        await failed.first.wait_for()
        assert "expect().includes('brand-voice')" in await failed.first.inner_text()
        assert "`brand-voice` left: budget 100, priority 30 < " in await failed.first.inner_text()
        if os.environ.get("CRUX_SCREENSHOTS"):
            await page.locator("#expectations").screenshot(path=os.environ["CRUX_SCREENSHOTS"] + "/expectations.png")
