"""The pool that hands out workers: a spare one pre-warmed, forked from the fork server when it can.

It chooses between the two ways of starting a worker (``forkserver.ForkServer.fork``, milliseconds;
``process.SpawnedWorker.start``, a fresh interpreter), so it imports both; neither imports it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from .forkserver import ForkServer
from .process import SpawnedWorker, WorkerError, WorkerProcess

log = logging.getLogger(__name__)
# A way to start a worker other than a process: ``inprocess.in_process`` (the same ``call``, no process).
StartWorker = Callable[[Path], Awaitable[Any]]


class WorkerPool:
    """Hands out fresh workers, keeping one spare ready when ``prewarm`` is set.

    With ``fork`` (the default) workers are forked from a pre-warmed fork server (milliseconds);
    without it, or if the fork server cannot start, each is a fresh interpreter (about a second of
    CPU for imports and warm-up).
    """

    def __init__(self, root: Path, *, prewarm: bool = True, fork: bool = True, start: StartWorker | None = None) -> None:
        self.root = root
        self.prewarm = prewarm
        self.fork = fork
        self.start = start  # how a worker is started instead of a process (``inprocess.in_process``: tests)
        self._spare: WorkerProcess | None = None
        self._server: Any = None
        self._closed = False
        self._warming: asyncio.Future[WorkerProcess | None] | None = None

    async def _start(self) -> WorkerProcess:
        if self.start is not None:
            return await self.start(self.root)
        if self.fork:
            if self._server is None or not self._server.alive:
                if self._server is not None:
                    await self._server.close()
                self._server = ForkServer(self.root)
                try:
                    await self._server.start()
                except (OSError, WorkerError) as exc:
                    log.warning("the fork server did not start (%s); starting fresh interpreters instead", exc)
                    await self._server.close()
                    self._server = None
                    self.fork = False
            if self._server is not None:
                try:
                    return await self._server.fork()
                except (OSError, WorkerError) as exc:
                    log.warning("forking a worker failed (%s); starting a fresh interpreter", exc)
        return await SpawnedWorker.start(self.root)

    async def take(self) -> WorkerProcess:
        """A fresh worker: the spare if there is one, else one started now.

        The caller calls ``warm()`` once its job is done: starting the next spare while a job runs
        would compete with it for the CPU.
        """
        if self._warming is not None and not self._warming.done():  # a spare on its way: wait for it
            with contextlib.suppress(OSError, WorkerError):
                await asyncio.shield(self._warming)
        worker = self._spare
        self._spare = None
        if worker is None or not worker.alive:
            if worker is not None:
                await worker.close()
            worker = await self._start()
        return worker

    async def warm(self) -> WorkerProcess | None:
        """Start the spare now, if pre-warming is on and there is none; returns a new spare.

        A call while another is starting the spare waits for it (and returns ``None``): one pool
        never starts two fork servers or two spares at once.
        """
        if self._warming is not None and not self._warming.done():
            await asyncio.shield(self._warming)
            return None
        if self.start_warming():
            assert self._warming is not None
            return await asyncio.shield(self._warming)
        return None

    def start_warming(self) -> bool:
        """Start warming the spare (``warm``) without waiting for it; False when there is nothing to start."""
        if not self.prewarm or self._spare is not None or self._closed or (self._warming is not None and not self._warming.done()):
            return False
        warming: asyncio.Future[WorkerProcess | None] = asyncio.ensure_future(self._start())
        warming.add_done_callback(self._warmed)
        self._warming = warming
        return True

    async def spawned(self) -> None:
        """Wait until the process of the spare being warmed exists (its warm-up then runs on its own),
        or the warm-up ended."""
        while self._warming is not None and not self._warming.done():
            server = self._server
            if not self.fork or (server is not None and server.spawned):
                return
            await asyncio.sleep(0.001)

    def _warmed(self, warming: asyncio.Future[WorkerProcess | None]) -> None:
        if not warming.cancelled() and warming.exception() is None:
            self._spare = warming.result()

    async def ready(self) -> None:
        """Wait for the spare, if any, to finish warming up."""
        if self._spare is not None:
            with contextlib.suppress(WorkerError):
                await self._spare.wait_ready()

    async def close(self) -> None:
        self._closed = True
        if self._warming is not None and not self._warming.done():  # closing at start-up: do not wait for it
            self._warming.cancel()
            with contextlib.suppress(asyncio.CancelledError, OSError, WorkerError):
                await self._warming
        if self._spare is not None:
            await self._spare.close()
            self._spare = None
        if self._server is not None:
            await self._server.close()
            self._server = None
