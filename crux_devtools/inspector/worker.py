"""The worker process: the only place user code runs. Started as ``python -m crux_devtools.inspector.worker``.

Protocol: JSON lines. The worker warms up (imports the library, pydantic and tiktoken, loads the
encoding), writes ``{"ready": true}``, then answers requests one at a time::

    -> {"id": 1, "op": "load", "root": "/abs/project", "modules": [ModuleRef.to_dict(), ...]}
    <- {"id": 1, "ok": true, "result": {"prompts": [...], "errors": [...]}, "duration_ms": 12.3}
    -> {"id": 2, "op": "evaluate", "prompt_id": "x", "example": "a", "input": null, "token_budget": 100}
    -> {"id": 3, "op": "run", "prompt_id": "x", "example": null, "input": {...}}

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

    default_counter().count("warm up")
    evaluate.preview_function()
    loader.agent_class()


class Worker:
    """Holds the loaded project between requests."""

    def __init__(self) -> None:
        self.project: Any = None

    def handle(self, request: dict[str, Any]) -> Any:
        from .evaluate import evaluate_example, project_report, run_target
        from .loader import load_project

        op = request.get("op")
        if op == "ping":
            return {"pid": os.getpid()}
        if op == "load":
            if self.project is not None:
                raise RuntimeError("this worker already holds a project; start a fresh worker for a new load")
            self.project = load_project(Path(request["root"]), request["modules"])
            return project_report(self.project)
        if self.project is None:
            raise RuntimeError(f"op {op!r} needs a loaded project; send 'load' first")
        if op in ("evaluate", "run"):
            target = self.project.find(request["prompt_id"])
            name, data = self._input(target, request.get("example"), request.get("input"))
            if op == "run":
                return run_target(self.project.root, target, data)
            return evaluate_example(
                self.project.root,
                target,
                name,
                data,
                token_budget=request.get("token_budget"),
                input_budget=request.get("input_budget"),
            )
        raise ValueError(f"unknown op {op!r}; expected load, evaluate, run or ping")

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


def main() -> None:
    proto_in, proto_out = _private_streams()
    # A hung job is asked for its stack (SIGUSR1) before it is killed, to report file and line.
    faulthandler.register(signal.SIGUSR1, file=sys.__stderr__, all_threads=False)
    warm_up()
    respond(proto_out, {"ready": True, "pid": os.getpid()})
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


if __name__ == "__main__":
    main()
