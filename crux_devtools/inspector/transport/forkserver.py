"""The pre-warmed fork server: one interpreter warmed once, forked into a fresh worker per change.

Starting an interpreter and importing the library, pydantic and tiktoken costs about a second of CPU
(several on a busy machine); forking the warm server costs a few milliseconds. Each child is still a
fresh worker: it has never imported user code (the server never does), and it loads one project
version only. Children connect back over a Unix socket in the abstract namespace (no file to clean
up): one connection for the protocol, one for their stdout and stderr. If the server cannot start,
the pool falls back to fresh interpreters.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import threading
from pathlib import Path
from typing import Any

from . import early_start
from ..errors import LoadError
from .process import STREAM_LIMIT, SpawnedWorker, WorkerError, WorkerProcess

CONNECT_TIMEOUT = 10.0


class ForkedWorker(WorkerProcess):
    """A worker forked from the fork server, talking over a Unix socket."""

    def __init__(
        self,
        root: Path,
        pid: int,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        output: tuple[asyncio.StreamReader, asyncio.StreamWriter],
        exited: asyncio.Future[int],
    ) -> None:
        super().__init__(root, pid, reader, writer, greeted=True, exited=exited)
        self.output, self._output_writer = output
        self._drain = asyncio.ensure_future(self._drain_into_tail(self.output))

    async def _cleanup(self) -> None:
        with contextlib.suppress(asyncio.CancelledError, asyncio.TimeoutError):
            await asyncio.wait_for(self._drain, 1.0)
        self._output_writer.close()

    async def _settle_output(self) -> None:
        # The fork server reports the exit as soon as it reaps the child; its output may still be in flight.
        with contextlib.suppress(asyncio.CancelledError, asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._drain), 0.5)


class EarlyZygote(WorkerProcess):
    """The fork server's interpreter when ``early_start`` started it before the event loop ran: a
    ``subprocess.Popen`` whose pipes are handed to the loop here. A thread waits for its exit."""

    def __init__(self, root: Path, process: Any, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, stderr: asyncio.StreamReader) -> None:
        loop = asyncio.get_running_loop()
        exited: asyncio.Future[int] = loop.create_future()
        super().__init__(root, process.pid, reader, writer, greeted=False, exited=exited)
        self.process = process
        self._drain = asyncio.ensure_future(self._drain_into_tail(stderr))

        def settle(code: int) -> None:
            if not exited.done():
                exited.set_result(code)

        def wait() -> None:
            code = process.wait()
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
                loop.call_soon_threadsafe(settle, code)

        threading.Thread(target=wait, name=f"crux-devtools fork server {process.pid}", daemon=True).start()

    @classmethod
    async def adopt(cls, root: Path, process: Any) -> EarlyZygote:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=STREAM_LIMIT)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), process.stdout)
        stderr = asyncio.StreamReader(limit=STREAM_LIMIT)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stderr), process.stderr)
        transport, protocol = await loop.connect_write_pipe(lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), process.stdin)
        return cls(root, process, reader, asyncio.StreamWriter(transport, protocol, None, loop), stderr)

    async def _cleanup(self) -> None:
        with contextlib.suppress(asyncio.CancelledError, asyncio.TimeoutError):
            await asyncio.wait_for(self._drain, 1.0)

    async def _settle_output(self) -> None:
        with contextlib.suppress(asyncio.CancelledError, asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._drain), 0.5)


class ForkServer:
    """Session side of the fork server: start it, ask for children, learn their exit codes."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._socket = f"\0crux-devtools-{os.getpid()}-{secrets.token_hex(8)}"
        self._server: asyncio.AbstractServer | None = None
        self._zygote: WorkerProcess | None = None
        self._reader: asyncio.Task[None] | None = None
        self._connections: dict[str, asyncio.Future[tuple[asyncio.StreamReader, asyncio.StreamWriter, int]]] = {}
        self._outputs: dict[str, asyncio.Future[tuple[asyncio.StreamReader, asyncio.StreamWriter]]] = {}
        self._exits: dict[int, asyncio.Future[int]] = {}
        self._token = 0
        self._asked: tuple[str, asyncio.Future[Any], asyncio.Future[Any]] | None = None

    @property
    def spawned(self) -> bool:
        """Its process is started (it may still be warming up)."""
        return self._zygote is not None

    @property
    def alive(self) -> bool:
        return self._zygote is not None and self._zygote.alive and self._reader is not None and not self._reader.done()

    async def start(self) -> None:
        self._server = await asyncio.start_unix_server(self._accept, path=self._socket, limit=STREAM_LIMIT)
        early = early_start.take(self.root)  # ``crux-devtools tui`` started it before its imports
        if early is None:
            self._zygote = await SpawnedWorker.start(self.root, "--zygote")
        else:
            try:
                self._zygote = await EarlyZygote.adopt(self.root, early)
            except BaseException:  # cancelled (the TUI quit at once) or the pipes failed: stop it
                early.kill()
                raise
        # The first child is asked for now: the server reads the request once warm and forks at once,
        # whatever this process's event loop is busy with then (the TUI's first frame).
        self._asked = self._ask_fork()
        await self._zygote.wait_ready()
        self._reader = asyncio.ensure_future(self._read_zygote())

    async def _read_zygote(self) -> None:
        assert self._zygote is not None
        while True:
            line = await self._zygote.reader.readline()
            if not line:
                return
            message = json.loads(line)
            if "exited" in message:
                future = self._exit_future(message["exited"])
                if not future.done():
                    future.set_result(message["code"])

    def _exit_future(self, pid: int) -> asyncio.Future[int]:
        if pid not in self._exits:
            self._exits[pid] = asyncio.get_running_loop().create_future()
        return self._exits[pid]

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            hello = json.loads(await asyncio.wait_for(reader.readline(), CONNECT_TIMEOUT))
        except (asyncio.TimeoutError, json.JSONDecodeError, UnicodeDecodeError):
            writer.close()
            return
        if "stderr" in hello:
            output = self._outputs.pop(str(hello["stderr"]), None)
            if output is None or output.done():
                writer.close()
                return
            output.set_result((reader, writer))  # the worker closes it when done
            return
        waiting = self._connections.pop(str(hello.get("hello")), None)
        if waiting is None or waiting.done():
            writer.close()
            return
        waiting.set_result((reader, writer, int(hello["pid"])))

    def _ask_fork(self) -> tuple[str, asyncio.Future[Any], asyncio.Future[Any]]:
        """Send the server a fork request; the child's two connections will resolve the futures."""
        assert self._zygote is not None
        self._token += 1
        token = str(self._token)
        loop = asyncio.get_running_loop()
        connection: asyncio.Future[Any] = loop.create_future()
        output: asyncio.Future[Any] = loop.create_future()
        self._connections[token] = connection
        self._outputs[token] = output
        request = {"op": "fork", "token": token, "socket": self._socket}
        self._zygote.writer.write((json.dumps(request) + "\n").encode("utf-8"))
        return token, connection, output

    async def fork(self) -> ForkedWorker:
        """A fresh, warm worker for one project version (the first one asked for by ``start``)."""
        if not self.alive or self._zygote is None:
            raise WorkerError(LoadError.plain("WorkerError", "the fork server is not running"))
        asked, self._asked = self._asked, None
        token, connection, output = asked if asked is not None else self._ask_fork()
        await self._zygote.writer.drain()
        try:
            reader, writer, pid = await asyncio.wait_for(connection, CONNECT_TIMEOUT)
            stream, stream_writer = await asyncio.wait_for(output, CONNECT_TIMEOUT)
        except asyncio.TimeoutError:
            self._connections.pop(token, None)
            self._outputs.pop(token, None)
            raise WorkerError(LoadError.plain("WorkerError", "a forked worker did not connect")) from None
        return ForkedWorker(self.root, pid, reader, writer, (stream, stream_writer), self._exit_future(pid))

    async def close(self) -> None:
        if self._zygote is not None:
            await self._zygote.close()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
