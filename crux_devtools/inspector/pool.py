"""The pool that hands out workers: a spare one pre-warmed, forked from the fork server when it can.

It chooses between the two ways of starting a worker (``forkserver.ForkServer.fork``, milliseconds;
``process.SpawnedWorker.start``, a fresh interpreter), so it imports both; neither imports it.
"""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path
from typing import Any

from .forkserver import ForkServer
from .process import SpawnedWorker, WorkerError, WorkerProcess

log = logging.getLogger(__name__)


class WorkerPool:
    """Hands out fresh workers, keeping one spare ready when ``prewarm`` is set.

    With ``fork`` (the default) workers are forked from a pre-warmed fork server (milliseconds);
    without it, or if the fork server cannot start, each is a fresh interpreter (about a second of
    CPU for imports and warm-up).
    """

    def __init__(self, root: Path, *, prewarm: bool = True, fork: bool = True) -> None:
        self.root = root
        self.prewarm = prewarm
        self.fork = fork
        self._spare: WorkerProcess | None = None
        self._server: Any = None
        self._closed = False

    async def _start(self) -> WorkerProcess:
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
        worker = self._spare
        self._spare = None
        if worker is None or not worker.alive:
            if worker is not None:
                await worker.close()
            worker = await self._start()
        return worker

    async def warm(self) -> WorkerProcess | None:
        """Start the spare now, if pre-warming is on and there is none; returns a new spare."""
        if self.prewarm and self._spare is None and not self._closed:
            self._spare = await self._start()
            return self._spare
        return None

    async def ready(self) -> None:
        """Wait for the spare, if any, to finish warming up."""
        if self._spare is not None:
            with contextlib.suppress(WorkerError):
                await self._spare.wait_ready()

    async def close(self) -> None:
        self._closed = True
        if self._spare is not None:
            await self._spare.close()
            self._spare = None
        if self._server is not None:
            await self._server.close()
            self._server = None
