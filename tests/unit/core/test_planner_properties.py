"""Property tests of the planner (hypothesis): limits, plain contributors, monotonic fidelity,
preview/generate agreement, tool ownership, and lexicographic optimality against brute force."""

from __future__ import annotations

import itertools
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from crux_devtools import InputBudget, RequestCompositionError, ModelCapacityProfile, PlanningSession, ScriptedModel, context, droppable, generate, offloadable, prefer, preview, prompt, tool, tool_call
from crux_devtools.core.plan.offload_store import OffloadStore
from crux_devtools.core.plan.planner import Planner, gather, tool_tokens
from crux_devtools.core.plan.requests import plan_options, setup
from crux_devtools.core.compose.callbacks import drive_sync
from crux_devtools.core.plan.summaries import SummaryStore
from crux_devtools.core.tokens import default_counter

PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
WORDS = ["nimbus", "bucket", "sync", "quota", "invoice", "region", "folder", "share", "backup", "restore"]


class Arg(BaseModel):
    q: str


def capacity() -> ModelCapacityProfile:
    return ModelCapacityProfile(1_000_000, 0, "exact")


def text_of(seed: int, words: int) -> str:
    return "Block " + " ".join(f"{WORDS[(seed + i) % len(WORDS)]}{seed}" for i in range(words))


@st.composite
def specs(draw: st.DrawFn) -> list[dict[str, object]]:
    n = draw(st.integers(1, 5))
    out = []
    for i in range(n):
        out.append(
            {
                "words": draw(st.integers(1, 120)),
                "alts": draw(st.lists(st.integers(1, 40), max_size=2)),
                "drop": draw(st.booleans()),
                "offload": draw(st.booleans()),
                "tool": draw(st.booleans()),
                "priority": draw(st.integers(0, 100)),
                "plain": draw(st.integers(0, 4)) == 0,
            }
        )
    return out


def build(spec: list[dict[str, object]], with_offload: bool = True) -> tuple[object, dict[str, str]]:
    use = []
    tools_of: dict[str, str] = {}
    for i, s in enumerate(spec):
        tools = []
        if s["tool"]:
            tools = [tool(f"tool_{i}", description=f"Tool {i}", parameters=Arg, execute=lambda p: p.q)]
            tools_of[f"tool_{i}"] = f"c{i}"
        full = context(f"c{i}", system=text_of(i, s["words"]), priority=s["priority"], tools=tools)  # type: ignore[arg-type]
        entry: object = full
        if s["plain"]:
            use.append(full)
            continue
        alts = [context(f"c{i}-alt{j}", system=text_of(100 + 10 * i + j, w)) for j, w in enumerate(s["alts"])]  # type: ignore[union-attr]
        if alts:
            entry = prefer(full, *alts)
        if with_offload and s["offload"]:
            entry = offloadable(entry)  # type: ignore[arg-type]
        if s["drop"] or entry is full:
            entry = droppable(entry)  # type: ignore[arg-type]
        use.append(entry)
    return prompt("prop", system="Own rules.", prompt="Question?", use=use), tools_of


def full_size(p: object) -> int:
    return preview(p, input={}, model=ScriptedModel([], capacity=capacity())).input_tokens


@PROPERTY
@given(specs(), st.floats(0.05, 1.2))
def test_the_selected_request_never_exceeds_max(spec: list[dict[str, object]], ratio: float) -> None:
    p, _ = build(spec)
    budget = max(1, int(full_size(p) * ratio))
    m = ScriptedModel(["ok"], capacity=capacity())
    result = preview(p, input={}, model=m, input_budget=InputBudget(max=budget))
    if result.status == "fits":
        assert result.input_tokens <= budget
        run = generate(p, input={}, model=m, input_budget=InputBudget(max=budget))
        sent = m.requests[0]
        counter = default_counter()
        recount = (counter.count(sent.system) if sent.system else 0) + sum(
            counter.count(json.dumps(x, ensure_ascii=False, separators=(",", ":"), sort_keys=True)) for x in sent.messages
        ) + sum(counter.count(json.dumps(t.json_schema(), ensure_ascii=False, separators=(",", ":"), sort_keys=True)) for t in sent.tools)
        assert recount == run.steps[0].request.input_tokens <= budget


@PROPERTY
@given(specs(), st.floats(0.05, 1.0))
def test_a_plain_contributor_is_never_degraded(spec: list[dict[str, object]], ratio: float) -> None:
    p, _ = build(spec)
    budget = max(1, int(full_size(p) * ratio))
    m = ScriptedModel(["ok"], capacity=capacity())
    result = preview(p, input={}, model=m, input_budget=InputBudget(max=budget))
    if result.status != "fits":
        return
    generate(p, input={}, model=m, input_budget=InputBudget(max=budget))
    for i, s in enumerate(spec):
        if s["plain"]:
            assert text_of(i, s["words"]) in m.requests[0].system  # type: ignore[arg-type]
            assert all(a.contributor != f"c{i}" for a in result.adaptations)


@PROPERTY
@given(specs(), st.floats(0.05, 1.0))
def test_preview_and_generate_choose_the_same_candidate(spec: list[dict[str, object]], ratio: float) -> None:
    p, _ = build(spec)
    budget = InputBudget(max=max(1, int(full_size(p) * ratio)))
    m = ScriptedModel(["ok"], capacity=capacity())
    seen = preview(p, input={}, model=m, input_budget=budget)
    if seen.status != "fits":
        return
    receipt = generate(p, input={}, model=m, input_budget=budget, session=PlanningSession()).steps[0].request
    assert [(a.contributor, a.representation, a.variant) for a in receipt.adaptations] == [
        (a.contributor, a.representation, a.variant) for a in seen.adaptations
    ]
    assert receipt.input_tokens == seen.input_tokens
    assert [(c.contributor, c.representation, c.selected, c.rejection_reason) for c in receipt.candidates] == [
        (c.contributor, c.representation, c.selected, c.rejection_reason) for c in seen.candidates
    ]


@PROPERTY
@given(specs(), st.floats(0.05, 1.0))
def test_omission_is_the_only_rung_that_removes_tools(spec: list[dict[str, object]], ratio: float) -> None:
    p, owners = build(spec)
    result = preview(p, input={}, model=ScriptedModel([], capacity=capacity()), input_budget=InputBudget(max=max(1, int(full_size(p) * ratio))))
    if result.status != "fits":
        return
    rung = {a.contributor: a.representation for a in result.adaptations}
    for name, owner in owners.items():
        assert (name in result.tools) == (rung.get(owner) != "omitted")


@PROPERTY
@given(specs(), st.lists(st.floats(0.0, 0.6), min_size=2, max_size=4), st.floats(0.3, 1.0))
def test_fidelity_never_rises_within_an_epoch(spec: list[dict[str, object]], result_sizes: list[float], ratio: float) -> None:
    p, _ = build(spec, with_offload=False)
    grow = tool("grow", description="Returns text", parameters=Arg, execute=lambda a: " ".join(["word"] * int(a.q)))
    p = prompt("prop-loop", system="Own rules.", prompt="Question?", use=list(p.use), tools=[grow])  # type: ignore[attr-defined]
    budget = InputBudget(max=max(50, int(full_size(p) * ratio)))
    # Tool results of varying size: headroom comes and goes, fidelity must only go down.
    session = PlanningSession()
    ranks: dict[str, int] = {}
    for size in result_sizes:
        words = int(size * budget.max)  # type: ignore[operator]
        m = ScriptedModel([[tool_call("grow", {"q": str(words)})], "done"], capacity=capacity())
        try:
            run = generate(p, input={}, model=m, input_budget=budget, session=session, messages=[])
        except RequestCompositionError:  # a tool result too large for any candidate ends this example
            return
        for step in run.steps:
            rows: dict[str, list[bool]] = {}
            for c in step.request.candidates:
                rows.setdefault(c.contributor, []).append(c.selected)
            now = {cid: flags.index(True) for cid, flags in rows.items()}  # rung index: higher is lower fidelity
            for cid, rank in now.items():
                assert rank >= ranks.get(cid, 0)
                ranks[cid] = rank
            assert step.request.epoch == 1


def brute_force(planner: Planner, limit: int) -> list[int] | None:
    order = planner.ordered()
    fixed = planner.fixed_cost()
    support = tool_tokens(planner.counter, planner._support_tool())
    options = [[i for i, r in enumerate(c.rungs) if r.available and r.cost is not None] for c in order]
    best = None
    for combo in itertools.product(*options):
        cost = fixed + sum(order[k].rungs[i].cost for k, i in enumerate(combo))  # type: ignore[misc]
        if any(order[k].rungs[i].name == "offload" for k, i in enumerate(combo)):
            cost += support  # the read_offload schema, paid once
        if cost <= limit and (best is None or combo < best):
            best = combo
    return list(best) if best is not None else None


@PROPERTY
@given(specs(), st.floats(0.05, 1.0))
def test_the_greedy_plan_is_the_lexicographic_optimum_found_by_brute_force(spec: list[dict[str, object]], ratio: float) -> None:
    p, _ = build(spec)
    limit = max(1, int(full_size(p) * ratio))
    m = ScriptedModel([], capacity=capacity())
    s = setup(p, m, InputBudget(max=limit), None, None)
    options = plan_options(s, None, None, SummaryStore(), OffloadStore(), None)
    planner = Planner(drive_sync(gather(p, p.validate_input({}))), options)  # type: ignore[attr-defined]
    plan = planner.plan()
    expected = brute_force(planner, limit)
    if expected is None:
        assert not plan.fits
    else:
        assert plan.fits and plan.choice == expected


def test_the_shared_read_offload_schema_is_counted_once_and_exactly_in_the_greedy_pass() -> None:
    # A big catalog that fits only if nobody pays for read_offload, a log that can only be offloaded,
    # and small examples: across a sweep of budgets the plan must match brute force every time.
    catalog = context("catalog", system=text_of(1, 700), priority=70)
    index = context("catalog-index", system=text_of(2, 40))
    log = context("log", system="\n".join(f"12:{i % 60:02d} INFO sync {i} ok" for i in range(600)), priority=50)
    examples = context("examples", system=text_of(3, 60), priority=10)
    p = prompt("sweep", system="Own.", prompt="Q?", use=[droppable(prefer(catalog, index)), offloadable(log), droppable(examples)])
    m = ScriptedModel([], capacity=capacity())
    for limit in range(600, 2600, 37):
        s = setup(p, m, InputBudget(max=limit), None, None)
        options = plan_options(s, None, None, SummaryStore(), OffloadStore(), None)
        planner = Planner(drive_sync(gather(p, p.validate_input({}))), options)
        plan = planner.plan()
        expected = brute_force(planner, limit)
        assert (plan.choice if plan.fits else None) == expected, limit
