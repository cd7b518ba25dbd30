"""The unit tier's guard: while a unit test (its fixtures included) runs, no process may start, no
socket may connect, bind or listen, from any thread, and no Textual app may run.

The guard replaces the few functions every way of starting a process or opening a connection goes
through (``subprocess``, ``os.fork``/``posix_spawn``/``system``, ``socket.socket``'s ``connect``,
``bind`` and ``listen``, Textual's ``App.run_test``/``run_async``/``run``), and puts them back
afterwards. ``socket.socketpair`` stays: an asyncio
event loop wakes itself through one, and it reaches nothing outside the process.
"""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

ADVICE = "tests under tests/unit/ start no process, open no socket and run no Textual app; move this test to tests/functional/"


class TierViolation(RuntimeError):
    """A unit test started a process or opened a socket."""


def _refuse(what: str) -> Callable[..., Any]:
    def refused(*_args: Any, **_kwargs: Any) -> Any:
        raise TierViolation(f"{what}: {ADVICE}")

    return refused


def _targets() -> list[tuple[Any, str, str]]:
    """(owner, attribute, what it does) for every function the guard replaces."""
    found = [
        (subprocess.Popen, "__init__", "a process was started (subprocess)"),
        (socket.socket, "connect", "a socket was connected"),
        (socket.socket, "connect_ex", "a socket was connected"),
        (socket.socket, "bind", "a socket was bound"),
        (socket.socket, "listen", "a socket was made to listen"),
    ]
    from textual.app import App  # a whole app under a pilot takes seconds: the functional tier's

    found += [(App, name, f"a Textual app was run (App.{name})") for name in ("run_test", "run_async", "run")]
    for name in ("fork", "forkpty", "posix_spawn", "posix_spawnp", "system", "execv", "execve", "execvp", "execvpe"):
        if hasattr(os, name):
            found.append((os, name, f"a process was started (os.{name})"))
    return found


@contextmanager
def no_processes_or_sockets() -> Iterator[None]:
    missing = object()
    targets = _targets()
    saved = [(owner, name, vars(owner).get(name, missing)) for owner, name, _ in targets]
    try:
        for owner, name, what in targets:
            setattr(owner, name, _refuse(what))
        yield
    finally:
        for owner, name, original in saved:
            if original is missing:  # inherited (socket.socket's methods come from _socket.socket)
                delattr(owner, name)
            else:
                setattr(owner, name, original)
