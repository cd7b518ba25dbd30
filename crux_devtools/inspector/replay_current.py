"""Planning a recorded step from today's source (runs in the worker, where user code may run).

The worker evaluates the target with the step's recorded input and messages (the caller's history
and this run's tool traffic before the step), the recorded epoch's rung ceilings and whether the
``read_offload`` tool was already required, and plans it as ``generate`` would: a summary the plan
wants is prepared first when its strategy needs no model (no model is ever called here). It answers
with the plan inputs of that plan (``core.plan.plan_inputs``' frame, state and texts) and the messages
it would send, so the caller replays and compares it exactly as it does a recorded step.
"""

from __future__ import annotations

import shlex
from typing import Any

from ..core.compose.callbacks import drive_sync
from ..core.plan.plan_inputs import PlanInputs
from ..core.plan.planner import Planner, gather
from ..core.plan.preparing import prepare_without_model, to_prepare
from ..core.plan.requests import plan_options, setup
from ..core.plan.summaries import SummaryStore


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
    """``Overrides`` from their JSON form (``Overrides.to_dict()``); the model's profile from the project's."""
    from ..core.record.replay import Overrides, ReplayError

    model = data.get("model") or None
    profile = None
    if model is not None:
        profiles = getattr(defaults, "profiles", {}) or {}
        profile = profiles.get(model)
        if profile is None:
            raise ReplayError(f"model {model!r}: no capacity profile of that name in pyproject.toml; known: {', '.join(sorted(profiles)) or 'none'}")
    rungs = tuple((str(c), str(r)) for c, r in (data.get("rungs") or {}).items())
    return Overrides(max=data.get("max"), optimize_at=data.get("optimize_at"), model=model, profile=profile, rungs=rungs, drop=tuple(data.get("drop") or ()))


def replay_recorded_document(root: Any, request: dict[str, Any], defaults: Any) -> dict[str, Any]:
    """The replay document of a recorded step (``request``: ``run``, ``step``, ``overrides``), or
    ``{"error": message}`` for what cannot be replayed (an unknown run or step, a bad override)."""
    from ..core.record.replay import ReplayError, replay_step
    from ..core.record.runstore import RunStore, read_step_plan
    from .replaying import replay_document

    store = RunStore.for_project(root, create=False)
    run_id, index = str(request["run"]), int(request.get("step") or 0)
    try:
        run = store.get(run_id)
        if run is not None and any(s.get("index") == index for s in run.get("steps") or []) and read_step_plan(store, run_id, index) is None:
            return {"error": f"run {run_id!r} was recorded before plan inputs were kept, so step {index} cannot be planned again from its recording; "
                             f"to plan it from today's source, run: crux-devtools replay {shlex.quote(str(root))} --run {shlex.quote(run_id)} --step {index} --source current"}
        replayed = replay_step(store, run_id, index, overrides_of(request.get("overrides") or {}, defaults))
    except ReplayError as exc:
        return {"error": str(exc)}
    finally:
        store.close()
    return replay_document(replayed, run)


__all__ = ["overrides_of", "plan_current", "replay_recorded_document"]
