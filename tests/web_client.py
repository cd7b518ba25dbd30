"""Fixtures of the web tests: the inspector's ASGI app over the test module's ``session`` fixture,
reached through httpx without a socket (a test needing a real server uses ``web_conftest_helpers``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from crux_devtools.web.app import create_app


@pytest.fixture
async def client(session: Any) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(session)), base_url="http://127.0.0.1:4400") as c:
        yield c
