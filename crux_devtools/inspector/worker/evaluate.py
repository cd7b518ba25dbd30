"""Building ``PromptReport`` and ``ExampleReport`` dicts for loaded targets. Runs only in the worker.

Every example is inspected (the resolved view) and planned (``preview_as_sent``: the request as
``generate`` would send it, with the extractive summaries it would prepare prepared here) with the
same system-text budget, so a context the inspection shows as dropped is one the plan does not
send. Plans use the project's model profiles and summary store (``planning.PlanningDefaults``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from ...core.plan.budget import InputBudget
from ...core.errors import RequestCompositionError
from ...core.plan.ladders import shape
from ...core.contract import is_model
from ...core.plan.preparing import prepare_summaries, preview_as_sent
from ...core.plan.receipts import RequestPreview
from ...core.compose.results import Inspection
from ...core.run.runtime import generate
from ..api import failed_run
from ..errors import LoadError, in_project, relative
from .imports import LoadedProject, Progress, Target
from .planning import PlanningDefaults
from ...statuses import worst
from ..report_types import (
    ContextEntry,
    ExampleReport,
    InspectionDict,
    LoadErrorDict,
    PreparedSummary,
    PrepareResult,
    PreviewDict,
    PromptReport,
    SkippedSummary,
    Status,
    SummaryState,
    SummaryStateName,
)

# Texts longer than this are cut in reports (token counts stay those of the full text).
MAX_TEXT = 200_000
EMPTY_EXAMPLE = "empty"
# Exception types of an input that does not match the prompt's input model (the example's status is
# ``invalid-input``, not ``error``).
INPUT_ERRORS = frozenset({"InputValidationError", "ValidationError"})


def truncate(text: str | None) -> tuple[str | None, bool]:
    """Cut ``text`` above ``MAX_TEXT`` characters, with a marker saying how much was left out."""
    if text is None or len(text) <= MAX_TEXT:
        return text, False
    omitted = len(text) - MAX_TEXT
    return text[:MAX_TEXT] + f"\n… [truncated by crux-devtools: {omitted} more characters; token counts are of the full text]", True


def runnable_model(target: Target) -> Any:
    """The model adapter a Run of ``target`` calls (the agent's, else the one its prompt names), or ``None``."""
    model = getattr(target.obj, "model", None) if target.kind == "agent" else target.prompt.model
    return model if is_model(model) else None


def model_kind(target: Target) -> Literal["scripted", "real"] | None:
    """``"scripted"`` (a ``ScriptedModel``: offline, free), ``"real"`` (any other adapter), or ``None``."""
    from ...core.run.models import ScriptedModel

    model = runnable_model(target)
    if model is None:
        return None
    return "scripted" if isinstance(model, ScriptedModel) else "real"


def fresh_model(model: Any) -> Any:
    """A ``ScriptedModel`` as it was defined (its script from the top, no requests), so every Run
    replays the same conversation; any other model is used as it is."""
    import copy
    import threading

    from ...core.run.models import ScriptedModel

    if not isinstance(model, ScriptedModel):
        return model
    clone = copy.copy(model)
    clone.requests = []
    clone._lock = threading.Lock()
    return clone


def default_budget(target: Target) -> int | None:
    budget = getattr(target.obj, "input_budget", None) if target.kind == "agent" else None
    value = getattr(budget, "max", None)
    return value if isinstance(value, int) else None


def example_inputs(target: Target) -> list[tuple[str, dict[str, Any]]]:
    """The target's examples, or one empty input when it has none and its input model accepts ``{}``."""
    examples = target.prompt.examples
    if examples:
        return list(examples.items())
    try:
        target.prompt.validate_input({})
    except (ValueError, TypeError):
        return []
    return [(EMPTY_EXAMPLE, {})]


def inspection_dict(inspection: Inspection) -> tuple[InspectionDict, bool]:
    """``Inspection.to_dict()`` with over-long texts cut; returns whether anything was cut."""
    data = inspection.to_dict()
    system, cut = truncate(data["system"])
    data["system"] = system or ""
    data["prompt"], was = truncate(data["prompt"])
    cut = cut or was
    for part in data["parts"]:
        text, was = truncate(part["text"])
        part["text"] = text or ""
        cut = cut or was
    return data, cut


def preview_dict(planned: RequestPreview) -> tuple[PreviewDict, bool]:
    """``RequestPreview.to_dict()`` with the sent request's over-long texts cut, as ``inspection_dict``
    does; returns whether anything was cut (token counts stay those of the full request)."""
    data = planned.to_dict()
    sent = data["sent"]
    cut = False
    if sent is not None:
        system, cut = truncate(sent["system"])
        sent["system"] = system or ""
        for message in sent["messages"]:
            if isinstance(message.get("content"), str):
                message["content"], was = truncate(message["content"])
                cut = cut or was
    return data, cut


def summary_layers(target: Target) -> dict[str, Any]:
    """Each summarizable ladder of the target's prompt, by contributor id."""
    layers: dict[str, Any] = {}
    for reach in target.prompt.contexts():
        if reach.ladder is not None:
            sh = shape(reach.ladder)
            if sh.summary is not None:
                layers.setdefault(sh.id, sh.summary)
    return layers


def summary_states(target: Target, preview_data: PreviewDict, done: Sequence[Any] = ()) -> list[SummaryState]:
    """``ExampleReport["summaries"]``: one state per summary rung the planner considered; ``done``
    is what ``preview_as_sent`` prepared, or left for ``generate`` to prepare with a model."""
    layers = summary_layers(target)
    by_id = {d.contributor: d.status for d in done}
    # the planner's verdict: REQUEST_TOO_LARGE means no prepared summary could make the request fit
    futile = preview_data["error_code"] == "REQUEST_TOO_LARGE"
    states: list[SummaryState] = []
    for candidate in preview_data["candidates"]:
        layer = layers.get(candidate["contributor"]) if candidate["representation"] == "summary" else None
        if layer is None:
            continue
        contributor, model = candidate["contributor"], getattr(layer.model, "name", None) if layer.model is not None else None
        prepared = candidate["rejection_reason"] != "unprepared"
        status = by_id.get(contributor)
        state: SummaryStateName
        note: str | None
        if futile and not prepared:
            state, note = "cannot-fit", "not prepared; preparing it cannot make this request fit: even a summary of no tokens leaves it over max"
        elif status == "prepared" and prepared:
            state, note = "prepared-here", "prepared here without a model, as generate prepares it before sending (not stored)"
        elif status == "needs-model" and not prepared:
            state = "generate-prepares"
            note = f"generate prepares it with {model or 'its model'} before sending; the request shown is what is sent if preparing fails"
        else:
            state, note = ("prepared", None) if prepared else ("not-prepared", None)
        states.append({
            "contributor": contributor,
            "strategy": layer.strategy.key,
            "needs_model": bool(layer.strategy.needs_model),
            "model": model,
            "prepared": prepared,
            "state": state,
            "note": note,
        })
    return states


def example_status(report: ExampleReport) -> Status:
    """The example's one status, decided here once (``statuses.py`` names the states): ``error``
    (user code raised), ``invalid-input`` (the input does not match the schema), ``over-limit`` (no
    plan fits the model's limit), ``over-budget`` (the system text is over its token_budget even
    after drops), ``unmatched`` (a match key with no case), ``over-optimize-at`` (sent, but more input
    tokens than ``optimize_at``) or ``fits``. Every view and ``check`` read it."""
    error = report["error"]
    if error is not None:
        return "invalid-input" if error["type"] in INPUT_ERRORS else "error"
    found: list[str] = []
    failure = report["preview_error"]
    if failure is not None:
        found.append("over-limit" if failure["code"] in ("REQUEST_TOO_LARGE", "REPRESENTATION_UNAVAILABLE") else "error")
    planned = report["preview"]
    if planned is not None and planned["status"] == "over-limit":
        found.append("over-limit")
    elif planned is not None and planned["input_tokens"] > planned["optimize_at"]:
        found.append("over-optimize-at")  # sent, but nothing fitted under optimize_at: the numbers say so, not the tier
    inspection = report["inspection"]
    if inspection is not None and not inspection["fits"]:
        found.append("over-budget")
    if inspection is not None and inspection["unmatched"]:
        found.append("unmatched")
    return worst(found) or "fits"  # type: ignore[return-value]  # a StatusKey


def input_key(prompt: Any, input: dict[str, Any], token_budget: int | None) -> tuple[int, str, int | None] | None:
    """What an inspection depends on: the prompt, the input and the budget (None: not comparable)."""
    try:
        return id(prompt), json.dumps(input, sort_keys=True), token_budget
    except (TypeError, ValueError):
        return None


def evaluate_example(
    root: Path,
    target: Target,
    name: str,
    input: dict[str, Any],
    *,
    token_budget: int | None = None,
    input_budget: int | None = None,
    inspections: dict[Any, tuple[InspectionDict, bool]] | None = None,
    defaults: PlanningDefaults | None = None,
    messages: Mapping[str, Any] | None = None,
    model: Any = None,
    keep_preview: list[Any] | None = None,
) -> ExampleReport:
    """One ``ExampleReport``: the inspection and the plan, both under ``token_budget`` (and planned
    against the model named ``model`` instead of the target's, when given: ``inspect --model``).

    ``inspections`` (one report's memo) lets targets sharing a prompt, such as an agent and its
    prompt, resolve each distinct input once. ``model`` plans against that model (a name, a profile or an
    adapter) instead of the target's; ``keep_preview``, when given, receives the ``RequestPreview`` itself
    (the pytest plugin's ``.sent``). ``messages`` (``history``, ``turn``, ``support_required``)
    plans the request as at a later step of a run (``preview_as_sent``'s ``messages``). The planner's refusal (``RequestCompositionError``)
    is the ``preview_error``; any other exception while planning is a fault of user code (a
    callback), so it is the example's ``error``.
    """
    report: ExampleReport = {
        "name": name, "input": input, "error": None, "inspection": None, "preview": None, "preview_error": None,
        "truncated": False, "status": "error", "summaries": [],
    }
    key = input_key(target.prompt, input, token_budget) if inspections is not None else None
    if key is not None and inspections is not None and key in inspections:
        inspected, report["truncated"] = inspections[key]
        report["inspection"] = inspected  # the same value: reports are only serialized, never changed
    else:
        try:
            inspection = target.prompt.inspect(input, token_budget=token_budget)
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - user callbacks may raise anything
            report["error"] = LoadError.from_exception(root, exc, file=target.file, line=target.example_lines.get(name, target.line)).to_dict()
            report["status"] = example_status(report)
            return with_expectations(root, target, name, input, report)
        inspected, report["truncated"] = inspection_dict(inspection)
        report["inspection"] = inspected
        if key is not None and inspections is not None:
            inspections[key] = (inspected, report["truncated"])
    kwargs = (defaults or PlanningDefaults()).preview_kwargs(target)
    if token_budget is not None:
        kwargs["token_budget"] = token_budget
    if input_budget is not None:
        kwargs["input_budget"] = InputBudget(max=input_budget)
    if model is not None:
        kwargs["model"] = model
    try:
        # What generate would send: the extractive summaries it would prepare are prepared here too.
        sent, done = preview_as_sent(target.obj, input=input, messages=messages, **kwargs)
        if keep_preview is not None:
            keep_preview.append(sent)
        planned, cut = preview_dict(sent)
        report["preview"] = planned
        report["truncated"] = report["truncated"] or cut
        report["summaries"] = summary_states(target, planned, done)
    except RequestCompositionError as exc:
        report["preview_error"] = exc.to_dict()
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - the planner runs user callbacks too
        report["error"] = LoadError.from_exception(root, exc, file=target.file, line=target.line).to_dict()
    report["status"] = example_status(report)
    return with_expectations(root, target, name, input, report)


def with_expectations(root: Path, target: Target, name: str, input: dict[str, Any], report: ExampleReport) -> ExampleReport:
    """``report`` with the results of the example's expectations, when it was written with
    ``example(..., expect=...)`` and is evaluated with its own input (a custom input has none)."""
    expect = target.prompt.expectations.get(name)
    if expect is not None and (target.prompt.examples or {}).get(name) == input:
        from .expectations import expectation_results

        report["expectations"] = expectation_results(root, target.prompt, expect, {"file": target.file, "line": target.line, "contexts": []}, report)
    return report


def status_of(examples: list[ExampleReport], *, checked: bool = True) -> Status:
    """A prompt's status, derived from its examples' statuses: the worst of them (``statuses.SEVERITY``);
    ``not-checked`` when it has none and could not be resolved without one (``checked`` False)."""
    found = worst([example["status"] for example in examples])
    if found is None:
        return "fits" if checked else "not-checked"
    return found  # type: ignore[return-value]  # one of the examples' statuses


def planned_tokens(example: ExampleReport | None) -> int:
    """The list's TOKENS figure: the planned request's input tokens (the inspection's total without a plan)."""
    if example is None:
        return 0
    if example["preview"] is not None:
        return int(example["preview"]["input_tokens"])
    return int(example["inspection"]["total_tokens"]) if example["inspection"] is not None else 0


def prepare(root: Path, target: Target, input: dict[str, Any], defaults: PlanningDefaults, *, contributor: str | None = None,
            allow_models: bool = False, token_budget: int | None = None) -> PrepareResult:
    """Prepare one example's missing summaries into the project's summary store (the ``prepare`` op)."""
    kwargs = defaults.preview_kwargs(target)
    kwargs.pop("summary_store", None)
    try:
        done = prepare_summaries(
            target.obj, input=input, summary_store=defaults.writable_store(root), allow_models=allow_models,
            contributors=[contributor] if contributor else None, token_budget=token_budget, **kwargs,
        )
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - user callbacks and summary models may raise anything
        return {"prepared": [], "skipped": [], "error": LoadError.from_exception(root, exc, file=target.file, line=target.line).to_dict()}
    prepared: list[PreparedSummary] = [{"contributor": d.contributor, "strategy": d.strategy, "tokens": d.tokens} for d in done if d.status in ("prepared", "already-prepared")]
    skipped: list[SkippedSummary] = [
        {"contributor": d.contributor, "reason": d.detail or d.status, "needs_model": d.status == "needs-model", "model": d.model}
        for d in done if d.status in ("needs-model", "failed")
    ]
    return {"prepared": prepared, "skipped": skipped, "error": None}


def _defined_at(root: Path, context_lines: Mapping[int, tuple[str, int]] | None, context: Any) -> tuple[str | None, int | None]:
    """Where a context is defined: its module-level name's line in a module of the collection, else
    the ``context(...)`` call it was made by, wherever that is in the project (whatever ``modules`` lists)."""
    known = (context_lines or {}).get(id(context))
    if known is not None:
        return known
    site = getattr(context, "defined_at", None)
    if site is None or not in_project(root, site[0]):
        return None, None
    return relative(root, site[0]), site[1]


def prompt_report(
    root: Path,
    target: Target,
    inspections: dict[Any, tuple[InspectionDict, bool]] | None = None,
    context_lines: Mapping[int, tuple[str, int]] | None = None,
    defaults: PlanningDefaults | None = None,
    progress: Progress | None = None,
) -> PromptReport:
    """The ``PromptReport`` of one target with every example (``inspections``: see ``evaluate_example``;
    ``context_lines``: where module-level contexts are defined, by ``id()``; ``defaults``: the
    project's model profiles and summary store; ``progress``: told of each example before it is
    evaluated)."""
    prompt = target.prompt
    try:
        schema = prompt.input_model.model_json_schema()
    except Exception as exc:  # noqa: BLE001 - a user model may not be schema-able
        schema = {"error": f"{type(exc).__name__}: {exc}"}
    contexts: list[ContextEntry] = []
    for reach in prompt.contexts():
        file, line = _defined_at(root, context_lines, reach.context)
        contexts.append({
            "id": reach.context.id,
            "kind": getattr(reach.context, "kind", "context"),
            "owner": reach.owner,
            "conditional": reach.conditional,
            "priority": reach.context.priority,
            "tools": [t.name for t in reach.context.tools],
            "ladder": type(reach.ladder).__name__ if reach.ladder is not None else None,
            "file": file,
            "line": line,
            "fields": sorted(getattr(reach.context.input, "model_fields", None) or ()),
        })
    budget = default_budget(target)
    examples: list[ExampleReport] = []
    for name, data in example_inputs(target):
        if progress is not None:
            progress("example", target=target.id, example=name)
        examples.append(evaluate_example(root, target, name, data, inspections=inspections, defaults=defaults))
    note = None
    if not examples:
        note = (
            f"{target.kind} {target.id!r} has required inputs and no examples; add "
            f"examples={{'name': {{...}}}} to its definition to see it resolved"
        )
    return {
        "id": target.id,
        "kind": target.kind,
        "module": target.module,
        "file": target.file,
        "line": target.line,
        "input_schema": schema,
        "contexts": contexts,
        "tools": sorted(prompt.all_tools),
        "default_budget": budget,
        "status": status_of(examples, checked=note is None),
        "total_tokens": planned_tokens(examples[0] if examples else None),
        "has_model": runnable_model(target) is not None,
        "model_kind": model_kind(target),
        "plan_model": (defaults or PlanningDefaults()).plan_model(target),
        "examples": examples,
        "note": note,
    }


def project_report(project: LoadedProject, defaults: PlanningDefaults | None = None, *, skip: set[str] = frozenset(), progress: Progress | None = None) -> dict[str, Any]:  # type: ignore[assignment]
    """Prompts and load errors of a loaded project (the session adds version, hash and times).

    Targets whose id is in ``skip`` are left out (another worker reported them, or they hung one).
    With ``progress``, each target's report (or the error that stopped it) is sent as it is made,
    not in the result; the result's errors are then only those no module or target owns.
    """
    prompts = []
    errors: list[LoadErrorDict] = list(project.errors) if progress is not None else [*project.import_errors, *project.errors]
    inspections: dict[Any, tuple[InspectionDict, bool]] = {}
    for target in project.targets:
        if target.id in skip:
            continue
        if progress is not None:
            progress("target", target=target.id, kind=target.kind, module=target.ref, file=target.file, line=target.line)
        report: PromptReport | None = None
        error: LoadErrorDict | None = None
        try:
            report = prompt_report(project.root, target, inspections, project.context_lines, defaults, progress=progress)
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - keep the other prompts
            error = LoadError.from_exception(project.root, exc, file=target.file, line=target.line).to_dict()
        if progress is not None:
            progress("report", target=target.id, prompt=report, error=error)
        elif report is not None:
            prompts.append(report)
        elif error is not None:
            errors.append(error)
    return {"prompts": prompts, "errors": errors}


def first_request_tokens(target: Target, input: dict[str, Any], defaults: PlanningDefaults | None = None) -> int | None:
    """The input tokens of the first request a Run of ``target`` on ``input`` would send (planned as
    the page plans it), or ``None`` when it cannot be planned (the run would fail before any call)."""
    try:
        sent, _done = preview_as_sent(target.obj, input=input, **(defaults or PlanningDefaults()).preview_kwargs(target))
    except (Exception, SystemExit):  # noqa: BLE001 - a plan that fails is the run's own error, shown when it runs
        return None
    return int(sent.input_tokens) if sent.status == "fits" else None


def run_target(root: Path, target: Target, input: dict[str, Any], recorder: Any = None) -> dict[str, Any]:
    """Run an agent (or a prompt with a model adapter) once; returns the whole run (as ``RunStore`` stores it).

    The run is recorded with ``origin="inspector"`` through ``recorder`` (a ``RunRecorder`` for the
    project's store) and written before this returns. A failure is a run with ``status="error"``.
    """
    from ...core.record.recording import recording_scope, relative_file
    from ...core.record.runstore import storable

    model = runnable_model(target)
    if model is None:
        message = f"{target.kind} {target.id!r} has no model to call; give the agent a model adapter, or the prompt model=ScriptedModel([...]) or another adapter"
        return failed_run(target.id, LoadError.plain("NotRunnable", message, file=target.file, line=target.line).to_dict(), input=input, kind=target.kind)
    written_before = recorder.written if recorder is not None else 0
    with recording_scope(origin="inspector", recorder=recorder) as scope:
        try:
            generate(target.obj, input=input, model=fresh_model(model))
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - user tools and models may raise anything
            if not scope.runs:  # it failed before the run began: nothing was recorded
                return failed_run(target.id, LoadError.from_exception(root, exc, file=target.file, line=target.line).to_dict(), input=input, kind=target.kind)
    run = relative_file(scope.runs[-1], root)
    recorded = recorder is not None and recorder.enabled and recorder.written > written_before
    why = "recording is off" if recorder is None else (recorder.failure or ("the runs file is locked by another process: the run waits and is written once it is free" if recorder.pending else "the run was not written"))
    out: dict[str, Any] = storable(run)
    out["recorded"] = recorded
    if not recorded:
        out["record_error"] = why
    return out
