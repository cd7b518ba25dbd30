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
import os
import re
import signal
import sys
from pathlib import Path
from typing import Any

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


class WorkerProcess:
    """One worker interpreter and its JSON-lines pipes. Requests are answered one at a time."""

    def __init__(self, proc: asyncio.subprocess.Process, root: Path) -> None:
        self.proc = proc
        self.root = root
        self.pid = proc.pid
        self.lock = asyncio.Lock()
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=200)
        self._drain = asyncio.ensure_future(self._drain_stderr())
        self._ready: asyncio.Future[None] = asyncio.ensure_future(self._wait_ready())
        self._next_id = 0

    @classmethod
    async def start(cls, root: Path) -> WorkerProcess:
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1"}
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "crux_devtools.inspector.worker",
            cwd=str(root),
            env=env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            limit=STREAM_LIMIT,
            start_new_session=True,
        )
        return cls(proc, root)

    @property
    def alive(self) -> bool:
        return self.proc.returncode is None

    async def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        while True:
            chunk = await self.proc.stderr.read(4096)
            if not chunk:
                return
            self.stderr_tail.append(chunk.decode("utf-8", errors="replace"))

    async def _wait_ready(self) -> None:
        line = await self._read_line()
        message = json.loads(line)
        if not message.get("ready"):
            raise self._failure("WorkerError", f"worker sent {line[:200]!r} instead of its ready line")

    async def _read_line(self) -> str:
        assert self.proc.stdout is not None
        line = await self.proc.stdout.readline()
        if not line:
            code = await self.proc.wait()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._drain), 1.0)
            raise self._failure("WorkerExited", f"the worker process exited with code {code} (user code may have called os._exit or crashed the interpreter)")
        return line.decode("utf-8")

    def _failure(self, kind: str, message: str) -> WorkerError:
        tail = "".join(self.stderr_tail)[-STDERR_TAIL:]
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
            assert self.proc.stdin is not None
            try:
                self.proc.stdin.write((json.dumps(payload) + "\n").encode("utf-8"))
                await self.proc.stdin.drain()
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
        before = len("".join(self.stderr_tail))
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGUSR1)
        for _ in range(30):
            await asyncio.sleep(0.01)
            text = "".join(self.stderr_tail)[before:]
            if "File " in text and text.rstrip().endswith(">"):
                break
        return "".join(self.stderr_tail)[before:]

    def kill(self) -> None:
        """Hard-kill the worker and anything user code started in its process group."""
        if self.proc.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            self.proc.kill()

    async def close(self) -> None:
        self.kill()
        with contextlib.suppress(ProcessLookupError):
            await self.proc.wait()
        for task in (self._drain, self._ready):
            if not task.done():
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError, WorkerError, Exception):
                await task


class WorkerPool:
    """Hands out fresh workers, keeping one pre-warmed spare when ``prewarm`` is set."""

    def __init__(self, root: Path, *, prewarm: bool = True) -> None:
        self.root = root
        self.prewarm = prewarm
        self._spare: WorkerProcess | None = None
        self._closed = False

    async def take(self) -> WorkerProcess:
        """A fresh worker: the spare if there is one, else one started now.

        The caller calls ``warm()`` once its job is done: starting the next spare while a job runs
        would compete with it for the CPU (an interpreter warming up costs about a second).
        """
        worker = self._spare
        self._spare = None
        if worker is None or not worker.alive:
            if worker is not None:
                await worker.close()
            worker = await WorkerProcess.start(self.root)
        return worker

    async def warm(self) -> WorkerProcess | None:
        """Start the spare now, if pre-warming is on and there is none; returns a new spare."""
        if self.prewarm and self._spare is None and not self._closed:
            self._spare = await WorkerProcess.start(self.root)
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
