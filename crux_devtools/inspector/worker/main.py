"""The worker process: the only place user code runs. Started as ``python -m crux_devtools.inspector.worker.main``.

Protocol: JSON lines. The worker warms up (imports the library, pydantic and tiktoken, loads the
encoding), writes ``{"ready": true}``, then answers requests one at a time::

    -> {"id": 1, "op": "load", "root": "/abs/project", "modules": [ModuleRef.to_dict(), ...]}
    <- {"id": 1, "ok": true, "result": {"prompts": [...], "errors": [...]}, "duration_ms": 12.3}
    -> {"id": 2, "op": "evaluate", "prompt_id": "x", "example": "a", "input": null, "token_budget": 100}
    -> {"id": 3, "op": "run", "prompt_id": "x", "example": null, "input": {...}}
    -> {"id": 4, "op": "prepare", "prompt_id": "x", "example": "a", "input": null, "contributor": "log",
        "allow_models": false, "token_budget": null}      # prepare summaries into .crux/summaries.sqlite3
    -> {"id": 8, "op": "replay_step", "prompt_id": "x", "run": "id", "step": 1, "overrides": {"max": 2000, ...},
        "source": "recorded"}            # or "current" (today's source), with "where": {context: [file, line]}
    -> {"id": 9, "op": "replay_continue", "prompt_id": "x", "run": "id", "step": 1, "overrides": {...}, "live_tools": false}
    -> {"id": 7, "op": "replay_send", "prompt_id": "x", "sent": {...}, "run": "id", "step": 1, "confirmed": false, ...}
    -> {"id": 5, "op": "update", "files": ["a.py"], "retry": [], "known": [ids], "protect": [], "progress": true}
    <- {"id": 5, "ok": true, "result": {"order", "refs", "reevaluated", "reimported", "watched", "imported", ...}}
                                                           # or {"full": why}: the session loads in full

Each op is one module of ``ops/`` (its request type, its answer type, its handler); ``Worker.handle``
dispatches through that table and checks each request against its op's type first.

With ``"progress": true`` a load also reports each step as it starts (importing a module,
evaluating a prompt, one example) and streams each prompt's report (see ``wire.py``), so when user
code hangs or kills the worker the session knows which module or prompt did it, and loads the rest
in a fresh worker (``skip_modules``, ``skip_targets``).

The protocol uses private copies of the original stdin/stdout; file descriptors 0 and 1 are then
pointed at /dev/null and stderr, so user ``print`` or ``input()`` can never corrupt it. Stack dumps
(faulthandler: a crash, or SIGUSR1 before a hung worker is killed) go to a private copy of stderr, so
user code closing fd 2 cannot hide them. A worker loads a project once (``load``); after a save the
session asks it to ``update`` what changed (see ``session.py``), or starts a fresh one. It dies with its parent (``PR_SET_PDEATHSIG``), and runs in its own
process group, which the session kills when the worker ends.
"""

from __future__ import annotations

import faulthandler
import gc
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal, NoReturn

if TYPE_CHECKING:
    from crux_devtools.core.tokens import CountedTexts

from .graph import changed_library, tracker

# The real ``os._exit``: user code gets a wrapper that first tells the session where it was called.
_os_exit = os._exit
# Where stack dumps go: a private copy of stderr, at a fixed number so a forked child can re-point it.
DUMP_FD = 99
PARENT_ENV = "CRUX_DEVTOOLS_PARENT"


def die_with_parent(parent: int | None) -> None:
    """Have the kernel kill this process when its parent dies (Linux), even if user code hangs.

    The parent may already be gone by the time the request is made: then leave now.
    """
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError) as exc:
            print(f"crux-devtools worker: cannot follow the parent's death ({exc!r})", file=sys.stderr)
    if parent is not None and os.getppid() != parent:
        _os_exit(1)


class Channel:
    """The protocol's output: answers, and progress events of the request being answered.

    Events may come from user threads (``os._exit``), hence the lock.
    """

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.request_id: Any = None
        self.root: Path | None = None
        self.pid = os.getpid()
        self.progress = False
        self._lock = threading.Lock()

    def send(self, message: dict[str, Any]) -> None:
        text = json.dumps(message, default=repr) + "\n"
        with self._lock:
            self.out.write(text)
            self.out.flush()

    def emit(self, event: str, **fields: Any) -> None:
        """A progress event of the current request (only when the session asked for them)."""
        if self.progress:
            self.send({"id": self.request_id, "event": event, **fields})


_channel: Channel | None = None


def _reporting_exit(status: int) -> NoReturn:
    """``os._exit`` as user code sees it: say where it was called, then exit."""
    channel = _channel
    if channel is not None and os.getpid() == channel.pid:
        try:
            file, line = _caller_location(channel.root)
            channel.send({"id": channel.request_id, "event": "exit", "code": int(status), "file": file, "line": line})
        except Exception:  # noqa: BLE001, S110 - exiting must not fail; the session then says "exited"
            pass
    _os_exit(status)


def _caller_location(root: Path | None) -> tuple[str | None, int | None]:
    import traceback

    from ..errors import in_project, relative

    stack = traceback.extract_stack(sys._getframe(2))
    if root is not None:
        for frame in reversed(stack):
            if in_project(root, frame.filename):
                return relative(root, frame.filename), frame.lineno
    return (stack[-1].filename, stack[-1].lineno) if stack else (None, None)


def _private_streams() -> tuple[IO[str], IO[str]]:
    proto_in = os.fdopen(os.dup(0), "r", encoding="utf-8")
    proto_out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - lives as long as the process
    sys.stdout = sys.stderr
    return proto_in, proto_out


def warm_up(*, complete: bool = True) -> None:
    """Import what every project needs and load the token encoding, before any job arrives; with
    ``complete``, also what ``finish_warm_up`` does (the fork server does that before its second fork)."""
    import pydantic  # noqa: F401

    import crux_devtools  # noqa: F401
    from crux_devtools.core.tokens import default_counter

    from . import evaluate, imports as worker_import  # noqa: F401

    default_counter().count("warm up")
    if complete:
        finish_warm_up()


def finish_warm_up() -> None:
    """Import the rest of the library and run a tiny project through, so the jobs after the first
    pay no lazy import or first-call cache."""
    import importlib
    import pkgutil

    import crux_devtools.core

    # Every library module, including those the library imports lazily (memory assembly, ...).
    for module in pkgutil.walk_packages(crux_devtools.core.__path__, "crux_devtools.core."):
        try:
            importlib.import_module(module.name)
        except ImportError as exc:
            print(f"crux-devtools worker: could not import {module.name}: {exc!r}", file=sys.stderr)
    _exercise()


def _exercise() -> None:
    """Run one tiny project through every step once, so lazy imports and first-call caches in
    pydantic and the planner are paid before the first job, not during it."""
    from pydantic import BaseModel

    from crux_devtools import context, prompt, tool, when

    from .evaluate import prompt_report
    from .imports import Target

    class WarmInput(BaseModel):
        flag: bool = True

    class WarmParams(BaseModel):
        query: str = ""

    warm_tool = tool("warm_tool", description="warm", parameters=WarmParams, execute=lambda p: p.query)
    inner = context("warm-inner", system=lambda i: "inner", input=WarmInput, tools=[warm_tool])
    warm = prompt("warm", system="warm", use=[when(lambda i: i.flag, inner)], examples={"a": {"flag": True}})
    # Not ``Path.cwd()``: the fork server's folder (the project's) may have been removed since it started.
    prompt_report(Path(os.sep), Target("warm", "prompt", warm, "warm", "warm.py", 1))


def library_modules(root: Path, names: set[str]) -> list[str]:
    """Modules a load imported from outside the project (libraries): safe to import ahead of time."""
    found = []
    for name in sorted(names):
        module = sys.modules.get(name)
        path = getattr(module, "__file__", None)
        if module is None or name.startswith("crux_project") or "." in name and name.split(".")[0] not in sys.modules:
            continue
        if path is None or not Path(path).resolve().is_relative_to(root):
            found.append(name)
    return found


def prime(root: Path, modules: list[str], texts: list[str], separated: list[list[str]] | None = None, files: list[str] | None = None) -> dict[str, int]:
    """Prepare a spare worker for the next load of ``root``.

    Imports the libraries the last load used, counts the texts it counted (token counts are cached
    by content: unchanged parts then cost nothing), and parses and compiles the project's files as
    they are now (a file still unchanged at load time is not compiled again). Then freezes what it
    holds out of the garbage collector's reach (``Worker.prime``), so the load's collections stay small.
    """
    import importlib

    from crux_devtools.core.tokens import default_counter

    from .imports import precompile

    imported = 0
    before = set(sys.modules)
    stamps: dict[str, tuple[int, int]] = {}
    for name in modules:
        _stamp_source(name, stamps)
        try:
            importlib.import_module(name)
            imported += 1
        except Exception as exc:  # noqa: BLE001 - it fails again in the load, and is reported there
            print(f"crux-devtools worker: could not pre-import {name}: {exc!r}", file=sys.stderr)
    # A library saved while it was being imported keeps the stamp from before: the load sees the change.
    _primed_files.update({path: stamps.get(path, stamp) for path, stamp in library_files(set(sys.modules) - before).items()})
    counter = default_counter()
    for text in texts:
        counter.count(text)
    for text, separator in separated or []:
        counter.count_with_separator(text, separator)
    compiled = precompile(files or [])
    return {"modules": imported, "texts": len(texts), "separated": len(separated or []), "files": compiled}


def _stamp_source(name: str, stamps: dict[str, tuple[int, int]]) -> None:
    """Record ``(mtime_ns, size)`` of a module's source file before it is imported (not its parents')."""
    import importlib.util

    parent = name.rpartition(".")[0]
    if name in sys.modules or (parent and parent not in sys.modules):
        return
    try:
        spec = importlib.util.find_spec(name)
        origin = getattr(spec, "origin", None)
        if isinstance(origin, str):
            info = os.stat(origin)
            stamps.setdefault(origin, (info.st_mtime_ns, info.st_size))
    except (Exception, SystemExit):  # noqa: BLE001, S110 - the import reports what is wrong
        pass


# Source files of the libraries a spare pre-imported, with their (mtime_ns, size) at that time.
_primed_files: dict[str, tuple[int, int]] = {}


def _stdlib_dirs() -> tuple[str, ...]:
    import sysconfig

    paths = sysconfig.get_paths()
    return tuple(os.path.realpath(paths[key]) + os.sep for key in ("stdlib", "platstdlib") if key in paths)


def library_files(names: set[str]) -> dict[str, tuple[int, int]]:
    """The source files of these modules that may change while the spare waits (not the stdlib)."""
    stdlib = _stdlib_dirs()
    found: dict[str, tuple[int, int]] = {}
    for name in names:
        path = getattr(sys.modules.get(name), "__file__", None)
        if not isinstance(path, str) or os.path.realpath(path).startswith(stdlib):
            continue
        try:
            info = os.stat(path)
        except OSError:
            continue
        found[path] = (info.st_mtime_ns, info.st_size)
    return found


class StaleWorker(RuntimeError):
    """A library this spare pre-imported has changed since: the session must use a fresh worker."""


def check_primed_files() -> None:
    """Raise ``StaleWorker`` if a library pre-imported by ``prime`` changed on disk since."""
    for path, (mtime, size) in _primed_files.items():
        try:
            info = os.stat(path)
        except OSError:
            raise StaleWorker(f"{path} was removed after this worker imported it") from None
        if (info.st_mtime_ns, info.st_size) != (mtime, size):
            raise StaleWorker(f"{path} changed after this worker imported it")


COUNTED_LIMIT = 4_000_000  # characters of counted texts handed to the next worker


def track_counting() -> CountedTexts | None:
    """Make the default counter record what it counts from now on (for the next spare's cache)."""
    from crux_devtools.core.tokens import default_counter

    return default_counter().record_counted()


def counted_texts(tracked: CountedTexts | None) -> dict[str, list[Any]]:
    """The texts counted since ``track_counting()``, first counted first, up to ``COUNTED_LIMIT``
    characters; the recording stops here."""
    out: dict[str, list[Any]] = {"texts": [], "separated": []}
    if tracked is None:
        return out
    tracked.stop()
    budget = COUNTED_LIMIT
    for text in tracked.texts:
        budget -= len(text)
        if budget < 0:
            return out
        out["texts"].append(text)
    for text, separator in tracked.separated:
        budget -= len(text) + len(separator)
        if budget < 0:
            return out
        out["separated"].append([text, separator])
    return out


RECORDING_OFF = (
    "recording is off inside the crux-devtools worker: inspect, check, serve and tui import and evaluate "
    "your project without writing runs to .crux/runs.sqlite3 or exporting spans (record_runs, record_call, "
    "emit_otel and CRUX_DEVTOOLS_RECORD record nothing there); a Run (the Run button, crux-devtools run) "
    "is recorded with origin \"inspector\""
)
class Worker:
    """Holds the loaded project between requests, and updates it in place after a save (``update``).

    Requests are dispatched through the op table (``ops/``: one module per op, its request and answer
    types and its handler); the handlers read the project and the helpers held here.
    """

    def __init__(self, channel: Channel) -> None:
        self.project: Any = None
        self.channel = channel
        self.recorder: Any = None  # the project's RunRecorder, for the inspector's own runs
        self.defaults: Any = None  # planning.PlanningDefaults of the loaded project
        self.refs: list[dict[str, Any]] = []  # the project's modules (ModuleRef dicts), in order
        self.modules: dict[str, Any] = {}  # ref name -> the module object as last imported
        self.held: dict[str, Any] = {}  # target id -> last good Target of a module that failed to re-import
        self.libraries: dict[str, tuple[int, int]] = {}  # library files user code imported, as they were
        # After the answer (the report is shown first): "collect" frees the modules an update replaced
        # (they sit in reference cycles, a module's functions holding its globals, that the oldest
        # generation rarely visits); "freeze" also moves what a load made out of the collector's way.
        # "refreeze" (after a prime) unfreezes first: a full collection over the heap inherited from the
        # fork server writes to every object's header, so the copy-on-write page faults happen while
        # the person edits, not in the load.
        self.collect: Literal["", "collect", "freeze", "refreeze"] = ""
        self.allow_network = False  # [tool.crux-devtools] allow_network (netguard.py), read at load
        self.network_errors: list[Any] = []  # its ConfigError, if the value is bad
        self.guarded = True  # the network guard (netguard.py); off in the in-process transport (tests)

    def handle(self, request: dict[str, Any]) -> Any:
        """Answer one request line (``{"id", "op", ...}``) through the op table (``ops/``), its fields
        checked against the op's ``Request`` first."""
        from ..transport.wire import check_request
        from .ops import OPS

        op = request.get("op")
        entry = OPS.get(op) if isinstance(op, str) else None
        if entry is None:
            raise ValueError(f"unknown op {op!r}; expected one of: {', '.join(OPS)}")
        fields = {k: v for k, v in request.items() if k not in ("id", "op")}
        check_request(entry.name, fields)
        if entry.needs_project and self.project is None:
            raise RuntimeError(f"op {op!r} needs a loaded project; send 'load' first")
        with self._network(entry, fields):
            return entry.handle(self, fields)

    def _network(self, op: Any, request: dict[str, Any]) -> Any:
        """No connection and no child process while user code is imported or evaluated (netguard.py:
        held for the whole life of the worker, on every thread), except in a request meant to call a
        model (an op whose ``lifted(request)`` says so: a Run, a replay sent, a model-backed prepare)
        or a project with ``allow_network = true``."""
        from contextlib import ExitStack, nullcontext

        from . import netguard

        if not self.guarded:
            return nullcontext()
        root = self.project.root if self.project is not None else request.get("root")
        if root is not None:
            netguard.install(Path(root))
        if op.name == "load" and root is not None:
            from ..session.discovery import read_allow_network

            self.allow_network, self.network_errors = read_allow_network(root)
            if self.allow_network:
                netguard.open_network()
        stack = ExitStack()
        if op.lifted(request):
            stack.enter_context(netguard.lifted())
        stack.enter_context(netguard.doing(op.doing))
        return stack

    def prime(self, request: dict[str, Any]) -> Any:
        """The ``prime`` op (``ops/prime.py``)."""
        primed = prime(Path(request["root"]), request.get("modules", []), request.get("texts", []), request.get("separated"), request.get("files"))
        self.collect = "refreeze"
        return primed

    def _progress(self, request: dict[str, Any]) -> Any:
        self.channel.progress = bool(request.get("progress"))
        return self.channel.emit if self.channel.progress else None

    def load(self, request: dict[str, Any]) -> Any:
        from .evaluate import project_report
        from .imports import collect_targets, import_modules
        from .planning import PlanningDefaults

        if self.project is not None:
            raise RuntimeError("this worker already holds a project; start a fresh worker for a new load")
        check_primed_files()
        before = set(sys.modules)
        counted = track_counting()
        root = Path(request["root"])
        # A forked worker starts in the fork server's folder: the project's, unless it was removed and
        # made again since (a fresh checkout): user code opening relative paths must find the new one.
        os.chdir(root)
        self.channel.root = root
        emit = self._progress(request)
        skip = set(request.get("skip_modules") or ())
        self.refs = list(request["modules"])
        tracker.install(root)
        tracker.active = True
        try:
            loaded, errors = import_modules(root, [ref for ref in self.refs if ref["name"] not in skip], progress=emit, tracker=tracker)
            self.modules = {ref["name"]: module for ref, module in loaded}
            self.project = collect_targets(root, loaded)
            self.project.import_errors = errors
            self.project.errors.extend(self.network_errors)
            modules = tracker.project_modules()
            self._context_edges(self.project.targets, modules)
            self.defaults = PlanningDefaults.load(root, request.get("models"))
            result = project_report(self.project, self.defaults, skip=set(request.get("skip_targets") or ()), progress=emit)
        finally:
            tracker.active = False
        result["order"] = [target.id for target in self.project.targets]
        result["preload"] = library_modules(root, set(sys.modules) - before)
        result["counted"] = counted_texts(counted)
        self.libraries = dict(_primed_files)
        self._track_libraries(set(sys.modules) - before)
        result.update(self._watch_info(modules))
        self.collect = "freeze"  # the loaded project is long-lived: later collections need not walk it
        return result

    def update(self, request: dict[str, Any]) -> Any:
        """Re-import the modules a save affects (``graph.Tracker.affected``) and re-evaluate their targets.

        ``files``: the changed files, relative to the root; ``retry``: modules to re-import anyway
        (those that failed last time); ``known``: target ids the session holds a current report of
        (the others are evaluated too); ``protect``: modules whose last good version (shown stale)
        this worker holds. Answers ``{"full": why}``, having changed nothing, when only a full load is
        right: a library user code imported changed on disk, or a protected module would be imported
        again (a crash or hang would lose its last good version).
        """
        from .evaluate import project_report
        from .imports import collect_targets, import_modules

        changed = changed_library(self.libraries)
        if changed is not None:
            return {"full": changed}
        root = self.project.root
        emit = self._progress(request)
        retry = set(request.get("retry") or ())
        files = [os.path.normpath(root / f) for f in request.get("files") or ()]
        # A module that failed to import is not in sys.modules: its own file names it.
        retry |= {ref["name"] for ref in self.refs if ref["name"] not in self.modules and ref["path"] and os.path.normpath(ref["path"]) in files}
        affected = tracker.affected(files, retry)
        redo = [
            ref for ref in self.refs
            if ref["name"] in affected or getattr(self.modules.get(ref["name"]), "__name__", None) in affected
        ]
        protected = sorted({ref["name"] for ref in redo} & set(request.get("protect") or ()))
        if protected:
            return {"full": f"{', '.join(protected)} would be imported again, and this worker holds its last good version"}
        # Forget the affected modules, so the next import runs their current source.
        for name in affected | {getattr(self.modules.get(ref["name"]), "__name__", ref["name"]) for ref in redo}:
            sys.modules.pop(name, None)
        tracker.forget(affected)
        before = set(sys.modules)
        tracker.active = True
        try:
            loaded, errors = import_modules(root, redo, progress=emit, tracker=tracker)
            redone = {ref["name"] for ref, _ in loaded}
            failed = {ref["name"] for ref in redo} - redone
            for target in self.project.targets:
                if target.ref in failed:
                    self.held[target.id] = target  # still answers evaluate/run for its stale report
            for ref, module in loaded:
                self.modules[ref["name"]] = module
            for name in failed:
                self.modules.pop(name, None)
            project = collect_targets(root, [(ref, self.modules[ref["name"]]) for ref in self.refs if ref["name"] in self.modules])
            project.import_errors = errors
            project.errors.extend(self.network_errors)
            for target in project.targets:
                self.held.pop(target.id, None)
            modules = tracker.project_modules()
            self._context_edges([t for t in project.targets if t.ref in redone], modules)
            known = set(request.get("known") or ())
            chosen = {t.id for t in project.targets if t.ref in redone or t.id not in known}
            self.project = project
            result = project_report(project, self.defaults, skip={t.id for t in project.targets if t.id not in chosen}, progress=emit)
        finally:
            tracker.active = False
        result["order"] = [target.id for target in project.targets]
        result["refs"] = {target.id: target.ref for target in project.targets}
        result["reevaluated"] = [target.id for target in project.targets if target.id in chosen]
        result["reimported"] = [ref["name"] for ref in redo]
        self._track_libraries(set(sys.modules) - before)
        result.update(self._watch_info(modules))
        self.collect = "collect"
        return result

    def _track_libraries(self, names: set[str]) -> None:
        """Remember the files of libraries (outside the project) these newly imported modules came from."""
        for path, stamp in library_files(names).items():
            if not tracker.in_project(os.path.realpath(path)):
                self.libraries.setdefault(path, stamp)

    def _context_edges(self, targets: list[Any], modules: dict[str, str]) -> None:
        """A target's module depends on the modules defining the contexts it uses (registries, re-exports)."""
        names = {file: name for name, file in modules.items()}
        root = self.project.root
        for target in targets:
            try:
                reaches = target.prompt.contexts()
            except Exception:  # noqa: BLE001, S112 - the report says what is wrong with the prompt
                continue
            found = set()
            for reach in reaches:
                where = self.project.context_lines.get(id(reach.context))
                if where is not None and where[0]:
                    name = names.get(os.path.realpath(root / where[0]))
                    if name is not None:
                        found.add(name)
            tracker.depends(target.module, found)

    def _watch_info(self, modules: dict[str, str]) -> dict[str, Any]:
        root = os.path.join(os.path.realpath(self.project.root), "")
        files = sorted({os.path.relpath(f, root) for f in modules.values()})
        return {"watched": tracker.watched(), "imported": files, "written": tracker.written_files()}

    def find(self, target_id: str) -> Any:
        try:
            return self.project.find(target_id)
        except KeyError:
            if target_id in self.held:
                return self.held[target_id]
            raise

    def redacted_child(self, answer: Any) -> Any:
        """A child run (it has an ``id``) through the project's redact hook before it leaves the
        worker to be stored and shown; a hook that fails keeps only what ``withheld`` keeps."""
        if not isinstance(answer, dict) or "id" not in answer:
            return answer
        from crux_devtools.core.record.recording import withheld

        from ..features.diff.redact import project_redact

        hook = project_redact(self.project.root)
        if hook is None:
            return answer
        try:
            done = hook(answer)
            if not isinstance(done, dict):
                raise TypeError(f"redact returned {type(done).__name__}; it must return the run dict")
        except Exception as exc:  # noqa: BLE001 - user code: the run is withheld, the reason shown
            out = withheld(answer)
            out["error"]["message"] += f" ({type(exc).__name__}: {exc})"
            return out
        return done

    def run_target(self, target_id: str) -> Any:
        """The recorded run's target, or a ``LookupError`` that says it is gone from the source."""
        try:
            return self.find(target_id)
        except KeyError:
            known = ", ".join(t.id for t in self.project.targets) or "none"
            raise LookupError(f"the run's target {target_id!r} no longer exists in the source; nothing was sent (known targets: {known})") from None

    def input_of(self, target: Any, example: str | None, data: dict[str, Any] | None) -> tuple[str, dict[str, Any]]:
        from .evaluate import example_inputs

        if data is not None:
            return "custom", data
        examples = example_inputs(target)
        if example is None:
            if not examples:
                return "custom", {}
            return examples[0]
        for name, value in examples:
            if name == example:
                return name, value
        known = ", ".join(n for n, _ in examples) or "none"
        raise KeyError(f"{target.kind} {target.id!r} has no example {example!r}; known examples: {known}")


def respond(out: IO[str], message: dict[str, Any]) -> None:
    out.write(json.dumps(message, default=repr) + "\n")
    out.flush()


def serve(proto_in: IO[str], proto_out: IO[str]) -> None:
    """Answer requests until the session closes the connection."""
    global _channel
    from . import netguard

    netguard.hold()  # from the first request to the exit, on every thread (netguard.py)
    from crux_devtools.core.record import recording

    recording.suspend(RECORDING_OFF)
    channel = _channel = Channel(proto_out)
    worker = Worker(channel)
    for line in proto_in:
        if not line.strip():
            continue
        request = json.loads(line)
        channel.request_id = request.get("id")
        channel.progress = False
        started = time.perf_counter()
        try:
            result = worker.handle(request)
            message = {"id": request.get("id"), "ok": True, "result": result}
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - report every failure to the session
            from ..errors import LoadError

            root = worker.project.root if worker.project is not None else Path(request.get("root", ".")).resolve()
            message = {"id": request.get("id"), "ok": False, "error": LoadError.from_exception(root, exc).to_dict()}
        message["duration_ms"] = round((time.perf_counter() - started) * 1000, 3)
        channel.send(message)
        if worker.collect:
            if worker.collect == "refreeze":
                gc.unfreeze()
            gc.collect()
            if worker.collect in ("freeze", "refreeze"):
                gc.freeze()
            worker.collect = ""


def forked_child(request: dict[str, Any], zygote_fds: tuple[int, int], zygote_pid: int) -> None:
    """In a child of the fork server: become a worker talking over the session's Unix socket.

    The child starts its own session (process group), so killing it kills what user code started.
    It opens two connections: one for its stdout and stderr (user prints, crashes, stack dumps),
    one for the JSON-lines protocol.
    """
    import socket

    os.setsid()
    die_with_parent(zygote_pid)
    for fd in zygote_fds:
        os.close(fd)
    output = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    output.connect(request["socket"])
    output.sendall((json.dumps({"stderr": request["token"]}) + "\n").encode("utf-8"))
    os.dup2(output.fileno(), 1)
    os.dup2(output.fileno(), 2)
    os.dup2(output.fileno(), DUMP_FD)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(request["socket"])
    proto_in = sock.makefile("r", encoding="utf-8")
    proto_out = sock.makefile("w", encoding="utf-8")
    respond(proto_out, {"hello": request["token"], "pid": os.getpid()})
    serve(proto_in, proto_out)


def zygote(proto_in_fd: int, proto_out: IO[str]) -> None:
    """The fork server: warm once, then fork a ready worker per request, and report child exits.

    Requests: ``{"op": "fork", "token", "socket"}`` -> ``{"forked": pid, "token"}``;
    unprompted: ``{"exited": pid, "code": int}``. It never imports user code itself.
    """
    import selectors

    # Children share the warm heap copy-on-write; it is frozen already (``main``), so the first fork
    # does not wait for a collection. The first child (the first load, that the person waits for) is
    # forked as soon as the modules every load needs are in; the rest of the warm-up is done before
    # the second fork, so it does not compete with the first load for the CPU.
    forks = 0
    selector = selectors.DefaultSelector()
    selector.register(proto_in_fd, selectors.EVENT_READ)
    buffer = b""
    while True:
        events = selector.select(timeout=0.05)
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            respond(proto_out, {"exited": pid, "code": os.waitstatus_to_exitcode(status)})
        if not events:
            continue
        chunk = os.read(proto_in_fd, 65536)
        if not chunk:
            return  # the session is gone
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            if not line.strip():
                continue
            request = json.loads(line)
            if forks == 1:
                finish_warm_up()
                gc.collect()
                gc.freeze()
            forks += 1
            zygote_pid = os.getpid()
            pid = os.fork()
            if pid == 0:
                code = 0
                try:
                    forked_child(request, (proto_in_fd, proto_out.fileno()), zygote_pid)
                except BaseException:  # noqa: BLE001 - a child must never return into the zygote loop
                    import traceback

                    traceback.print_exc()
                    code = 1
                finally:
                    _os_exit(code)
            respond(proto_out, {"forked": pid, "token": request["token"]})


def main() -> None:
    parent = os.environ.get(PARENT_ENV)
    die_with_parent(int(parent) if parent and parent.isdigit() else None)
    proto_in, proto_out = _private_streams()
    # A hung job is asked for its stack (SIGUSR1) before it is killed, to report file and line; a
    # crash (segfault, abort) dumps it too. Both go to a private copy of stderr.
    os.dup2(2, DUMP_FD)
    faulthandler.enable(file=DUMP_FD, all_threads=False)
    faulthandler.register(signal.SIGUSR1, file=DUMP_FD, all_threads=False)
    os._exit = _reporting_exit
    # What the warm-up imports lives as long as the process (and, in the fork server, is shared with
    # every child): the cyclic collector is off while it runs (its collections found almost nothing
    # to free), then all of it is left out of later collections (``gc.freeze``), so neither this
    # process nor a forked child walks it (or copies it, walking it, in a child).
    gc.disable()
    warm_up(complete="--zygote" not in sys.argv[1:])
    gc.freeze()
    gc.enable()
    respond(proto_out, {"ready": True, "pid": os.getpid()})
    if "--zygote" in sys.argv[1:]:
        zygote(proto_in.fileno(), proto_out)
    else:
        serve(proto_in, proto_out)
    # The session is gone: leave now, even if user code started threads that never end.
    sys.stderr.flush()
    _os_exit(0)


if __name__ == "__main__":
    main()
