"""Fixtures of the browser tests: Debian's Chromium, one per test process (launching it costs about
a second of CPU), shared by every browser test, each opening its own context and page with
``web_conftest_helpers.new_page`` (no cookies, storage or history shared between tests). The
tests run in the one event loop of the test process (``loop_scope="session"``), where the browser lives."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio
from web_conftest_helpers import chromium, require_browser


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def browser() -> AsyncIterator[Any]:
    require_browser()
    async with chromium() as b:
        yield b
