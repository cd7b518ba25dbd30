"""Building ``PromptReport`` and ``ExampleReport`` dicts for loaded targets. Runs only in the worker.

The planning layer (``preview``) and the runtime (``Agent``, ``generate``) are looked up defensively:
when they are missing, ``preview`` stays ``None`` and ``run`` says so.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..core.errors import RequestCompositionError
from .api import failed_run
from .errors import load_error, plain_error
from .loader import LoadedProject, Target

# Texts longer than this are cut in reports (token counts stay those of the full text).
MAX_TEXT = 200_000
EMPTY_EXAMPLE = "empty"


def truncate(text: str | None) -> tuple[str | None, bool]:
    """Cut ``text`` above ``MAX_TEXT`` characters, with a marker saying how much was left out."""
    if text is None or len(text) <= MAX_TEXT:
        return text, False
    omitted = len(text) - MAX_TEXT
    return text[:MAX_TEXT] + f"\n… [truncated by crux-devtools: {omitted} more characters; token counts are of the full text]", True


def preview_function() -> Callable[..., Any] | None:
    """``preview`` from the planning layer, if it exists yet."""
    try:
        from ..core.planner import preview  # type: ignore[attr-defined]
    except ImportError:
        import crux_devtools

        return getattr(crux_devtools, "preview", None)
    return preview


def generate_function() -> Callable[..., Any] | None:
    """``generate`` from the runtime layer, if it exists yet."""
    try:
        from ..core.runtime import generate  # type: ignore[attr-defined]
    except ImportError:
        import crux_devtools

        return getattr(crux_devtools, "generate", None)
    return generate


def runnable_model(target: Target) -> Any:
    """The model adapter a Run of ``target`` calls (the agent's, else the one its prompt names), or ``None``."""
    model = getattr(target.obj, "model", None) if target.kind == "agent" else target.prompt.model
    if callable(getattr(model, "complete", None)) or callable(getattr(model, "acomplete", None)):
        return model
    return None


def model_kind(target: Target) -> str | None:
    """``"scripted"`` (a ``ScriptedModel``: offline, free), ``"real"`` (any other adapter), or ``None``."""
    from ..core.models import ScriptedModel

    model = runnable_model(target)
    if model is None:
        return None
    return "scripted" if isinstance(model, ScriptedModel) else "real"


def fresh_model(model: Any) -> Any:
    """A ``ScriptedModel`` as it was defined (its script from the top, no requests), so every Run
    replays the same conversation; any other model is used as it is."""
    import copy
    import threading

    from ..core.models import ScriptedModel

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


def inspection_dict(inspection: Any) -> tuple[dict[str, Any], bool]:
    """``Inspection.to_dict()`` with over-long texts cut; returns whether anything was cut."""
    data = inspection.to_dict()
    cut = False
    for key in ("system", "prompt"):
        data[key], was = truncate(data.get(key))
        cut = cut or was
    for part in data.get("parts", []):
        part["text"], was = truncate(part.get("text"))
        cut = cut or was
    return data, cut


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
    inspections: dict[Any, tuple[dict[str, Any], bool]] | None = None,
) -> dict[str, Any]:
    """One ``ExampleReport``: the inspection, and the planning preview when the planner exists.

    ``inspections`` (one report's memo) lets targets sharing a prompt, such as an agent and its
    prompt, resolve each distinct input once.
    """
    report: dict[str, Any] = {"name": name, "input": input, "error": None, "inspection": None, "preview": None, "preview_error": None, "truncated": False}
    key = input_key(target.prompt, input, token_budget) if inspections is not None else None
    if key is not None and inspections is not None and key in inspections:
        inspected, report["truncated"] = inspections[key]
        report["inspection"] = inspected  # the same value: reports are only serialized, never changed
    else:
        try:
            inspection = target.prompt.inspect(input, token_budget=token_budget)
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - user callbacks may raise anything
            report["error"] = load_error(root, exc, file=target.file, line=target.example_lines.get(name, target.line))
            return report
        report["inspection"], report["truncated"] = inspection_dict(inspection)
        if key is not None and inspections is not None:
            inspections[key] = (report["inspection"], report["truncated"])
    preview = preview_function()
    if preview is None:
        return report
    try:
        kwargs: dict[str, Any] = {"input": input}
        if input_budget is not None:
            from ..core import InputBudget  # type: ignore[attr-defined]

            kwargs["input_budget"] = InputBudget(max=input_budget)
        report["preview"] = preview(target.obj, **kwargs).to_dict()
    except RequestCompositionError as exc:
        report["preview_error"] = exc.to_dict()
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - the planner runs user callbacks too
        report["preview_error"] = load_error(root, exc, file=target.file, line=target.line)
    return report


def status_of(examples: list[dict[str, Any]]) -> str:
    """``"error"`` if any example failed, ``"over"`` if the first does not fit, else ``"fits"``."""
    for example in examples:
        if example["error"] is not None:
            return "error"
        failure = example["preview_error"]
        if failure is not None and failure.get("code") not in (None, "REQUEST_TOO_LARGE"):
            return "error"
        if failure is not None and failure.get("code") is None:
            return "error"
    if not examples:
        return "fits"
    first = examples[0]
    if first["inspection"] is not None and not first["inspection"]["fits"]:
        return "over"
    if first["preview"] is not None and first["preview"].get("status") == "over-limit":
        return "over"
    if first["preview_error"] is not None and first["preview_error"].get("code") == "REQUEST_TOO_LARGE":
        return "over"
    return "fits"


def _defined_at(context_lines: Mapping[int, tuple[str, int]] | None, context: Any) -> dict[str, Any]:
    file, line = (context_lines or {}).get(id(context), (None, None))
    return {"file": file, "line": line}


def prompt_report(
    root: Path,
    target: Target,
    inspections: dict[Any, tuple[dict[str, Any], bool]] | None = None,
    context_lines: Mapping[int, tuple[str, int]] | None = None,
) -> dict[str, Any]:
    """The ``PromptReport`` of one target with every example (``inspections``: see ``evaluate_example``;
    ``context_lines``: where module-level contexts are defined, by ``id()``)."""
    prompt = target.prompt
    try:
        schema = prompt.input_model.model_json_schema()
    except Exception as exc:  # noqa: BLE001 - a user model may not be schema-able
        schema = {"error": f"{type(exc).__name__}: {exc}"}
    contexts = [
        {
            "id": reach.context.id,
            "kind": getattr(reach.context, "kind", "context"),
            "owner": reach.owner,
            "conditional": reach.conditional,
            "priority": reach.context.priority,
            "tools": [t.name for t in reach.context.tools],
            "ladder": type(reach.ladder).__name__ if reach.ladder is not None else None,
            **_defined_at(context_lines, reach.context),
        }
        for reach in prompt.contexts()
    ]
    budget = default_budget(target)
    examples = [evaluate_example(root, target, name, data, input_budget=None, inspections=inspections) for name, data in example_inputs(target)]
    first = examples[0]["inspection"] if examples and examples[0]["inspection"] else None
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
        "status": status_of(examples),
        "total_tokens": first["total_tokens"] if first else 0,
        "has_model": runnable_model(target) is not None,
        "model_kind": model_kind(target),
        "examples": examples,
        "note": note,
    }


def project_report(project: LoadedProject) -> dict[str, Any]:
    """Prompts and load errors of a loaded project (the session adds version, hash and times)."""
    prompts = []
    errors = list(project.errors)
    inspections: dict[Any, tuple[dict[str, Any], bool]] = {}
    for target in project.targets:
        try:
            prompts.append(prompt_report(project.root, target, inspections, project.context_lines))
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - keep the other prompts
            errors.append(load_error(project.root, exc, file=target.file, line=target.line))
    return {"prompts": prompts, "errors": errors}


def run_target(root: Path, target: Target, input: dict[str, Any], recorder: Any = None) -> dict[str, Any]:
    """Run an agent (or a prompt with a model adapter) once; returns the whole run (SPEC section 8).

    The run is recorded with ``origin="inspector"`` through ``recorder`` (a ``RunRecorder`` for the
    project's store) and written before this returns. A failure is a run with ``status="error"``.
    """
    from ..core.recording import recording_scope, relative_file
    from ..core.runstore import storable

    model = runnable_model(target)
    if model is None:
        message = f"{target.kind} {target.id!r} has no model to call; give the agent a model adapter, or the prompt model=ScriptedModel([...]) or another adapter"
        return failed_run(target.id, plain_error("NotRunnable", message, file=target.file, line=target.line), input=input, kind=target.kind)
    generate = generate_function()
    if generate is None:
        return failed_run(target.id, plain_error("NotAvailable", "this installation has no runtime (generate) yet"), input=input, kind=target.kind)
    written_before = recorder.written if recorder is not None else 0
    with recording_scope(origin="inspector", recorder=recorder) as scope:
        try:
            generate(target.obj, input=input, model=fresh_model(model))
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - user tools and models may raise anything
            if not scope.runs:  # it failed before the run began: nothing was recorded
                return failed_run(target.id, load_error(root, exc, file=target.file, line=target.line), input=input, kind=target.kind)
    run = relative_file(scope.runs[-1], root)
    recorded = recorder is not None and recorder.enabled and recorder.written > written_before
    why = "recording is off" if recorder is None else (recorder.failure or "the run was not written")
    out: dict[str, Any] = storable(run)
    out["recorded"] = recorded
    if not recorded:
        out["record_error"] = why
    return out
