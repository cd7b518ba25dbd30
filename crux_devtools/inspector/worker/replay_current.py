"""Replaying a recorded step in the worker (where user code may run): from its recording, or from today's source.

``replay_recorded_document`` plans a step again from what its recording kept; ``replay_current_document``
plans it from the project's source as it is now (``plan_current``) and compares it the same way. Both
answer a replay document (``replaying.replay_document``) or ``{"error": sentence}``; every front end
(the CLI's ``replay``, the web's Replay panel, the TUI's replay screen) asks for them through
``replay_source.replay_variant``.

``plan_current`` evaluates the target with the step's recorded input and messages (the caller's history
and this run's tool traffic before the step), the recorded epoch's rung ceilings and whether the
``read_offload`` tool was already required, and plans it as ``generate`` would: a summary the plan
wants is prepared first when its strategy needs no model (no model is ever called here). It answers
with the plan inputs of that plan (``core.plan.plan_inputs``' frame, state and texts) and the messages
it would send, so the step is replayed and compared exactly as a recorded one is.
"""

from __future__ import annotations

from typing import Any

from ...core.compose.callbacks import drive_sync
from ...core.plan.plan_inputs import PlanInputs
from ...core.plan.planner import Planner, gather
from ...core.plan.preparing import prepare_without_model, to_prepare
from ...core.plan.requests import plan_options, setup
from ...core.plan.summaries import SummaryStore


def plan_current(target: Any, request: dict[str, Any], defaults: Any) -> dict[str, Any]:
    """``request``: ``input``, ``history``, ``turn`` (message lists), ``ceilings``, ``epoch``,
    ``support_required``, ``namespace`` of the recorded step. Answers ``{"frame", "state", "texts",
    "messages", "warnings"}``."""
    resolver = defaults.resolve if defaults is not None else None
    s = setup(target.obj, None, None, None, None, resolver, None)
    gathered = drive_sync(gather(s.prompt, s.prompt.validate_input(request.get("input") or {}))).apply_budget(s.token_budget, s.counter)
    store = SummaryStore()
    options = plan_options(s, request.get("history") or [], None, store, None, request.get("namespace"))
    options.turn = list(request.get("turn") or [])
    options.ceilings = {str(k): int(v) for k, v in (request.get("ceilings") or {}).items()}
    options.epoch = int(request.get("epoch") or 1)
    options.support_required = bool(request.get("support_required"))
    planner = Planner(gathered, options)
    plan = planner.plan()
    warnings: list[str] = []
    wanted = to_prepare(plan)  # what generate prepares before sending (on_miss="prepare")
    if wanted:
        for contributor in wanted:
            if prepare_without_model(contributor, store, s.counter).status == "needs-model":
                warnings.append(f"the summary of {contributor.id!r} needs a model to prepare; it is left unprepared here")
        planner = Planner(gathered, options)
        planner.plan()
    inputs = PlanInputs()
    inputs.pending.append((0, planner, s))
    built = inputs.build() or {"texts": {}, "steps": [{"frame": {}, "state": {}}]}
    step = built["steps"][0]
    return {"frame": {"format": built.get("format"), **step["frame"]}, "state": step["state"], "texts": built["texts"],
            "messages": planner._base_messages(), "warnings": warnings}


def overrides_of(data: dict[str, Any], defaults: Any) -> Any:
    """``Overrides`` from their wire form (``Overrides.from_dict``), with the model's profile from the
    project's; a bad value is a ``ReplayError`` that says which and why."""
    import dataclasses

    from ...core.record.replay import Overrides, ReplayError

    try:
        overrides = Overrides.from_dict(data)
    except ValueError as exc:
        raise ReplayError(str(exc)) from None
    if overrides.model is None:
        return overrides
    profiles = getattr(defaults, "profiles", {}) or {}
    profile = profiles.get(overrides.model)
    if profile is None:
        raise ReplayError(f"model {overrides.model!r}: no capacity profile of that name in pyproject.toml; known: {', '.join(sorted(profiles)) or 'none'}")
    return dataclasses.replace(overrides, profile=profile)


def replay_recorded_document(root: Any, request: dict[str, Any], defaults: Any) -> dict[str, Any]:
    """The replay document of a recorded step (``request``: ``run``, ``step``, ``overrides``), or
    ``{"error": message}`` for what cannot be replayed (an unknown run or step, a bad override); a
    step recorded before plan inputs were kept answers ``{"error", "no_plan_inputs": True}``: only
    today's source can plan it."""
    from ...core.record.replay import ReplayError, replay_step
    from ...core.record.runstore import RunStore, read_step_plan
    from ..features.replay.document import replay_document

    store = RunStore.for_project(root, create=False)
    run_id, index = str(request["run"]), int(request.get("step") or 0)
    try:
        run = store.get(run_id)
        if run is not None and any(s.get("index") == index for s in run.get("steps") or []) and read_step_plan(store, run_id, index) is None:
            return {"error": f"run {run_id!r} was recorded before plan inputs were kept, so step {index} cannot be planned again from its recording",
                    "no_plan_inputs": True}
        replayed = replay_step(store, run_id, index, overrides_of(request.get("overrides") or {}, defaults))
    except ReplayError as exc:
        return {"error": str(exc)}
    finally:
        store.close()
    return replay_document(replayed, run)


def step_context(step: dict[str, Any], plan: dict[str, Any] | None) -> dict[str, Any]:
    """What ``plan_current`` plans a step with besides its input: the messages split as the recording
    says (``replaying.split_messages``) and the step's epoch state (none kept: a fresh epoch)."""
    from ..features.replay.document import split_messages

    split = split_messages(step, plan["state"] if plan is not None else None)
    if plan is None:
        return {**split, "ceilings": {}, "epoch": 1, "namespace": None}
    state = plan["state"]
    return {**split, "ceilings": state.get("ceilings") or {}, "epoch": state.get("epoch") or 1, "namespace": plan["frame"].get("namespace")}


def replay_current_document(root: Any, target: Any, request: dict[str, Any], defaults: Any) -> dict[str, Any]:
    """The replay document of a recorded step planned from today's source (``request``: ``run``,
    ``step``, ``overrides``, ``where``: each context's ``[file, line]`` so a changed text names where
    it is defined), or ``{"error": message}`` (an unknown run or step, a bad override). A run recorded
    before plan inputs were kept is planned too: its messages are split at the last user message."""
    from ...core.record.replay import ReplayError, recorded_step, replay_recorded
    from ...core.record.runstore import RunStore, RunStoreError, read_step_plan
    from ..features.replay.document import replay_document

    run_id, index = str(request["run"]), int(request.get("step") or 0)
    try:
        store = RunStore.for_project(root, create=False)
        try:
            run, step = recorded_step(store, run_id, index)
            kept = read_step_plan(store, run_id, index)
        finally:
            store.close()
        overrides = overrides_of(request.get("overrides") or {}, defaults)
    except (ReplayError, RunStoreError) as exc:
        return {"error": str(exc)}
    data = plan_current(target, {"input": run.get("input") or {}, **step_context(step, kept)}, defaults)
    try:
        replayed = replay_recorded(run_id, step, data, overrides, messages=data["messages"], source="current")
    except ReplayError as exc:
        return {"error": str(exc)}
    where = {str(k): (v[0], v[1]) for k, v in (request.get("where") or {}).items()}
    document = replay_document(replayed, run, where)
    document["replayed"]["warnings"] = list(data["warnings"]) + document["replayed"]["warnings"]
    return document


__all__ = ["overrides_of", "plan_current", "replay_current_document", "replay_recorded_document", "step_context"]
