"""The worker process: the only place user code runs. Started as ``python -m crux_devtools.inspector.worker``.

Protocol: JSON lines. The worker warms up (imports the library, pydantic and tiktoken, loads the
encoding), writes ``{"ready": true}``, then answers requests one at a time::

    -> {"id": 1, "op": "load", "root": "/abs/project", "modules": [ModuleRef.to_dict(), ...]}
    <- {"id": 1, "ok": true, "result": {"prompts": [...], "errors": [...]}, "duration_ms": 12.3}
    -> {"id": 2, "op": "evaluate", "prompt_id": "x", "example": "a", "input": null, "token_budget": 100}
    -> {"id": 3, "op": "run", "prompt_id": "x", "example": null, "input": {...}}
    -> {"id": 4, "op": "prepare", "prompt_id": "x", "example": "a", "input": null, "contributor": "log",
        "allow_models": false, "token_budget": null}      # prepare summaries into .crux/summaries.sqlite3

The protocol uses private copies of the original stdin/stdout; file descriptors 0 and 1 are then
pointed at /dev/null and stderr, so user ``print`` or ``input()`` can never corrupt it. A worker
loads one project version only: the session starts a fresh one for every change.
"""

from __future__ import annotations

import faulthandler
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import IO, Any


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


def warm_up() -> None:
    """Import what every project needs and load the token encoding, before any job arrives."""
    import pydantic  # noqa: F401

    import crux_devtools  # noqa: F401
    from crux_devtools.core.tokens import default_counter

    from . import evaluate, loader  # noqa: F401

    import importlib
    import pkgutil

    import crux_devtools.core

    # Every library module, including those the library imports lazily (memory assembly, ...).
    for module in pkgutil.walk_packages(crux_devtools.core.__path__, "crux_devtools.core."):
        try:
            importlib.import_module(module.name)
        except ImportError as exc:
            print(f"crux-devtools worker: could not import {module.name}: {exc!r}", file=sys.stderr)
    default_counter().count("warm up")
    loader.agent_class()
    _exercise()


def _exercise() -> None:
    """Run one tiny project through every step once, so lazy imports and first-call caches in
    pydantic and the planner are paid before the first job, not during it."""
    from pydantic import BaseModel

    from crux_devtools import context, prompt, tool, when

    from .evaluate import prompt_report
    from .loader import Target

    class WarmInput(BaseModel):
        flag: bool = True

    class WarmParams(BaseModel):
        query: str = ""

    warm_tool = tool("warm_tool", description="warm", parameters=WarmParams, execute=lambda p: p.query)
    inner = context("warm-inner", system=lambda i: "inner", input=WarmInput, tools=[warm_tool])
    warm = prompt("warm", system="warm", use=[when(lambda i: i.flag, inner)], examples={"a": {"flag": True}})
    prompt_report(Path.cwd(), Target("warm", "prompt", warm, "warm", "warm.py", 1))


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
    holds out of the garbage collector's reach, so the load's collections stay small.
    """
    import gc
    import importlib

    from crux_devtools.core.tokens import default_counter

    from .loader import precompile

    imported = 0
    for name in modules:
        try:
            importlib.import_module(name)
            imported += 1
        except Exception as exc:  # noqa: BLE001 - it fails again in the load, and is reported there
            print(f"crux-devtools worker: could not pre-import {name}: {exc!r}", file=sys.stderr)
    counter = default_counter()
    for text in texts:
        counter.count(text)
    for text, separator in separated or []:
        counter.count_with_separator(text, separator)
    compiled = precompile(files or [])
    # A full collection over the heap inherited from the fork server writes to every object's
    # header: the copy-on-write page faults happen here, while the person edits, not in the load.
    gc.unfreeze()
    gc.collect()
    gc.freeze()
    return {"modules": imported, "texts": len(texts), "separated": len(separated or []), "files": compiled}


COUNTED_LIMIT = 4_000_000  # characters of counted texts handed to the next worker


class UsedKeys(dict):  # type: ignore[type-arg]
    """A token counter's cache that remembers which texts were looked up or stored in it."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.used: dict[Any, None] = {}

    def get(self, key: Any, default: Any = None) -> Any:
        self.used[key] = None
        return super().get(key, default)

    def __setitem__(self, key: Any, value: Any) -> None:
        self.used[key] = None
        super().__setitem__(key, value)


def track_counting() -> tuple[UsedKeys, UsedKeys] | None:
    """Make the default counter record what it counts from now on (for the next spare's cache)."""
    from crux_devtools.core.tokens import default_counter

    counter = default_counter()
    if not isinstance(getattr(counter, "_cache", None), dict) or not isinstance(getattr(counter, "_sep_cache", None), dict):
        return None
    counter._cache, counter._sep_cache = UsedKeys(counter._cache), UsedKeys(counter._sep_cache)
    return counter._cache, counter._sep_cache


def counted_texts(tracked: tuple[UsedKeys, UsedKeys] | None) -> dict[str, list[Any]]:
    """The texts counted since ``track_counting()``, newest last, up to ``COUNTED_LIMIT`` characters."""
    out: dict[str, list[Any]] = {"texts": [], "separated": []}
    if tracked is None:
        return out
    budget = COUNTED_LIMIT
    for text in tracked[0].used:
        budget -= len(text)
        if budget < 0:
            return out
        out["texts"].append(text)
    for text, separator in tracked[1].used:
        budget -= len(text) + len(separator)
        if budget < 0:
            return out
        out["separated"].append([text, separator])
    return out


class Worker:
    """Holds the loaded project between requests."""

    def __init__(self) -> None:
        self.project: Any = None
        self.defaults: Any = None  # planning.PlanningDefaults of the loaded project

    def handle(self, request: dict[str, Any]) -> Any:
        from .evaluate import evaluate_example, prepare, project_report, run_target
        from .loader import load_project
        from .planning import PlanningDefaults

        op = request.get("op")
        if op == "ping":
            return {"pid": os.getpid()}
        if op == "prime":
            return prime(Path(request["root"]), request.get("modules", []), request.get("texts", []), request.get("separated"), request.get("files"))
        if op == "load":
            if self.project is not None:
                raise RuntimeError("this worker already holds a project; start a fresh worker for a new load")
            before = set(sys.modules)
            counted = track_counting()
            root = Path(request["root"])
            self.project = load_project(root, request["modules"])
            self.defaults = PlanningDefaults.load(root, request.get("models"))
            result = project_report(self.project, self.defaults)
            result["preload"] = library_modules(root, set(sys.modules) - before)
            result["counted"] = counted_texts(counted)
            return result
        if self.project is None:
            raise RuntimeError(f"op {op!r} needs a loaded project; send 'load' first")
        if op in ("evaluate", "run", "prepare"):
            target = self.project.find(request["prompt_id"])
            name, data = self._input(target, request.get("example"), request.get("input"))
            if op == "run":
                return run_target(self.project.root, target, data)
            if op == "prepare":
                return prepare(
                    self.project.root, target, data, self.defaults, contributor=request.get("contributor"),
                    allow_models=bool(request.get("allow_models")), token_budget=request.get("token_budget"),
                )
            return evaluate_example(
                self.project.root,
                target,
                name,
                data,
                token_budget=request.get("token_budget"),
                input_budget=request.get("input_budget"),
                defaults=self.defaults,
            )
        raise ValueError(f"unknown op {op!r}; expected load, evaluate, run, prepare or ping")

    def _input(self, target: Any, example: str | None, data: dict[str, Any] | None) -> tuple[str, dict[str, Any]]:
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
    worker = Worker()
    for line in proto_in:
        if not line.strip():
            continue
        request = json.loads(line)
        started = time.perf_counter()
        try:
            result = worker.handle(request)
            message = {"id": request.get("id"), "ok": True, "result": result}
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - report every failure to the session
            from .errors import load_error

            root = worker.project.root if worker.project is not None else Path(request.get("root", ".")).resolve()
            message = {"id": request.get("id"), "ok": False, "error": load_error(root, exc)}
        message["duration_ms"] = round((time.perf_counter() - started) * 1000, 3)
        respond(proto_out, message)


def forked_child(request: dict[str, Any], zygote_fds: tuple[int, int]) -> None:
    """In a child of the fork server: become a worker talking over the session's Unix socket.

    The child starts its own session (process group), so killing it kills what user code started.
    It opens two connections: one for its stdout and stderr (user prints, crashes, stack dumps),
    one for the JSON-lines protocol.
    """
    import socket

    os.setsid()
    for fd in zygote_fds:
        os.close(fd)
    output = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    output.connect(request["socket"])
    output.sendall((json.dumps({"stderr": request["token"]}) + "\n").encode("utf-8"))
    os.dup2(output.fileno(), 1)
    os.dup2(output.fileno(), 2)
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
    import gc
    import selectors

    # Children share the warm heap copy-on-write: keep the collector from walking (and so copying) it.
    gc.collect()
    gc.freeze()
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
            pid = os.fork()
            if pid == 0:
                code = 0
                try:
                    forked_child(request, (proto_in_fd, proto_out.fileno()))
                except BaseException:  # noqa: BLE001 - a child must never return into the zygote loop
                    import traceback

                    traceback.print_exc()
                    code = 1
                finally:
                    os._exit(code)
            respond(proto_out, {"forked": pid, "token": request["token"]})


def main() -> None:
    proto_in, proto_out = _private_streams()
    # A hung job is asked for its stack (SIGUSR1) before it is killed, to report file and line.
    faulthandler.register(signal.SIGUSR1, file=2, all_threads=False)
    warm_up()
    respond(proto_out, {"ready": True, "pid": os.getpid()})
    if "--zygote" in sys.argv[1:]:
        zygote(proto_in.fileno(), proto_out)
    else:
        serve(proto_in, proto_out)
    # The session is gone: leave now, even if user code started threads that never end.
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
