"""The watch of the project folder, and the look for the folder while it is gone.

``start`` watches the folder (``watcher.watch``, debounced) and returns once the watch is in place,
so a save right after it is seen. A watch that ends with an error says so once (``failed``); when
the folder itself was removed (a temporary checkout cleaned up), the session is asked to load it
(``reload``: its load says the folder is gone, once), then ``look_for_folder`` stats it with a
growing pause (``MISSING_PAUSE``, doubled up to ``MISSING_PAUSE_MAX`` seconds: no CPU to speak of)
until it is back, watches the new folder and asks for a load again. Nothing is reloaded meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger(__name__)
MISSING_PAUSE = 0.05  # seconds before the first look for a removed project folder; doubled after each
MISSING_PAUSE_MAX = 2.0  # the longest pause between two looks


class FolderWatch:
    """One session's watch of ``root``: ``changed(files)`` after each debounced batch, ``reads_store``
    the filter for the files the watcher leaves out, ``reload()`` when the folder went or came back,
    ``failed(exc)`` when the watch stopped for another reason (reload by hand)."""

    def __init__(
        self,
        root: Path,
        debounce: float,
        changed: Callable[[list[str]], None],
        reads_store: Callable[[str], bool],
        reload: Callable[[], object],
        failed: Callable[[BaseException], None],
    ) -> None:
        self.root = root
        self.debounce = debounce
        self._changed, self._reads_store, self._reload, self._failed = changed, reads_store, reload, failed
        self._stop: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._missing: asyncio.Task[None] | None = None
        self.checks = 0  # looks at a missing folder so far (tests)

    @property
    def started(self) -> bool:
        return self._task is not None

    @property
    def missing(self) -> bool:
        """The folder is gone and looked for (said already)."""
        return self._missing is not None

    def preload(self) -> asyncio.Future[None]:
        """Import the file watcher in a thread (the first load runs meanwhile): ``start`` awaits it."""
        from .watcher import preload

        return asyncio.get_running_loop().run_in_executor(None, preload)

    async def start(self, preloading: asyncio.Future[None] | None = None) -> None:
        from .watcher import watch

        if preloading is not None:
            await preloading
        self._stop = asyncio.Event()
        self._task = asyncio.create_task(watch(self.root, self._changed, self._stop, debounce=self.debounce, watched=self._reads_store))
        self._task.add_done_callback(self._ended)
        # The task's first step creates the inotify watch synchronously: let it run before returning,
        # so a save right after ``start()`` is seen.
        for _ in range(3):
            await asyncio.sleep(0)

    async def close(self) -> None:
        if self._stop is not None:
            self._stop.set()
        if self._missing is not None:
            self._missing.cancel()
        if self._task is not None:
            # A watch that ended with an error (the folder removed) was reported when it ended.
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    def _ended(self, task: asyncio.Task[None]) -> None:
        if task.cancelled() or task.exception() is None:
            return
        exc = task.exception()
        assert exc is not None
        if not self.root.is_dir():  # the folder was removed: a load says so once, and waits for it
            log.info("watching %s stopped: the folder is gone (%r)", self.root, exc)
            if self._missing is None:
                self._reload()
            return
        log.error("watching %s stopped: %r", self.root, exc)
        self._failed(exc)

    def look_for_folder(self) -> None:
        """The folder is gone: look for it until it is back, then watch it and ask for a load."""
        self._missing = asyncio.ensure_future(self._await_folder())

    async def _await_folder(self) -> None:
        pause = MISSING_PAUSE
        while True:
            await asyncio.sleep(pause)
            self.checks += 1
            if self.root.is_dir():
                break
            pause = min(pause * 2, MISSING_PAUSE_MAX)
        log.info("the project folder %s is back: loading it", self.root)
        if self._task is not None and self._stop is not None and not self._stop.is_set():
            self._stop.set()  # it watched the removed folder: watch the new one
            await asyncio.gather(self._task, return_exceptions=True)
            await self.start()
        self._missing = None
        self._reload()
