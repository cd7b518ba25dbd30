"""The server side of the worker: start, talk to, time out and kill worker processes.

Every project version is loaded in a fresh interpreter (user modules are never re-imported in a
used one). To keep edit-to-report fast, ``WorkerPool`` keeps one spare worker pre-warmed: started
ahead of time, with the library, pydantic and tiktoken imported and the encoding loaded, waiting
for its first job. A timed-out or crashed worker is killed with its whole process group.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
import os
import re
import signal
import sys
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

READY_TIMEOUT = 60.0
STREAM_LIMIT = 256 * 1024 * 1024
STDERR_TAIL = 8_000


class WorkerError(Exception):
    """A worker could not answer: it timed out, crashed or exited. ``error`` is a ``LoadError`` dict."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(f"{error['type']}: {error['message']}")
        self.error = error


_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')


def hang_location(root: Path, stack: str) -> tuple[str | None, int | None]:
    """The innermost project frame of a faulthandler dump (most recent call first)."""
    for found in _FRAME.finditer(stack):
        path = Path(found["file"])
        if path.is_relative_to(root) and "site-packages" not in path.parts and ".venv" not in path.parts:
            return str(path.relative_to(root)), int(found["line"])
    return None, None


def worker_command(*extra: str) -> list[str]:
    # -P: do not put the project folder first on sys.path at start-up, so a project file named like a
    # library (json.py, pydantic.py) cannot shadow it while the worker warms up.
    return [sys.executable, "-P", "-m", "crux_devtools.inspector.worker", *extra]


def worker_env() -> dict[str, str]:
    # No .pyc files: a file saved twice within one second with the same size would load stale bytecode.
    return {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1"}


class WorkerProcess:
    """One worker and its JSON-lines connection. Requests are answered one at a time.

    Subclasses say how it was started: ``SpawnedWorker`` (a fresh interpreter, pipes) or
    ``ForkedWorker`` (forked from the pre-warmed fork server, a Unix socket).
    """

    def __init__(self, root: Path, pid: int, reader: asyncio.StreamReader, writer: Any, *, greeted: bool) -> None:
        self.root = root
        self.pid = pid
        self.reader = reader
        self.writer = writer
        self.lock = asyncio.Lock()
        self.exited: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._killed = False
        self._next_id = 0
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=200)
        if greeted:
            self._ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._ready.set_result(None)
        else:
            self._ready = asyncio.ensure_future(self._wait_ready())

    def stderr_text(self) -> str:
        """The last of what the worker wrote to stderr (user prints, crashes, stack dumps)."""
        return "".join(self.stderr_tail)

    async def _drain_into_tail(self, stream: asyncio.StreamReader) -> None:
        """Read the worker's stderr until it closes, keeping the tail for error reports."""
        while True:
            chunk = await stream.read(4096)
            if not chunk:
                return
            self.stderr_tail.append(chunk.decode("utf-8", errors="replace"))

    # -- what subclasses provide --------------------------------------------------------------
    async def _cleanup(self) -> None:
        """Release transport resources after the worker is dead."""

    # -- common --------------------------------------------------------------------------------
    @property
    def alive(self) -> bool:
        return not self._killed and not self.exited.done()

    async def _wait_ready(self) -> None:
        line = await self._read_line()
        message = json.loads(line)
        if not message.get("ready"):
            raise self._failure("WorkerError", f"worker sent {line[:200]!r} instead of its ready line")

    async def _read_line(self) -> str:
        line = await self.reader.readline()
        if not line:
            code: int | str = "unknown"
            with contextlib.suppress(asyncio.TimeoutError):
                code = await asyncio.wait_for(asyncio.shield(self.exited), 1.0)
            raise self._failure("WorkerExited", f"the worker process exited with code {code} (user code may have called os._exit or crashed the interpreter)")
        return line.decode("utf-8")

    def _failure(self, kind: str, message: str) -> WorkerError:
        tail = self.stderr_text()[-STDERR_TAIL:]
        return WorkerError({"file": None, "line": None, "type": kind, "message": message, "traceback": tail})

    async def wait_ready(self) -> None:
        try:
            await asyncio.wait_for(asyncio.shield(self._ready), READY_TIMEOUT)
        except asyncio.TimeoutError:
            self.kill()
            raise self._failure("WorkerTimeout", f"the worker did not start within {READY_TIMEOUT:.0f} s") from None

    async def request(self, message: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Send one request and wait up to ``timeout`` seconds for its answer; kill the worker on timeout."""
        async with self.lock:
            await self.wait_ready()
            if not self.alive:
                raise self._failure("WorkerExited", "the worker process is no longer running")
            self._next_id += 1
            payload = {**message, "id": self._next_id}
            try:
                self.writer.write((json.dumps(payload) + "\n").encode("utf-8"))
                await self.writer.drain()
            except (BrokenPipeError, ConnectionResetError):
                raise self._failure("WorkerExited", "the worker process closed its input") from None
            try:
                line = await asyncio.wait_for(self._read_line(), timeout)
            except asyncio.TimeoutError:
                stack = await self._dump_stack()
                self.kill()
                what = message.get("op", "request")
                failure = self._failure(
                    "TimeoutError",
                    f"user code did not finish within {timeout:g} s ({what}); the worker was killed. "
                    "Look for an infinite loop or a blocking call, or raise --timeout",
                )
                failure.error["file"], failure.error["line"] = hang_location(self.root, stack)
                failure.error["traceback"] = stack or failure.error["traceback"]
                raise failure from None
            return json.loads(line)

    async def _dump_stack(self) -> str:
        """Ask a hung worker where it is (faulthandler on SIGUSR1) before killing it."""
        before = len(self.stderr_text())
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGUSR1)
        for _ in range(30):
            await asyncio.sleep(0.01)
            text = self.stderr_text()[before:]
            if "File " in text and text.rstrip().endswith(">"):
                break
        return self.stderr_text()[before:]

    def kill(self) -> None:
        """Hard-kill the worker and anything user code started in its process group."""
        if self._killed or self.exited.done():
            return
        self._killed = True
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(self.pid, signal.SIGKILL)

    async def close(self) -> None:
        self.kill()
        with contextlib.suppress(Exception):
            self.writer.close()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(self.exited), 2.0)
        if not self._ready.done():
            self._ready.cancel()
        with contextlib.suppress(asyncio.CancelledError, WorkerError, Exception):
            await self._ready
        await self._cleanup()


class SpawnedWorker(WorkerProcess):
    """A worker in a fresh interpreter (``python -m crux_devtools.inspector.worker``), over pipes."""

    def __init__(self, proc: asyncio.subprocess.Process, root: Path) -> None:
        assert proc.stdout is not None and proc.stdin is not None
        super().__init__(root, proc.pid, proc.stdout, proc.stdin, greeted=False)
        self.proc = proc
        assert proc.stderr is not None
        self._drain = asyncio.ensure_future(self._drain_into_tail(proc.stderr))
        self._waiter = asyncio.ensure_future(self._wait_exit())

    @classmethod
    async def start(cls, root: Path, *extra: str) -> SpawnedWorker:
        proc = await asyncio.create_subprocess_exec(
            *worker_command(*extra),
            cwd=str(root),
            env=worker_env(),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            limit=STREAM_LIMIT,
            start_new_session=True,
        )
        return cls(proc, root)

    async def _wait_exit(self) -> None:
        code = await self.proc.wait()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._drain), 1.0)
        if not self.exited.done():
            self.exited.set_result(code)

    async def _cleanup(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            await self.proc.wait()
        for task in (self._drain, self._waiter):
            with contextlib.suppress(asyncio.CancelledError, asyncio.TimeoutError):
                await asyncio.wait_for(task, 1.0)


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
            from .forkserver import ForkServer

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
