"""``crux-devtools`` commands run in this process: click's ``CliRunner`` calls the command, and every
worker its session starts is an in-process one (``inspector.transport.inprocess.in_process``).

A command run as a process costs an interpreter start, the CLI's imports and a worker process per
session (a ``diff`` starts two); in this process the imports are paid once per test process and the
workers answer as worker processes do (``tests/functional/inspector/test_transport_parity.py``).
``cli`` answers with what ``subprocess.run`` does (``returncode``, ``stdout``, ``stderr``), so a
test reads it as it reads a process's answer; an exception the command did not handle is exit 1
with its traceback on stderr, as Python prints it.

What only a process shows stays on processes: exit codes from a real shell, signals, the
environment a child inherits, stdout's encoding, timeouts and kills of hung user code (in this
process the timeout is not applied), the network guard.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import traceback
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from io import StringIO
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from crux_devtools.cli import main
from crux_devtools.inspector.transport import pool
from crux_devtools.inspector.transport.inprocess import InProcessWorker, in_process


class _WorkerThreadsApart:
    """A stream that sends what a worker's call writes (user code's prints) to a sink of its own, as
    a worker process's stdout and stderr go to a pipe the command does not print; the command's own
    writes, from any other thread, reach ``stream``."""

    def __init__(self, stream: Any, workers: set[int]) -> None:
        self.stream, self.workers, self.sink = stream, workers, StringIO()

    def write(self, text: str) -> int:
        return (self.sink if threading.get_ident() in self.workers else self.stream).write(text)

    def flush(self) -> None:
        self.stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


@contextmanager
def in_process_pools() -> Iterator[None]:
    """Every ``WorkerPool`` made meanwhile starts in-process workers (unless it was given another way):
    the sessions a command, a page or a diff's base evaluation makes."""
    init = pool.WorkerPool.__init__

    def in_process_init(self: pool.WorkerPool, root: Path, *, start: pool.StartWorker | None = None, **options: bool) -> None:
        init(self, root, start=start or in_process, **options)

    pool.WorkerPool.__init__ = in_process_init  # type: ignore[method-assign]
    try:
        yield
    finally:
        pool.WorkerPool.__init__ = init  # type: ignore[method-assign]


@contextmanager
def in_process_workers() -> Iterator[None]:
    """``in_process_pools``, and what user code prints in those workers kept out of this process's
    stdout and stderr."""
    answer = InProcessWorker._answer
    workers: set[int] = set()

    def apart(self: InProcessWorker, request: dict[str, Any], deliver: Any) -> dict[str, Any]:
        workers.add(threading.get_ident())
        try:
            return answer(self, request, deliver)
        finally:
            workers.discard(threading.get_ident())

    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _WorkerThreadsApart(out, workers), _WorkerThreadsApart(err, workers)  # type: ignore[assignment]
    InProcessWorker._answer = apart  # type: ignore[method-assign]
    try:
        with in_process_pools():
            yield
    finally:
        InProcessWorker._answer = answer  # type: ignore[method-assign]
        sys.stdout, sys.stderr = out, err


class _Command:
    """The command line as ``CliRunner`` calls it, its workers in this process (inside the runner's
    own capture of stdout and stderr)."""

    name = "crux-devtools"

    def main(self, *args: Any, **kwargs: Any) -> Any:
        with in_process_workers():
            return main.main(*args, **kwargs)


def invoke(*args: str, input: str | None = None, env: Mapping[str, str] | None = None, catch_exceptions: bool = True) -> Result:
    """``CliRunner().invoke`` of ``crux-devtools ARGS``, its workers in this process (``env``: added to
    the environment meanwhile)."""
    return CliRunner().invoke(_Command(), list(args), input=input, env=dict(env or {}), prog_name="crux-devtools",  # type: ignore[arg-type]
                              catch_exceptions=catch_exceptions)


def cli(*args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None, input: str | None = None) -> subprocess.CompletedProcess[str]:
    """``crux-devtools ARGS`` run in this process, in ``cwd``, with ``env`` added to the environment."""
    before = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        result = invoke(*args, input=input, env=env)
    finally:
        os.chdir(before)
    stderr, code = result.stderr, result.exit_code
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        assert result.exc_info is not None
        stderr += "".join(traceback.format_exception(*result.exc_info))
    return subprocess.CompletedProcess(["crux-devtools", *args], code, result.stdout, stderr)


async def cli_beside_loop(*args: str) -> subprocess.CompletedProcess[str]:
    """``cli`` from a test running in an event loop: the command runs in a thread, so the loop (an app
    or a server the command is compared with) keeps running meanwhile."""
    return await asyncio.to_thread(cli, *args)
