"""Fixtures of the browser tests: Debian's Chromium, one per test module (a module's tests share it,
each test opening its own context and page with ``web_conftest_helpers.new_page``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio
from web_conftest_helpers import chromium, require_browser


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser() -> AsyncIterator[Any]:
    require_browser()
    async with chromium() as b:
        yield b
