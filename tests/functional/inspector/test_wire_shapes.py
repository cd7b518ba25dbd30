"""Every value that crosses the worker boundary has one type (``crux_devtools/shapes.py``), and the
check of every worker message is derived from it (``inspector/transport/wire.py``).

Real values pass: the core's own ``to_dict()`` of a real preview, inspection, receipt and refusal,
and a real worker's answers. A message missing a field is refused where it arrives, with an error
naming the op, the path of the field and what was expected, for several ops, both built by hand
and sent by a real worker whose answers user code broke.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from pathlib import Path
from typing import Any

import pytest

from crux_devtools import InputBudget, ModelCapacityProfile, RequestCompositionError, ScriptedModel, generate, preview
from crux_devtools import shapes
from crux_devtools.core.errors import Diagnostic, ErrorInfo
from crux_devtools.core.plan.receipts import Adaptation, Candidate, Contribution, Receipt, RequestPreview
from crux_devtools.core.compose.results import Drop, Exclusion, Inspection, Part
from crux_devtools.inspector.errors import LoadError
from crux_devtools.inspector.session.service import ProjectSession
from crux_devtools.inspector.transport.wire import MalformedReport, check, check_answer, parse_event
from crux_devtools.inspector.worker.ops import OPS
from test_sent import laddered

TICKET = {"message": "Where is my invoice?"}


def through_json(value: Any) -> Any:
    """A value as the session receives it: JSON lines from the worker."""
    return json.loads(json.dumps(value))


def planned(limit: int) -> RequestPreview:
    model = ScriptedModel(["done"], capacity=ModelCapacityProfile(1_000_000, 0, "exact"))
    return preview(laddered(), input=TICKET, model=model, input_budget=InputBudget(max=limit))


# -- each shape round-trips from real core objects ---------------------------------------------------
def test_a_real_preview_that_adapts_rungs_has_its_shape_through_json() -> None:
    plan = planned(1500)
    data = through_json(plan.to_dict())
    assert data["adaptations"] and data["candidates"] and data["sent"] is not None
    assert check(shapes.PreviewDict, data, "preview") is data
    assert any(c["span"] is not None for c in data["contributions"])


def test_a_real_preview_over_the_limit_has_its_shape_with_its_diagnostics() -> None:
    data = through_json(planned(5).to_dict())
    assert data["status"] == "over-limit" and data["sent"] is None and data["diagnostics"]
    check(shapes.PreviewDict, data, "preview")


def test_a_real_inspection_receipt_and_refusal_have_their_shapes() -> None:
    inspection = laddered(token_budget=40).inspect(TICKET)
    check(shapes.InspectionDict, through_json(inspection.to_dict()), "inspection")
    result = generate(laddered(), input=TICKET, model=ScriptedModel(["done"], capacity=ModelCapacityProfile(1_000_000, 0, "exact")))
    check(shapes.ReceiptDict, through_json(result.steps[0].request.to_dict()), "receipt")
    check(shapes.SentRequestDict, through_json(result.steps[0].sent.to_dict()), "sent")
    with pytest.raises(RequestCompositionError) as refused:
        generate(laddered(), input=TICKET, model=ScriptedModel(["done"]), input_budget=InputBudget(max=5))
    check(shapes.PlanErrorDict, through_json(refused.value.to_dict()), "preview_error")
    check(shapes.ErrorInfoDict, ErrorInfo.from_exception(ValueError("x")).to_dict(), "error")


@pytest.mark.parametrize(
    ("cls", "shape"),
    [
        (Part, shapes.PartDict), (Exclusion, shapes.ExclusionDict), (Drop, shapes.DropDict), (Inspection, shapes.InspectionDict),
        (Adaptation, shapes.AdaptationDict), (Candidate, shapes.CandidateDict), (Contribution, shapes.ContributionDict),
        (Receipt, shapes.ReceiptDict), (RequestPreview, shapes.PreviewDict), (Diagnostic, shapes.DiagnosticDict),
        (ErrorInfo, shapes.ErrorInfoDict), (LoadError, shapes.LoadErrorDict),
    ],
)
def test_a_core_value_and_its_shape_name_the_same_fields(cls: type, shape: type) -> None:
    # A field added to the frozen value and not to its shape (or the reverse) fails here; a to_dict()
    # that leaves a key of the shape out fails mypy.
    assert {f.name for f in dataclasses.fields(cls)} == set(typing.get_type_hints(shape))


def test_every_worker_op_declares_the_type_of_its_request_and_its_answer() -> None:
    assert set(OPS) >= {"ping", "written", "prime", "load", "update", "evaluate", "run", "prepare", "replay_step", "replay_continue", "replay_send"}
    for op in OPS.values():
        assert op.answer is not Any and typing.get_type_hints(op.request) is not None


# -- the derived check -------------------------------------------------------------------------------
def good_example() -> dict[str, Any]:
    plan = planned(1500)
    inspection = laddered().inspect(TICKET)
    return through_json({
        "name": "a", "input": TICKET, "error": None, "inspection": inspection.to_dict(), "preview": plan.to_dict(),
        "preview_error": None, "truncated": False, "status": "fits", "summaries": [],
    })


def answer(result: Any) -> dict[str, Any]:
    return {"id": 3, "ok": True, "result": result, "duration_ms": 1.5}


def test_a_good_answer_passes_unchanged() -> None:
    message = answer(good_example())
    assert check_answer("evaluate", message) is message
    written = answer({"written": ["data.txt"]})
    assert check_answer("written", written) is written
    failed = {"id": 4, "ok": False, "error": LoadError.plain("ValueError", "boom").to_dict(), "duration_ms": 0.1}
    assert check_answer("run", failed) is failed


@pytest.mark.parametrize(
    ("op", "result", "path", "expected"),
    [
        ("evaluate", "drop preview.input_tokens", "result.preview has no 'input_tokens'", "expected int"),
        ("evaluate", "drop inspection.parts.0.tokens", "result.inspection.parts[0] has no 'tokens'", "expected int"),
        ("prepare", {"prepared": [], "error": None}, "result has no 'skipped'", "expected a list of SkippedSummary"),
        ("ping", {"pid": "12"}, "result.pid is str", "expected int"),
        ("update", {"full": 3}, "result is none of", "result.full is int, expected str"),
        ("written", {"written": ["a", None]}, "result.written[1] is null", "expected str"),
    ],
)
def test_an_answer_missing_or_mistyping_a_field_is_refused_naming_the_op_the_path_and_the_type(
    op: str, result: Any, path: str, expected: str
) -> None:
    if isinstance(result, str):  # "drop a.b.0.c": a real example with one field taken out
        example: Any = good_example()
        *parents, last = result.split()[1].split(".")
        node = example
        for key in parents:
            node = node[int(key)] if key.isdigit() else node[key]
        del node[last]
        result = example
    refused = check_answer(op, answer(result))
    assert refused["ok"] is False and refused["id"] == 3
    error = refused["error"]
    check(shapes.LoadErrorDict, error, "error")
    assert error["type"] == "MalformedReport"
    assert f"malformed answer to {op!r}" in error["message"]
    assert path in error["message"] and expected in error["message"], error["message"]


def test_an_answer_without_its_result_or_with_a_bad_error_is_refused() -> None:
    assert "the answer has no 'result'" in check_answer("load", {"id": 1, "ok": True, "duration_ms": 2.0})["error"]["message"]
    bad_error = check_answer("run", {"id": 1, "ok": False, "error": {"type": "X", "message": "m"}, "duration_ms": 2.0})
    assert "answer.error has no 'file': expected str or null" in bad_error["error"]["message"]
    no_ok = check_answer("ping", {"id": 1, "result": {"pid": 3}, "duration_ms": 2.0})
    assert "answer has no 'ok': expected bool" in no_ok["error"]["message"]


def test_literals_nested_unions_and_optional_keys_follow_the_type() -> None:
    state = {"contributor": "log", "strategy": "extractive", "needs_model": False, "model": None, "prepared": True}
    check(shapes.SummaryState, state, "s")  # state and note are NotRequired
    with pytest.raises(MalformedReport, match=r"s.state is 'done', expected 'prepared' or 'prepared-here'"):
        check(shapes.SummaryState, {**state, "state": "done"}, "s")
    with pytest.raises(MalformedReport, match="s.needs_model is int, expected bool"):
        check(shapes.SummaryState, {**state, "needs_model": 0}, "s")
    with pytest.raises(MalformedReport, match="s.prepared is bool, expected int"):
        check(int | None, True, "s.prepared")
    check(shapes.RunSummary | shapes.ConfirmRequest, {"needs_confirmation": True, "target": "a", "kind": "agent", "model": "m",
                                                      "model_kind": "real", "confirm": "abc", "input_tokens": 12}, "result")


def test_a_progress_event_missing_a_field_is_refused_by_its_type() -> None:
    with pytest.raises(MalformedReport, match="target has no 'line': expected int or null"):
        parse_event({"event": "target", "target": "a", "kind": "prompt", "module": "m", "file": "m.py"})
    with pytest.raises(MalformedReport, match="unknown progress event 'tea'"):
        parse_event({"event": "tea"})


# -- a real worker whose answers user code broke -----------------------------------------------------
BREAKS_ANSWERS = '''\
import crux_devtools.inspector.worker.evaluate as evaluate
from crux_devtools import ScriptedModel, prompt

# The worker's ops call these by their module's name: user code replacing them breaks the answers.
for name, key in (("evaluate_example", "status"), ("prepare", "skipped"), ("run_target", "steps")):
    def broken(*args, real=getattr(evaluate, name), key=key, **kwargs):
        result = real(*args, **kwargs)
        if "inspections" not in kwargs:  # the evaluate op's own call, not the load's
            result.pop(key, None)
        return result
    setattr(evaluate, name, broken)

hello = prompt("hello", system="Say hello.", model=ScriptedModel(["hello"]), examples={"a": {}})
'''


async def test_a_real_workers_answers_missing_a_field_are_refused_for_each_op(tmp_path: Path) -> None:
    (tmp_path / "breaks.py").write_text(BREAKS_ANSWERS, encoding="utf-8")
    async with ProjectSession(tmp_path, timeout=60, watch=False, history=False, prewarm=False) as session:
        assert session.report is not None and [p["id"] for p in session.report["prompts"]] == ["hello"]
        example = await session.evaluate("hello", example="a")
        prepared = await session.prepare_summaries("hello", example="a")
        run = await session.run("hello")
    assert example["status"] == "error" and example["error"] is not None
    errors = {"evaluate": example["error"], "prepare": prepared["error"], "run": run["error"]}
    expected = {"evaluate": "result has no 'status'", "prepare": "result has no 'skipped'", "run": "result has no 'steps'"}
    for op, error in errors.items():
        assert error is not None and error["type"] == "MalformedReport", (op, error)
        assert f"malformed answer to {op!r}" in error["message"] and expected[op] in error["message"], error["message"]
