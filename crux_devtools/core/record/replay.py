"""Replay: plan a recorded step again from what its plan was made from, as it was or with one thing changed.

Each recorded step keeps its plan inputs (``plan_inputs.py``). ``replay_step`` rebuilds the
planner's view of that step from them (the blocks of the system text, each ladder contributor with
its rungs, the tools and who owns them, the messages of the step's own request, the limits, the
epoch's rung ceilings) and runs the same ``Planner`` selection on it, so with nothing changed the
replayed request is the recorded ``sent``, exactly. No project source is imported and no model is
called.

Overrides (``Overrides``): ``max``/``optimize_at`` (the input budget, merged over the recorded one),
``model``/``profile`` (plan against another capacity profile), ``rungs`` (force a contributor to one
rung its ladder allows), ``drop`` (leave a context out, with what it owns and its tools). A new
budget or model starts a new epoch, as in ``generate``: the recorded ceilings no longer hold.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from crux_devtools.shapes import SentRequestDict

from ..plan.cache_plan import CachePolicy
from ..plan.budget import InputBudget, ModelCapacityProfile, derive_limits, merge_input_budget
from ..errors import Diagnostic, ReplayError
from ..contract import ModelRequest
from ..plan.offload_store import OffloadStore
from ..plan.planner import Contributor, Plan, Planner, PlanOptions, Rung
from ..plan.receipts import Adaptation, Candidate, Contribution
from .replay_overrides import Overrides
from ..compose.results import _ToDict
from ..plan.rungs import RUNGS
from .runstore import RunStore, read_step_plan
from ..plan.summaries import SummaryStore
from ..tokens import OFFLINE_ENCODING, TiktokenCounter, TokenCounter, counter_for_model, default_counter


def parse_rungs(values: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """``["C=R", ...]`` as pairs; a value without ``=`` is a ``ReplayError``."""
    out = []
    for value in values:
        contributor, sep, rung = value.partition("=")
        if not sep or not contributor.strip() or not rung.strip():
            raise ReplayError(f"--rung takes CONTRIBUTOR=RUNG (e.g. docs=summary), got {value!r}")
        out.append((contributor.strip(), rung.strip()))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class ReplayedStep(_ToDict):
    """A recorded step planned again: the recorded request, the replayed one and how the plan came out.

    ``sent`` is the replayed request (``None`` when nothing fits: ``status="over-limit"`` with
    ``error_code`` and ``diagnostics``, as ``preview`` reports it); ``identical`` says whether it
    equals ``recorded_sent``.
    """

    run: str
    step: int
    source: str
    overrides: dict[str, Any]
    recorded_sent: dict[str, Any]
    recorded_tokens: int | None
    status: str
    input_tokens: int
    sent: SentRequestDict | None
    identical: bool
    model: str | None
    max_input_tokens: int
    optimize_at: int
    output_reserve: int
    tier: str | None
    new_epoch: bool
    adaptations: list[Adaptation] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    contributions: list[Contribution] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    error_code: str | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)  # the contexts --drop left out (nested ones included)


# -- what the planner is rebuilt from --------------------------------------------------------------
class RecordedTool:
    """A tool as the request offered it: its name, description and JSON schema (nothing to execute)."""

    __slots__ = ("name", "description", "_schema")

    def __init__(self, schema: dict[str, Any]) -> None:
        function = schema.get("function") or {}
        self.name: str = function.get("name", "")
        self.description: str = function.get("description", "")
        self._schema = schema

    def json_schema(self) -> dict[str, Any]:
        return json.loads(json.dumps(self._schema))

    def to_dict(self) -> dict[str, Any]:
        function = self._schema.get("function") or {}
        return {"name": self.name, "description": self.description, "parameters": json.loads(json.dumps(function.get("parameters")))}


@dataclass(slots=True)
class _Summary:
    on_miss: str


@dataclass(slots=True)
class _Shape:
    summary: _Summary | None


@dataclass(slots=True)
class _Context:
    tools: list[RecordedTool]


@dataclass(slots=True)
class _Block:
    """A plain context's block, shaped like the resolver's node for the planner's contributions."""

    id: str
    text: str
    context: _Context
    status: str = "active"
    ladder: None = None
    owner: None = None


@dataclass(slots=True)
class _Walked:
    own_text: str
    prompt_text: str | None
    nodes: list[_Block]


@dataclass(slots=True)
class _Gathered:
    walked: _Walked


class RecordedPlanner(Planner):
    """The ``Planner`` of a recorded step: built from its plan inputs instead of the prompt's source."""

    def __init__(self, frame: dict[str, Any], texts: Mapping[str, str], messages: list[dict[str, Any]], prompt_at: int | None,
                 options: PlanOptions, forced: Mapping[str, str], left_out: set[str]) -> None:
        self.frame, self.texts, self.recorded_messages = frame, texts, messages
        self.forced, self.left_out = forced, left_out
        self.prompt_at = prompt_at
        self.recorded_tools: dict[str, Any] = {name: RecordedTool(json.loads(texts[h])) for name, h in frame["tools"].items()}
        self.support = RecordedTool(json.loads(texts[frame["support_tool"]]))
        super().__init__(None, options)  # type: ignore[arg-type]

    def static_ids(self) -> set[str]:
        """The blocks recorded as static by construction (the source is not read again)."""
        return set((self.frame.get("cache") or {}).get("static") or ())

    def _build(self) -> None:
        frame, texts, tools = self.frame, self.texts, self.recorded_tools
        contexts = frame["contexts"]
        removed = _removed_tools(frame, self.left_out)
        everyone = [
            Contributor(
                id=c["id"], shape=_Shape(_Summary(c["on_miss"]) if c["on_miss"] else None), priority=c["priority"], order=i,  # type: ignore[arg-type]
                full_text=texts[c["full"]], tools=[tools[n] for n in c["tools"]],
            )
            for i, c in enumerate(frame["contributors"])
        ]
        tools_of_context = {c["id"]: c["tools"] for c in contexts}
        own_text = ""
        blocks: list[_Block] = []
        for slot in frame["slots"]:
            if "contributor" in slot:
                contributor = everyone[slot["contributor"]]
                if contributor.id in self.left_out:
                    continue
                self.slots.append(contributor)
                self.contributors.append(contributor)
                self._rungs_of(contributor, frame["contributors"][slot["contributor"]]["rungs"])
                continue
            if slot["context"] in self.left_out:
                continue
            text = texts[slot["text"]]
            self.slots.append(text)
            if slot["context"] == "<prompt>" and len(self.slots) == 1:
                own_text = text
            else:
                blocks.append(_Block(slot["context"], text, _Context([tools[n] for n in tools_of_context.get(slot["context"], []) if n in tools])))
        self._fixed_tools = [tools[n] for n in frame["fixed_tools"] if n not in removed]
        prompt_text = "(recorded)" if self.prompt_at is not None else None
        self.g = _Gathered(_Walked(own_text, prompt_text, blocks))  # type: ignore[assignment]

    def _rungs_of(self, c: Contributor, recorded: list[dict[str, Any]]) -> None:
        tool_cost = sum(_tool_tokens(self.counter, t) for t in c.tools)
        rungs: list[Rung] = []
        for r in recorded:
            text = self.texts[r["text"]] if r["text"] else None
            if r["name"] == "omitted":
                cost: int | None = 0
                block = 0
            elif text is None or not r["priced"]:
                cost, block = None, 0
            else:
                block = self._block_cost(text)
                cost = block + tool_cost
            rungs.append(Rung(r["name"], text, cost, r["available"], r["reason"], r["detail"], r["variant"], block))
        wanted = self.forced.get(c.id)
        if wanted is None:
            self._hold_to_ceiling(c, rungs)
        else:
            index = _forced_index(c.id, rungs, wanted)
            for i, rung in enumerate(rungs):
                if i != index and rung.available:
                    rung.available, rung.reason, rung.detail = False, "over-limit", f"not the rung this replay forces ({wanted})"
        c.rungs = rungs

    def _base_messages(self) -> list[dict[str, Any]]:
        return list(self.recorded_messages)

    def _support_tool(self) -> Any:
        return self.support


def _tool_tokens(counter: TokenCounter, t: Any) -> int:
    from ..plan.planner import tool_tokens

    return tool_tokens(counter, t)


def _forced_index(contributor: str, rungs: list[Rung], wanted: str) -> int:
    name, _sep, variant = wanted.partition(":")
    legal = [r.name if r.name != "authored" else f"authored:{r.variant}" for r in rungs]
    for i, rung in enumerate(rungs):
        if rung.name == name and (not variant or rung.variant == variant):
            if not rung.available:
                raise ReplayError(f"rung {wanted!r} of {contributor!r} was not available at this step ({rung.reason}: {rung.detail}); legal rungs: {', '.join(legal)}")
            return i
    known = "" if name in RUNGS else f" (rungs are {', '.join(RUNGS)})"
    raise ReplayError(f"{contributor!r} has no rung {wanted!r}{known}; its ladder allows: {', '.join(legal)}")


def _removed_tools(frame: dict[str, Any], left_out: set[str]) -> set[str]:
    """Tools that go with the contexts left out: those no context that stays (nor the prompt) offers too."""
    gone: set[str] = set()
    kept: set[str] = set(frame["prompt_tools"])
    for c in frame["contexts"]:
        (gone if c["id"] in left_out or c.get("ladder") in left_out else kept).update(c["tools"])
    for c in frame["contributors"]:
        if c["id"] in left_out:
            gone.update(c["tools"])
    return gone - kept


def _left_out(frame: dict[str, Any], drop: Iterable[str]) -> set[str]:
    """The contexts ``drop`` leaves out: each named one, everything nested under it, and a whole
    ladder when a source of it is named."""
    contexts = frame["contexts"]
    known = {c["id"] for c in contexts} | {c["id"] for c in frame["contributors"]}
    out: set[str] = set()
    for name in drop:
        if name not in known:
            raise ReplayError(f"--drop {name!r}: no such context in this step's request; its contexts: {', '.join(sorted(known)) or 'none'}")
        out.add(name)
        for c in contexts:
            if c["id"] == name and c.get("ladder"):
                out.add(c["ladder"])
    for c in contexts:
        if out.intersection(c["owners"]):
            out.add(c["id"])
            if c.get("ladder"):
                out.add(c["ladder"])
    return out


def _counter(recorded: dict[str, Any], model: str | None, changed_model: bool) -> tuple[TokenCounter, list[str]]:
    if changed_model:
        return counter_for_model(model)[0], []
    encoding = recorded.get("encoding")
    if encoding == OFFLINE_ENCODING:
        return default_counter(), []
    if isinstance(encoding, str):
        return TiktokenCounter(encoding), []
    return default_counter(), [f"the step was counted with a custom counter ({recorded.get('custom')}); this replay counts with cl100k, so its counts may differ"]


# -- replaying -------------------------------------------------------------------------------------
def recorded_step(store: RunStore, run_id: str, index: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Recorded run ``run_id`` and its step ``index``; a ``ReplayError`` names what is missing (the steps it has)."""
    run = store.get(run_id)
    if run is None:
        raise ReplayError(f"no recorded run {run_id!r} in {store.path}")
    steps = run.get("steps") or []
    step = next((s for s in steps if isinstance(s, dict) and s.get("index") == index), None)
    if step is None:
        have = ", ".join(str(s.get("index")) for s in steps if isinstance(s, dict)) or "none"
        raise ReplayError(f"run {run_id!r} has no step {index}; its steps: {have}")
    return run, step


def replay_step(store: RunStore, run_id: str, index: int = 0, overrides: Overrides | None = None) -> ReplayedStep:
    """Plan step ``index`` of recorded run ``run_id`` again from its plan inputs (see the module docstring)."""
    _run, step = recorded_step(store, run_id, index)
    data = read_step_plan(store, run_id, index)
    if data is None:
        raise ReplayError(
            f"run {run_id!r} was recorded before plan inputs were kept, so step {index} cannot be planned again from the recording; "
            "use --source current to plan it from today's source"
        )
    return replay_recorded(run_id, step, data, overrides or Overrides())


@dataclass(slots=True)
class PlannedReplay:
    """One step planned from plan inputs (``plan_recorded``): the plan and what it was planned against."""

    plan: Plan
    request: ModelRequest | None  # what would be sent (None when nothing fits)
    model: str | None
    limits: Any
    new_epoch: bool
    warnings: list[str]
    left_out: set[str]


def recorded_inputs(frame: dict[str, Any]) -> dict[str, Any]:
    """What an override can replace (its ``apply``): the step's recorded frame, no rung forced
    (``rungs``) and nothing left out (``drop``). A ``profile`` put in place of the recorded entry is
    a ``ModelCapacityProfile``."""
    return {**frame, "rungs": (), "drop": ()}


def plan_recorded(frame: dict[str, Any], texts: Mapping[str, str], state: dict[str, Any], messages: list[dict[str, Any]], overrides: Overrides) -> PlannedReplay:
    """Plan a step from its plan inputs, with ``messages`` (history, user prompt, this run's traffic)
    and ``state`` (``history``, ``prompt``, ``ceilings``, ``epoch``, ``support_required``).

    The overrides replace recorded inputs (``Overrides.applied``) and the step is planned from what
    results; only what a replaced input brings with it is decided here: another model, its counter
    and a new epoch; another profile, its cache placement; a budget key, the budget merged over the
    recorded one."""
    inputs, replaced = overrides.applied(recorded_inputs(frame))
    prompt_at = state["history"] if state.get("prompt") else None
    changed_model = "model" in replaced
    model = inputs["model"]
    counter, warnings = _counter(inputs["counter"], model, changed_model)
    measurement = counter_for_model(model)[1] if changed_model else inputs["measurement"]
    budget = {key.partition(".")[2]: value for key, value in replaced.items() if key.startswith("budget.")}
    profile = inputs["profile"] if "profile" in replaced else _recorded_profile(frame)
    limits = derive_limits(profile, _budget(frame.get("budget"), budget), inputs.get("max_tokens"))
    recorded_limits = frame["limits"]
    new_epoch = changed_model or (limits.max_input_tokens, limits.optimize_at) != (recorded_limits["max_input_tokens"], recorded_limits["optimize_at"])
    forced = dict(inputs["rungs"])
    unknown = [c for c in forced if c not in {x["id"] for x in inputs["contributors"]}]
    if unknown:
        ladders = ", ".join(x["id"] for x in inputs["contributors"]) or "none"
        raise ReplayError(f"--rung {unknown[0]!r}: not a ladder contributor of this step; its ladder contributors: {ladders}")
    left_out = _left_out(inputs, inputs["drop"])
    options = PlanOptions(
        model=model, limits=limits, counter=counter, measurement=measurement, messages=messages[: state["history"]],
        active_tools=inputs.get("active_tools"), summary_store=SummaryStore(), offload_store=OffloadStore(), namespace=inputs["namespace"],
        ceilings={} if new_epoch else dict(state["ceilings"]), epoch=state["epoch"] + (1 if new_epoch else 0),
        support_required=bool(state["support_required"]),
        cache=profile.cache if "profile" in replaced else _recorded_cache(frame),
    )
    plan: Plan = RecordedPlanner(inputs, texts, messages, prompt_at, options, forced, left_out).plan()
    request = ModelRequest(plan.system, plan.messages, plan.tools, inputs.get("max_tokens"), plan.cache) if plan.fits else None
    return PlannedReplay(plan, request, model, limits, new_epoch, warnings + plan.warnings, left_out)


def replay_recorded(run_id: str, step: dict[str, Any], data: dict[str, Any], overrides: Overrides, *,
                    messages: list[dict[str, Any]] | None = None, source: str = "recorded") -> ReplayedStep:
    """Replay one recorded step (``step``: its dict as stored; ``data``: ``read_step_plan``'s answer,
    or plan inputs made from today's source with the ``messages`` that plan sends)."""
    sent = step.get("sent") or {}
    messages = list(sent.get("messages") or []) if messages is None else list(messages)
    p = plan_recorded(data["frame"], data["texts"], data["state"], messages, overrides)
    plan, limits = p.plan, p.limits
    replayed = p.request.to_dict() if p.request is not None else None
    recorded_tokens = (step.get("request") or {}).get("input_tokens")
    return ReplayedStep(
        run=run_id, step=int(step["index"]), source=source, overrides=overrides.to_dict(), recorded_sent=sent,
        recorded_tokens=recorded_tokens if isinstance(recorded_tokens, int) else None, status="fits" if plan.fits else "over-limit",
        input_tokens=plan.input_tokens, sent=replayed, identical=replayed == sent, model=p.model,
        max_input_tokens=limits.max_input_tokens, optimize_at=limits.optimize_at, output_reserve=limits.output_reserve, tier=plan.tier, new_epoch=p.new_epoch,
        adaptations=plan.adaptations, candidates=plan.candidates, contributions=plan.contributions, warnings=p.warnings,
        error_code=plan.error_code, diagnostics=plan.diagnostics, left_out=sorted(p.left_out),
    )


def _recorded_cache(frame: dict[str, Any]) -> CachePolicy | None:
    """The cache placement the step was planned with (none for a step recorded without one)."""
    recorded = frame.get("cache")
    if not recorded:
        return None
    policy = recorded["policy"]
    return CachePolicy(policy["mode"], policy["min_tokens"], policy["ttl"], policy["breakpoints"], policy.get("breakpoint_field"))


def _recorded_profile(frame: dict[str, Any]) -> ModelCapacityProfile:
    p = frame["profile"]
    reserve = p["default_output_reserve"]
    return ModelCapacityProfile(p["context_window"], reserve if reserve is not None else frame["limits"]["output_reserve"], p["counting_confidence"])


def _budget(recorded: dict[str, Any] | None, replaced: Mapping[str, int]) -> InputBudget | None:
    """The recorded input budget with the replaced keys (``max``, ``optimize_at``) merged over it. A
    ``max`` alone below the recorded ``optimize_at`` brings ``optimize_at`` down with it (else the
    budget would be invalid)."""
    base = InputBudget(**recorded) if recorded else None
    if not replaced:
        return base
    new_max = replaced.get("max")
    optimize_at = replaced.get("optimize_at")
    if optimize_at is None and base is not None and base.optimize_at is not None and (new_max is None or base.optimize_at <= new_max):
        optimize_at = base.optimize_at
    top = new_max if new_max is not None else (base.max if base is not None else None)
    try:
        if top is not None and optimize_at is not None and optimize_at > top:
            raise TypeError(f"--optimize-at {optimize_at} is above --max {top}; optimize_at must be at most max")
        return merge_input_budget(None, InputBudget(optimize_at=optimize_at, max=top))
    except TypeError as exc:
        raise ReplayError(str(exc)) from exc


__all__ = ["Overrides", "PlannedReplay", "RecordedPlanner", "RecordedTool", "ReplayError", "ReplayedStep", "parse_rungs", "plan_recorded", "recorded_inputs", "recorded_step", "replay_recorded", "replay_step"]
