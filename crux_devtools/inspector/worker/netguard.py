"""No network and no child process from the worker while the inspector imports and evaluates a project.

The inspector imports every module of the project (each ``.py`` file that imports ``crux_devtools``,
unless ``[tool.crux-devtools] modules`` narrows it) on every save, and evaluates every example. A
module that calls ``generate`` or a provider at module level would then call the real model, and
spend money, on each save. So the worker holds a guard for its whole life (``hold``, from its first
request to its exit): an audit hook (``sys.addaudithook``) refuses

- every socket connection (``socket.connect``, ``sendto`` and ``sendmsg``: TCP or UDP, loopback
  included, since a local model server costs too, and Unix sockets), from every thread of the
  process: the thread that imports a module, a thread pool it submitted to, a thread it started that
  connects later while the worker is idle, an exporter's background thread;
- every child process that runs another program (``subprocess``, ``os.system``, ``os.exec*``,
  ``os.posix_spawn``, ``os.spawn*``, ``multiprocessing``'s spawn and forkserver start methods): the
  guard cannot follow a new program, so it is not started. A plain ``os.fork`` keeps running this
  process's code under the same hook, and stays guarded.

It is lifted only

- for a Run (the ``run`` op: the inspector's Run button and ``crux-devtools run``), a replay sent to
  the model, and preparing summaries with ``allow_models`` (the page's "prepare with the model"
  button): then the thread answering the request, and the threads started during such a request, may
  connect; threads started while importing or evaluating still may not;
- in a project that sets ``allow_network = true`` in ``[tool.crux-devtools]``: nothing is refused.

The refusal is a ``NetworkRefused`` (a ``PermissionError``, so a client library wraps it as it wraps
any connection failure) whose message names the project file and line (or, for a library's own
thread, the library's frame and the thread) and how to allow it. Hooks cannot be removed; ``install``
adds one per process (a forked worker inherits it).
"""

from __future__ import annotations

import os
import sys
import sysconfig
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import in_project, relative

HOW_TO_ALLOW = (
    "guard the call with `if __name__ == \"__main__\":`, run it with the Run button or `crux-devtools run`, "
    "or set allow_network = true in [tool.crux-devtools] of pyproject.toml"
)
EVENTS = frozenset({"socket.connect", "socket.sendto", "socket.sendmsg"})
# Audit events of starting another program; ``multiprocessing``'s spawn goes through
# ``_posixsubprocess.fork_exec`` without one, so ``install`` wraps that function too.
CHILD_EVENTS = frozenset({"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.startfile"})
_STDLIB = tuple(os.path.realpath(p) + os.sep for p in {sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]})


class NetworkRefused(PermissionError):
    """A connection (or a child process) the worker refused while the inspector held the project."""


class _Guard:
    def __init__(self) -> None:
        self.root: Path | None = None
        self.held = False  # once on, on for the life of the process
        self.open = False  # allow_network = true: nothing is refused
        self.refused = 0  # connections and child processes refused so far in this process
        self.doing = "holding your project between requests"
        # While a Run (or another request meant to call a model) is answered: its thread, and the
        # threads alive when it began; a thread started since (or in an earlier such request) may connect.
        self.lifted: tuple[int, frozenset[int]] | None = None
        self.run_threads: set[int] = set()

    def allowed(self) -> bool:
        if not self.held or self.open:
            return True
        lifted = self.lifted
        if lifted is None:
            return False
        ident = threading.get_ident()
        return ident == lifted[0] or ident not in lifted[1] or ident in self.run_threads

    def check(self, event: str, args: tuple[Any, ...]) -> None:
        """Refuse this connection or child process unless the guard allows it on this thread now."""
        if self.allowed():
            return
        self.refused += 1
        where = self.where()
        thread = threading.current_thread()
        on = "" if thread is threading.main_thread() else f" (on the thread {thread.name!r})"
        if event in EVENTS:
            address = args[1] if len(args) > 1 else "?"
            what = f"a network connection to {_address(address)}"
            why = "so it never lets it call a model or the network"
        else:
            what = f"starting the child process {_program(event, args)}"
            why = "and another program would run outside its network guard"
        raise NetworkRefused(
            f"crux-devtools refused {what} made by {where}{on} while {self.doing}: the inspector re-runs "
            f"this code on every save, {why}; {HOW_TO_ALLOW}"
        )

    def where(self) -> str:
        """The innermost frame of a project file on the stack, else the innermost one outside the
        standard library (a client library's own thread), as ``file:line``."""
        frame = sys._getframe(2)
        fallback = None
        while frame is not None:
            filename = frame.f_code.co_filename
            if filename != __file__:
                if self.root is not None and in_project(self.root, filename):
                    return f"{relative(self.root, filename) or filename}:{frame.f_lineno}"
                if fallback is None and not os.path.realpath(filename).startswith(_STDLIB) and not filename.startswith("<"):
                    fallback = f"{filename}:{frame.f_lineno}"
            frame = frame.f_back  # type: ignore[assignment]
        return fallback or "code outside the project"


def _address(address: Any) -> str:
    if isinstance(address, tuple) and len(address) >= 2:
        return f"{address[0]}:{address[1]}"
    if isinstance(address, bytes):
        return address.decode("utf-8", "replace")
    return str(address)


def _program(event: str, args: tuple[Any, ...]) -> str:
    """The program a child-process event would run, as the person wrote it (shortened)."""
    if event == "subprocess.Popen" and len(args) > 1:
        argv = args[1]
        text = " ".join(os.fsdecode(a) for a in argv) if isinstance(argv, (list, tuple)) else os.fsdecode(argv)
    elif event == "os.exec" and len(args) > 1:
        text = " ".join(os.fsdecode(a) for a in args[1])
    elif args:
        text = os.fsdecode(args[0]) if isinstance(args[0], (str, bytes, os.PathLike)) else repr(args[0])
    else:
        text = "?"
    return repr(text if len(text) <= 120 else text[:117] + "...")


_guard = _Guard()
_installed = False


def _hook(event: str, args: tuple[Any, ...]) -> None:
    # Called for every audited event of the process (each open, import, compile...): the common
    # case returns at once.
    if event in EVENTS or event in CHILD_EVENTS:
        _guard.check(event, args)


def _wrap_fork_exec() -> None:
    """``_posixsubprocess.fork_exec`` runs a new program with no audit event of its own when
    ``multiprocessing`` spawns a worker: check it as ``subprocess.Popen`` is checked."""
    try:
        import _posixsubprocess
    except ImportError:
        return
    original = _posixsubprocess.fork_exec
    if getattr(original, "__crux_guarded__", False):
        return

    def fork_exec(*args: Any, **kwargs: Any) -> Any:
        if not _guard.allowed():
            program = args[1] if len(args) > 1 else args[0] if args else "?"
            _guard.check("os.spawn", (program[0] if isinstance(program, (list, tuple)) and program else program,))
        return original(*args, **kwargs)

    fork_exec.__crux_guarded__ = True  # type: ignore[attr-defined]
    _posixsubprocess.fork_exec = fork_exec


def install(root: Path | None = None) -> None:
    """Add the audit hook once per process; ``root`` is the project (its files are user code)."""
    global _installed
    if root is not None:
        _guard.root = Path(root).resolve()
    if not _installed:
        sys.addaudithook(_hook)
        _wrap_fork_exec()
        _installed = True


def hold() -> None:
    """Turn the guard on for every thread of this process, for the rest of its life (the worker)."""
    install()
    _guard.held = True


def open_network() -> None:
    """``allow_network = true``: the project may connect and start programs while it is evaluated."""
    _guard.open = True


@contextmanager
def doing(what: str) -> Iterator[None]:
    """Say ``what`` the worker is doing in a refusal's message, inside the block."""
    before, _guard.doing = _guard.doing, what
    try:
        yield
    finally:
        _guard.doing = before


@contextmanager
def holding(what: str) -> Iterator[None]:
    """The guard on for every thread of this process inside the block only, saying ``what`` in a
    refusal (the pytest plugin plans in the test's own process, which may use the network after)."""
    install()
    before, _guard.held = _guard.held, True
    try:
        with doing(what):
            yield
    finally:
        _guard.held = before


@contextmanager
def lifted() -> Iterator[None]:
    """Inside the block (a Run, a replay sent, a model-backed prepare): the calling thread, and the
    threads started meanwhile, may connect; threads that were running before still may not."""
    alive = frozenset(sys._current_frames())
    before, _guard.lifted = _guard.lifted, (threading.get_ident(), alive)
    try:
        yield
    finally:
        _guard.lifted = before
        now = set(sys._current_frames())
        _guard.run_threads = (_guard.run_threads & now) | (now - alive - {threading.get_ident()})


def refused() -> int:
    """How many connections and child processes this process refused."""
    return _guard.refused


__all__ = ["HOW_TO_ALLOW", "NetworkRefused", "doing", "hold", "holding", "install", "lifted", "open_network", "refused"]
