"""Shared helpers for the web tests: a real uvicorn on 127.0.0.1 in a thread, and Debian's Chromium.

Browser tests skip when ``/usr/bin/chromium`` is missing, unless ``CRUX_REQUIRE_BROWSER=1`` (CI),
where a missing browser is a failure.
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from waits import WAIT

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LiveServer:
    """uvicorn serving ``app`` in a background thread (its own event loop) until ``stop``."""

    def __init__(self, app: Any, host: str = "127.0.0.1") -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.loop: asyncio.AbstractEventLoop | None = None

        async def remember_loop(scope: dict[str, Any], receive: Any, send: Any) -> None:
            self.loop = asyncio.get_running_loop()
            await app(scope, receive, send)

        config = uvicorn.Config(remember_loop, host=host, port=self.port, log_level="warning", timeout_graceful_shutdown=1, lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def start(self) -> None:
        self.thread.start()
        deadline = time.monotonic() + WAIT
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(WAIT)

    def call(self, coro: Any, timeout: float = WAIT) -> Any:
        """Run a coroutine on the server's loop (where the session and its subscribers live)."""
        assert self.loop is not None, "the server has not run its lifespan yet"
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    async def acall(self, coro: Any, timeout: float = WAIT) -> Any:
        """``call`` from async test code without blocking the test's own loop."""
        assert self.loop is not None, "the server has not run its lifespan yet"
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self.loop))


@contextmanager
def live_server(app: Any) -> Iterator[LiveServer]:
    server = LiveServer(app)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@contextmanager
def project_server(root: Path, transport: Any = None) -> Iterator[LiveServer]:
    """The inspector of the project in ``root`` (a real ``ProjectSession``: worker, watcher) on a live
    server, for a browser to open; ``transport=in_process`` for a page whose subject is not the worker
    process (no process started)."""
    require_browser()
    from crux_devtools.inspector.session.service import ProjectSession
    from crux_devtools.web.app import create_app

    with live_server(create_app(ProjectSession(root, history=False, transport=transport))) as srv:
        yield srv


def require_browser() -> None:
    """Skip (or, under CI, fail) when Chromium is not installed."""
    if CHROMIUM.exists():
        return
    if os.environ.get("CRUX_REQUIRE_BROWSER") == "1":
        pytest.fail("CRUX_REQUIRE_BROWSER=1 but /usr/bin/chromium is missing: run bash .ci/setup as root")
    pytest.skip("Chromium is not installed at /usr/bin/chromium")


@asynccontextmanager
async def chromium() -> AsyncIterator[Any]:
    """One headless Debian Chromium (never a downloaded browser), closed on exit."""
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            await browser.close()


@asynccontextmanager
async def new_page(browser: Any, width: int = 1360, height: int = 1000) -> AsyncIterator[Any]:
    """A fresh browser context and page (no shared cookies or history between tests)."""
    context = await browser.new_context(viewport={"width": width, "height": height})
    context.set_default_timeout(WAIT * 1000)  # every wait and click: a failure bound, in ms
    context.set_default_navigation_timeout(WAIT * 1000)
    try:
        yield await context.new_page()
    finally:
        await context.close()
