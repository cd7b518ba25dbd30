"""The server side of the worker: start, talk to, time out and kill worker processes.

Every project version is loaded in a fresh interpreter (user modules are never re-imported in a
used one). To keep edit-to-report fast, ``pool.WorkerPool`` keeps one spare worker pre-warmed: started
ahead of time, with the library, pydantic and tiktoken imported and the encoding loaded, waiting
for its first job. A timed-out or crashed worker is killed with its whole process group, and so is
the group of a worker that ended by itself (user code may have left children in it). Workers also
die with the server's process (``PR_SET_PDEATHSIG``, set in the worker), and the children user code
started in their groups with it too: ``reaper`` kills the groups when this process dies.

A request may be answered by progress events first (see ``wire.py``): the timeout applies to each
step between two of them, so a slow project is not a hung one.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
import re
import signal
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from . import reaper
from .early_start import worker_command, worker_env
from ..errors import LoadError
from ..report_types import LoadErrorDict
from .wire import check_answer, check_request

READY_TIMEOUT = 60.0
STREAM_LIMIT = 256 * 1024 * 1024
STDERR_TAIL = 8_000
STDERR_KEEP = 256 * 1024  # characters of a worker's stderr kept for error reports and stack dumps
CRASH_SIGNALS = {signal.SIGSEGV, signal.SIGBUS, signal.SIGABRT, signal.SIGFPE, signal.SIGILL}


class WorkerError(Exception):
    """A worker could not answer: it timed out, crashed or exited. ``error`` says how, as a report holds it."""

    def __init__(self, error: LoadError) -> None:
        super().__init__(f"{error.type}: {error.message}")
        self.error: LoadErrorDict = error.to_dict()


_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')


def exit_description(code: int | None) -> str:
    """How a worker ended, in words: its exit code, the signal that killed it, or that it is unknown."""
    if code is None:
        return (
            "the worker process stopped answering and its exit status could not be read "
            "(user code may have closed the worker's connection, called os._exit or crashed the interpreter)"
        )
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        if -code in CRASH_SIGNALS:
            return f"the worker process was killed by {name}: a crash in native code (a C extension, ctypes)"
        return f"the worker process was killed by {name} (out of memory, or killed from outside)"
    return f"the worker process exited with code {code} (user code may have called os._exit)"


def hang_location(root: Path, stack: str) -> tuple[str | None, int | None]:
    """The innermost project frame of a faulthandler dump (most recent call first)."""
    for found in _FRAME.finditer(stack):
        path = Path(found["file"])
        if path.is_relative_to(root) and "site-packages" not in path.parts and ".venv" not in path.parts:
            return str(path.relative_to(root)), int(found["line"])
    return None, None


class StderrTail:
    """The last ``STDERR_KEEP`` characters a worker wrote to stderr, with positions to read from."""

    def __init__(self) -> None:
        self.chunks: collections.deque[str] = collections.deque()
        self.kept = 0
        self.total = 0

    def append(self, text: str) -> None:
        self.chunks.append(text)
        self.kept += len(text)
        self.total += len(text)
        while self.kept - len(self.chunks[0]) >= STDERR_KEEP:
            self.kept -= len(self.chunks.popleft())

    def text(self) -> str:
        return "".join(self.chunks)

    def since(self, mark: int) -> str:
        """What was written after position ``mark`` (a past ``total``), as far as it is still kept."""
        text = self.text()
        start = mark - (self.total - len(text))
        return text[max(0, start):]


class WorkerProcess:
    """One worker and its JSON-lines connection. Requests are answered one at a time.

    Subclasses say how it was started: ``SpawnedWorker`` (a fresh interpreter, pipes) or
    ``ForkedWorker`` (forked from the pre-warmed fork server, a Unix socket).
    """

    def __init__(
        self,
        root: Path,
        pid: int,
        reader: asyncio.StreamReader,
        writer: Any,
        *,
        greeted: bool,
        exited: asyncio.Future[int] | None = None,
    ) -> None:
        self.root = root
        self.pid = pid
        self.reader = reader
        self.writer = writer
        self.lock = asyncio.Lock()
        self.exited: asyncio.Future[int] = exited if exited is not None else asyncio.get_running_loop().create_future()
        self._killed = False
        self._group_killed = False
        self._next_id = 0
        self.stderr = StderrTail()
        # The last ``os._exit`` user code called in this worker, as the worker reported it.
        self.exit_call: dict[str, Any] | None = None
        self.exited.add_done_callback(lambda _: self.kill_group())
        reaper.watch(pid)  # its group dies with this process, however this process ends
        if greeted:
            self._ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._ready.set_result(None)
        else:
            self._ready = asyncio.ensure_future(self._wait_ready())

    def stderr_text(self) -> str:
        """The last of what the worker wrote to stderr (user prints, crashes, stack dumps)."""
        return self.stderr.text()

    async def _drain_into_tail(self, stream: asyncio.StreamReader) -> None:
        """Read the worker's stderr until it closes, keeping the tail for error reports."""
        while True:
            chunk = await stream.read(65536)
            if not chunk:
                return
            self.stderr.append(chunk.decode("utf-8", errors="replace"))

    # -- what subclasses provide --------------------------------------------------------------
    async def _cleanup(self) -> None:
        """Release transport resources after the worker is dead."""

    async def _settle_output(self) -> None:
        """Wait (briefly) until the dead worker's stderr is read to its end."""

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
            raise await self._exit_failure()
        return line.decode("utf-8")

    async def _exit_failure(self) -> WorkerError:
        """The error for a worker that ended while answering: how, and where user code was."""
        code: int | None = None
        with contextlib.suppress(asyncio.TimeoutError):
            code = await asyncio.wait_for(asyncio.shield(self.exited), 1.0)
        called = self.exit_call
        if called is not None and (code is None or code >= 0):
            message = f"user code called os._exit({called.get('code')}): the worker process exited with code {called.get('code')}"
            return self._failure("WorkerExited", message, called.get("file"), called.get("line"))
        await self._settle_output()
        # A crash's stack dump (faulthandler), read by the time the exit is known. The stderr reader
        # may have read it before the progress event that preceded it: look at the whole tail.
        text = self.stderr.text()
        dump = text[text.rfind("Fatal Python error") :] if "Fatal Python error" in text else ""
        file, line = hang_location(self.root, dump) if dump else (None, None)
        return self._failure("WorkerExited", exit_description(code), file, line)

    def _failure(self, kind: str, message: str, file: str | None = None, line: int | None = None, traceback: str | None = None) -> WorkerError:
        """The error of a worker that could not answer; its traceback is the tail of its stderr unless given."""
        tail = self.stderr_text()[-STDERR_TAIL:] if not traceback else traceback
        return WorkerError(LoadError.plain(kind, message, file=file, line=line, traceback=tail))

    async def wait_ready(self) -> None:
        try:
            await asyncio.wait_for(asyncio.shield(self._ready), READY_TIMEOUT)
        except asyncio.TimeoutError:
            self.kill()
            raise self._failure("WorkerTimeout", f"the worker did not start within {READY_TIMEOUT:.0f} s") from None

    async def call(
        self,
        op: str,
        request: Mapping[str, Any],
        timeout: float,
        on_event: Callable[[dict[str, Any]], None] | None = None,
    ) -> dict[str, Any]:
        """Send one request of ``op`` (its fields, checked against the op's ``Request`` first: a
        malformed one raises ``wire.MalformedRequest`` and nothing is sent) and return its answer,
        checked against the op's ``Answer``; kill the worker when user code hangs.

        Progress events sent before the answer go to ``on_event``; each one starts a new step, and
        ``timeout`` (seconds) bounds each step. A worker that ends or hangs raises ``WorkerError``.
        """
        fields = dict(request)
        check_request(op, fields)
        return await self.send_unchecked({"op": op, **fields}, timeout, on_event)

    async def send_unchecked(
        self,
        message: dict[str, Any],
        timeout: float,
        on_event: Callable[[dict[str, Any]], None] | None = None,
    ) -> dict[str, Any]:
        """Write ``message`` (``{"op", ...}``) as it is and return its answer: ``call`` without the
        sender's check, for tests of what the worker does with a request it cannot take."""
        async with self.lock:
            await self.wait_ready()
            if not self.alive:
                raise self._failure("WorkerExited", "the worker process is no longer running")
            self._next_id += 1
            self.exit_call = None
            payload = {**message, "id": self._next_id}
            try:
                self.writer.write((json.dumps(payload) + "\n").encode("utf-8"))
                await self.writer.drain()
            except (BrokenPipeError, ConnectionResetError):
                raise self._failure("WorkerExited", "the worker process closed its input") from None
            while True:
                try:
                    raw = await asyncio.wait_for(self.reader.readline(), timeout)
                except asyncio.TimeoutError:
                    raise await self._timed_out(message, timeout) from None
                if not raw:  # outside the step's deadline: learning how it ended takes up to a second
                    raise await self._exit_failure()
                answer = self._parse(raw.decode("utf-8", errors="replace"))
                if answer.get("id") != payload["id"] and isinstance(answer.get("id"), int):
                    # an answer (or event) of an earlier request whose caller was cancelled after
                    # sending it: it is not this request's, however it arrives in the pipe
                    continue
                if "event" not in answer:
                    return check_answer(str(message.get("op")), answer)
                if answer.get("event") == "exit":
                    self.exit_call = answer
                if on_event is not None:
                    on_event(answer)

    def _parse(self, line: str) -> dict[str, Any]:
        try:
            answer = json.loads(line)
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            self.kill()
            raise self._failure("MalformedReport", f"the worker sent {line[:200]!r}, not a JSON object; was crux_devtools changed by user code?")
        return answer

    async def _timed_out(self, message: dict[str, Any], timeout: float) -> WorkerError:
        stack = await self._dump_stack()
        self.kill()
        what = message.get("op", "request")
        file, line = hang_location(self.root, stack)
        return self._failure(
            "TimeoutError",
            f"user code did not finish within {timeout:g} s ({what}); the worker was killed. "
            "Look for an infinite loop or a blocking call, or raise --timeout",
            file,
            line,
            traceback=stack,
        )

    async def _dump_stack(self) -> str:
        """Ask a hung worker where it is (faulthandler on SIGUSR1) before killing it."""
        before = self.stderr.total
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGUSR1)
        for _ in range(30):
            await asyncio.sleep(0.01)
            text = self.stderr.since(before)
            if "File " in text and text.rstrip().endswith(">"):
                break
        return self.stderr.since(before)

    def kill(self) -> None:
        """Hard-kill the worker and anything user code started in its process group."""
        if self._killed or self.exited.done():
            self.kill_group()
            return
        self._killed = True
        self.kill_group()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(self.pid, signal.SIGKILL)

    def kill_group(self) -> None:
        """Kill what is left in the worker's process group (children user code started), once.

        Also called as soon as the worker is seen to end by itself: its children may live on
        (e.g. one forked with detached output before ``os._exit``). The group id is the worker's
        pid, which the kernel does not hand out again while the group has members.
        """
        if self._group_killed:
            return
        self._group_killed = True
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        reaper.forget(self.pid)

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
    """A worker in a fresh interpreter (``python -m crux_devtools.inspector.worker.main``), over pipes."""

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
