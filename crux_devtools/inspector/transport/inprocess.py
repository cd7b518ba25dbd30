"""The in-process transport: the worker's handlers run in this process, behind the same ``call``.

``InProcessWorker`` stands in for a worker process the way httpx's ``MockTransport`` stands in for the
network: ``call(op, request, timeout, on_event)`` checks the request against its op's shape, sends it
through a JSON round trip (nothing that is not JSON crosses, as on the pipe), lets the worker's own
``Worker.handle`` answer it (which checks it again, as on receipt), and checks the answer and every
progress event the way ``process.py`` does. A session over ``in_process`` workers (``ProjectSession(...,
transport=in_process)``, or ``WorkerPool(root, start=in_process)``) loads, updates and answers jobs
with no process started, which is what tests of reports, the web page and the TUI need.

What it does not have, by design: a process to kill. User code runs in this process (a hang hangs
the caller; the ``timeout`` is not applied), the network guard is off (``Worker.guarded``), recording
is not suspended, and ``os._exit`` in user code would end this process. Isolation, timeouts, kills,
crashes, orphans and the network guard are tested over real processes (``process.py``).

Each worker keeps what a worker process would have to itself, and finds what a fresh one finds:

- its project modules: the ones it imported are taken out of ``sys.modules`` between calls and put
  back for its next one, so two workers of one session (the held one, a verification's, the base
  revision a diff evaluates from a copy of ``HEAD`` whose modules have the same names) never see
  each other's modules;
- no one else's module under a project module's name: for the length of a call, every module this
  process imported that is named like a top-level module or package of the worker's project (a
  file of another copy of the project a test imported, a test helper) is taken out of
  ``sys.modules`` too, unless it comes from the interpreter's own library folders (a project file
  ``json.py`` still meets the real ``json``, as in a worker process, and is imported as
  ``crux_project.json``). A fresh process has none of them: without this, ``from shared import x``
  in the project would run another folder's ``shared.py``;
- its import graph (``graph.tracker``), its ``sys.path`` and what its spare pre-imported
  (``main._primed_files``: a load checks only the libraries this worker primed);
- its project's folder as the working folder, from its first call on (a worker process starts in
  it), and no bytecode written (``worker_env``: a same-size save within a second would otherwise
  be read from a stale ``.pyc``).

One call runs at a time, in a thread (handlers may start their own event loop).
``tests/functional/inspector/test_transport_parity.py`` runs one sequence of ops through both
transports and compares the answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..errors import LoadError
from .wire import check_answer, check_request

# One call at a time across every in-process worker: they share sys.modules, the tracker, the cwd.
_TURN = threading.Lock()
_next_pid = -1000  # stand-in pids: negative, so nothing can signal them


class _Events:
    """The worker's ``Channel`` in this process: events go through JSON to the caller's loop."""

    def __init__(self) -> None:
        self.request_id: Any = None
        self.root: Path | None = None
        self.pid = os.getpid()
        self.progress = False
        self.deliver: Callable[[dict[str, Any]], None] | None = None

    def send(self, message: dict[str, Any]) -> None:
        if self.deliver is not None:
            self.deliver(json.loads(json.dumps(message, default=repr)))

    def emit(self, event: str, **fields: Any) -> None:
        if self.progress:
            self.send({"id": self.request_id, "event": event, **fields})


class InProcessWorker:
    """A worker whose handlers run in this process (see the module docstring); the interface of
    ``process.WorkerProcess`` that the session and the pool use."""

    def __init__(self, root: Path) -> None:
        global _next_pid
        from ..worker.graph import Tracker
        from ..worker.main import Worker

        self.root = Path(root)
        _next_pid -= 1
        self.pid = _next_pid
        self.lock = asyncio.Lock()
        self._channel = _Events()
        self._worker = Worker(self._channel)  # type: ignore[arg-type]
        self._worker.guarded = False
        self._next_id = 0
        self._closed = False
        self._modules: dict[str, Any] = {}  # the project modules this worker imported, out of sys.modules between calls
        self._tracker = Tracker().__dict__.copy()  # this worker's import graph, swapped into graph.tracker per call
        self._path: list[str] | None = None  # its sys.path (the project root first), between calls
        self._primed: dict[str, tuple[int, int]] = {}  # the library files its ``prime`` imported (``main._primed_files``)
        self.calls: list[str] = []  # the ops answered, in order (tests)

    @classmethod
    async def start(cls, root: Path) -> InProcessWorker:
        return cls(root)

    @property
    def alive(self) -> bool:
        return not self._closed

    async def wait_ready(self) -> None:
        """Ready at once: there is no process to warm up."""

    def stderr_text(self) -> str:
        return ""

    async def call(
        self,
        op: str,
        request: Mapping[str, Any],
        timeout: float,
        on_event: Callable[[dict[str, Any]], None] | None = None,
    ) -> dict[str, Any]:
        """``WorkerProcess.call`` in this process: the same checks both ways, the same JSON round trip."""
        fields = dict(request)
        check_request(op, fields)
        async with self.lock:
            if self._closed:
                raise _exited("the worker is closed")
            self._next_id += 1
            line = json.loads(json.dumps({**fields, "id": self._next_id, "op": op}))
            loop = asyncio.get_running_loop()
            pending: list[asyncio.Future[None]] = []

            def deliver(message: dict[str, Any]) -> None:
                if on_event is not None:
                    done: asyncio.Future[None] = asyncio.run_coroutine_threadsafe(_call(on_event, message), loop)  # type: ignore[assignment]
                    pending.append(done)

            answer = await asyncio.to_thread(self._answer, line, deliver)
            for done in pending:
                await asyncio.wrap_future(done)  # type: ignore[arg-type]
            self.calls.append(op)
            return check_answer(op, json.loads(json.dumps(answer, default=repr)))

    def _answer(self, request: dict[str, Any], deliver: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
        """``main.serve``'s answer to one line, in this process's worker thread."""
        with _TURN, self._own_state():
            channel = self._channel
            channel.request_id, channel.progress, channel.deliver = request["id"], False, deliver
            started = time.perf_counter()
            try:
                message = {"id": request["id"], "ok": True, "result": self._worker.handle(request)}
            except (Exception, SystemExit) as exc:  # noqa: BLE001 - reported as the worker reports it
                project = self._worker.project
                root = project.root if project is not None else Path(request.get("root", ".")).resolve()
                message = {"id": request["id"], "ok": False, "error": LoadError.from_exception(root, exc).to_dict()}
            finally:
                channel.deliver = None
                self._worker.collect = ""
            message["duration_ms"] = round((time.perf_counter() - started) * 1000, 3)
            return message

    @contextlib.contextmanager
    def _own_state(self) -> Any:
        """This worker's project modules, import graph, folder and primed libraries in place for one
        call, and no module of another folder under a project module's name (see the module docstring)."""
        from ..worker import main as worker_main
        from ..worker.graph import tracker

        cwd, path, bytecode, primed = os.getcwd(), list(sys.path), sys.dont_write_bytecode, worker_main._primed_files
        sys.dont_write_bytecode = True  # as a worker process (``worker_env``): a same-size save within a second is never read from a stale .pyc
        with contextlib.suppress(OSError):
            os.chdir(self.root)  # a worker process runs in its project's folder (a removed one: where it was)
        if self._path is not None:
            sys.path[:] = self._path
        hidden = {name: sys.modules.pop(name) for name in _shadowing(self.root, sys.modules)}
        outside = set(sys.modules)
        sys.modules.update(self._modules)
        worker_main._primed_files = self._primed
        saved = tracker.__dict__.copy()
        installed = saved.get("_installed", False)
        tracker.__dict__.update(self._tracker)
        tracker._installed = installed
        try:
            yield
        finally:
            self._tracker = {k: v for k, v in tracker.__dict__.items() if k != "_installed"}
            tracker.__dict__.update({k: v for k, v in saved.items() if k != "_installed"})
            self._primed, worker_main._primed_files = worker_main._primed_files, primed
            mine = {name: module for name, module in sys.modules.items() if (name not in outside or name in self._modules) and self._is_project(name, module)}
            for name in mine:
                sys.modules.pop(name, None)
            self._modules = mine
            sys.modules.update(hidden)
            self._path = list(sys.path)
            sys.path[:] = path
            sys.dont_write_bytecode = bytecode
            os.chdir(cwd)

    def _is_project(self, name: str, module: Any) -> bool:
        """A module of this worker's project (its files, or its namespace packages), not a library."""
        if name.startswith("crux_project."):
            return True
        root = os.path.join(os.path.realpath(self.root), "")
        places = [getattr(module, "__file__", None), *(getattr(module, "__path__", None) or [])]
        return any(isinstance(p, str) and os.path.realpath(p).startswith(root) for p in places)

    def kill(self) -> None:
        self._closed = True

    def kill_group(self) -> None:
        self._closed = True

    async def close(self) -> None:
        self._closed = True
        self._modules = {}


def _shadowing(root: Path, modules: Mapping[str, Any]) -> list[str]:
    """The modules in ``modules`` a fresh worker process of ``root`` would not have under their name:
    those named like a top-level module or package of the project (or inside one), that do not come
    from the interpreter's library folders."""
    tops = _top_names(root)
    return [name for name, module in list(modules.items()) if name.partition(".")[0] in tops and not _from_library(module)]


def _top_names(root: Path) -> set[str]:
    """The names ``import NAME`` finds in the project folder: its ``.py`` files and its folders."""
    try:
        entries = list(os.scandir(root))
    except OSError:
        return set()
    names = {e.name[:-3] if e.name.endswith(".py") else e.name for e in entries if e.name.endswith(".py") or e.is_dir()}
    return {name for name in names if name.isidentifier()}


@functools.cache
def _library_folders() -> tuple[str, ...]:
    """The interpreter's own module folders (the standard library, site-packages) and this package's."""
    import sysconfig

    paths = sysconfig.get_paths()
    folders = {os.path.realpath(paths[key]) for key in ("stdlib", "platstdlib", "purelib", "platlib") if key in paths}
    folders.add(os.path.realpath(Path(__file__).parents[2]))  # crux_devtools, wherever it is installed from
    return tuple(os.path.join(folder, "") for folder in folders)


def _from_library(module: Any) -> bool:
    """A built-in module, or one whose file (or every folder of a package) is in ``_library_folders``."""
    places = [getattr(module, "__file__", None), *(getattr(module, "__path__", None) or [])]
    places = [p for p in places if isinstance(p, str)]
    if not places:
        return True  # built in, frozen, or made in memory: nothing a project file could be
    return all(os.path.realpath(p).startswith(_library_folders()) for p in places)


async def _call(callback: Callable[[dict[str, Any]], None], message: dict[str, Any]) -> None:
    callback(message)


def _exited(why: str) -> Exception:
    from .process import WorkerError

    return WorkerError(LoadError.plain("WorkerExited", why))


async def in_process(root: Path) -> InProcessWorker:
    """The pool's way of starting an in-process worker (``WorkerPool(root, start=in_process)``)."""
    return await InProcessWorker.start(root)


__all__ = ["InProcessWorker", "in_process"]
