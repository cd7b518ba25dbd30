"""The worker's op table (``inspector/worker/ops/``): one module per op, each with its request type,
answer type and handler; requests are checked against their shape on both sides, and the in-process
transport speaks the same ``call`` as a worker process."""

from __future__ import annotations

import types
import typing
from pathlib import Path
from typing import Any

import pytest

from crux_devtools import shapes
from crux_devtools.inspector.transport.inprocess import InProcessWorker
from crux_devtools.inspector.transport.wire import MalformedRequest, check_request
from crux_devtools.inspector.worker import ops as ops_package
from crux_devtools.inspector.worker.ops import OPS, op_of

PROJECTS = Path(__file__).resolve().parents[2] / "projects"
OPS_FOLDER = Path(ops_package.__file__).parent


def test_every_op_module_in_the_folder_is_in_the_table_with_its_request_and_answer_types() -> None:
    modules = sorted(p.stem for p in OPS_FOLDER.glob("*.py") if not p.stem.startswith("_"))
    assert modules == sorted(OPS), "an op module that is not in the table (or an op without a module)"
    for name, op in OPS.items():
        assert op.name == name
        assert isinstance(op.request, type) and issubclass(op.request, dict) and hasattr(op.request, "__required_keys__"), name
        assert op.answer is not Any, f"op {name!r} declares no answer type"
        assert callable(op.handle)
        request_in_shapes = any(value is op.request for value in vars(shapes).values())
        assert request_in_shapes or op.request.__module__ == f"crux_devtools.inspector.worker.ops.{name}", (
            f"op {name!r}: its Request lives in shapes.py or in its own module, so the check derives from one place"
        )


def test_an_op_module_without_its_types_is_refused_by_name() -> None:
    module = types.ModuleType("crux_devtools.inspector.worker.ops.frobnicate")
    module.handle = lambda worker, request: {}  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match="ops.frobnicate declares no Request, Answer"):
        op_of("frobnicate", module)
    module.Request = dict  # type: ignore[attr-defined]
    module.Answer = shapes.PingResult  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match="Request must be a TypedDict"):
        op_of("frobnicate", module)


@pytest.mark.parametrize(
    ("op", "request_", "message"),
    [
        ("reticulate", {}, "unknown op 'reticulate'; the worker answers: evaluate, "),
        ("evaluate", {"example": "a"}, "malformed request to 'evaluate': request has no 'prompt_id': expected str"),
        ("evaluate", {"prompt_id": "x", "token_budget": "12"}, "malformed request to 'evaluate': request.token_budget is str, expected int"),
        ("load", {"root": "/p", "modules": [{"name": "m"}], "skip_modules": [1]}, "request.skip_modules[0] is int, expected str"),
        ("replay_step", {"prompt_id": "x", "run": "r", "step": 1, "overrides": {}, "source": "today"}, "request.source is 'today', expected 'recorded' or 'current'"),
        ("update", {"files": [], "progres": True}, "request.progres is not a field of UpdateRequest (its fields: files, retry, known, protect, progress)"),
        ("ping", {"id": 3, "op": "ping"}, "carries no 'id' or 'op' field: the transport adds them"),
    ],
)
def test_a_malformed_request_names_the_op_and_the_field(op: str, request_: dict[str, Any], message: str) -> None:
    with pytest.raises(MalformedRequest) as refused:
        check_request(op, request_)
    assert message in str(refused.value)


def test_every_request_the_session_sends_has_its_shape() -> None:
    good: dict[str, dict[str, Any]] = {
        "ping": {}, "written": {},
        "prime": {"root": "/p", "modules": ["lib"], "files": ["a.py"], "texts": ["t"], "separated": [["t", "\n"]]},
        "load": {"root": "/p", "modules": [{"name": "m", "path": "/p/m.py"}], "progress": True, "models": None, "skip_modules": [], "skip_targets": []},
        "update": {"files": ["a.py"], "retry": [], "known": ["x"], "protect": [], "progress": True},
        "evaluate": {"prompt_id": "x", "example": None, "input": {"q": 1}, "token_budget": 12, "input_budget": None, "messages": None, "model": None},
        "run": {"prompt_id": "x", "example": "a", "input": None, "confirm": None},
        "prepare": {"prompt_id": "x", "example": "a", "input": None, "contributor": None, "allow_models": False, "token_budget": None},
        "replay_step": {"prompt_id": "x", "run": "r", "step": 1, "overrides": {"max": 10}, "source": "current", "where": {"c": ["a.py", 3]}},
        "replay_continue": {"prompt_id": "x", "run": "r", "step": 1, "overrides": {}, "live_tools": False, "confirmed": None},
        "replay_send": {"prompt_id": "x", "ask": True},
    }
    assert set(good) == set(OPS)
    for op, request in good.items():
        assert check_request(op, request) is request


async def test_the_in_process_worker_answers_through_the_same_checks_and_json() -> None:
    root = PROJECTS / "good"
    modules = [{"name": "prompts", "path": str(root / "prompts.py"), "package": False}]
    worker = InProcessWorker(root)
    events: list[dict[str, Any]] = []
    loaded = await worker.call("load", {"root": str(root), "modules": modules, "progress": True}, 30, on_event=events.append)
    assert loaded["ok"], loaded
    assert [e["event"] for e in events][:2] == ["import", "imported"] and events[-1]["event"] == "report"
    assert {e["target"] for e in events if e["event"] == "report"} == {"support", "greeter"}
    answer = await worker.call("evaluate", {"prompt_id": "support", "example": "expert", "token_budget": 12}, 30)
    assert answer["ok"] and answer["result"]["name"] == "expert" and answer["result"]["inspection"]["token_budget"] == 12
    with pytest.raises(MalformedRequest, match="request.token_budget is str"):
        await worker.call("evaluate", {"prompt_id": "support", "token_budget": "12"}, 30)
    unknown = await worker.call("evaluate", {"prompt_id": "nobody"}, 30)
    assert not unknown["ok"] and unknown["error"]["type"] == "KeyError"
    assert worker.calls == ["load", "evaluate", "evaluate"]  # the refused request never reached the worker
    await worker.close()
    assert not worker.alive
