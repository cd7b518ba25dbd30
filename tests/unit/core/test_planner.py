"""The request planner through ``preview``: selection, tiers, evidence and errors."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from crux_devtools import (
    InputBudget,
    ModelCapacityProfile,
    RequestCompositionError,
    ScriptedModel,
    SummaryStore,
    apreview,
    context,
    droppable,
    generate,
    offloadable,
    prefer,
    preview,
    prompt,
    summarizable,
    tool,
)
from crux_devtools.core.plan.summaries import artifact_key, summarize
from crux_devtools.core.tokens import default_counter

SECRET = "TOP-SECRET-CONTENT"


class Sku(BaseModel):
    sku: str


lookup = tool("lookup_sku", description="Look up a SKU in the catalog", parameters=Sku, execute=lambda p: {"sku": p.sku})


def big(label: str, n: int) -> str:
    return f"{label}: " + " ".join(f"{label.lower()} line {i} says {SECRET} number {i}." for i in range(n))


def model() -> ScriptedModel:
    return ScriptedModel(["ok"], name="planner-test", capacity=ModelCapacityProfile(1_000_000, 0, "exact"))


def catalog_prompt(**kwargs: object) -> object:
    full = context("catalog", system=big("Catalog", 200), tools=[lookup], priority=80)
    index = context("catalog-index", system="Catalog index: SKUs A1 to A200.")
    log = context("log", system="\n".join(f"12:{i:02d} INFO request {i} ok" for i in range(200)), priority=40)
    examples = context("examples", system=big("Example", 60), priority=10)
    return prompt(
        "support",
        system="You are Nimbus support.",
        prompt="Help me.",
        use=[droppable(prefer(full, index)), offloadable(log), droppable(examples)],
        **kwargs,  # type: ignore[arg-type]
    )


def chosen(result: object) -> dict[str, str]:
    return {a.contributor: a.representation for a in result.adaptations}  # type: ignore[attr-defined]


def test_a_request_that_fits_is_sent_at_full_fidelity_with_no_adaptations() -> None:
    result = preview(catalog_prompt(), input={}, model=model())
    assert result.status == "fits"
    assert result.adaptations == []
    assert result.tools == ["lookup_sku"]
    assert result.measurement == "exact" or result.measurement == "estimated"
    assert result.input_tokens <= result.max_input_tokens


def test_tighter_budgets_walk_down_the_rungs_in_priority_order() -> None:
    p = catalog_prompt()
    full = preview(p, input={}, model=model()).input_tokens
    steps = [chosen(preview(p, input={}, model=model(), input_budget=InputBudget(max=b))) for b in (full, full - 300, 4000, 1200, 700, 350)]
    assert steps[0] == {}
    assert steps[1] == {"examples": "omitted"}  # the lowest priority goes first
    assert steps[2] == {"log": "offload"}
    assert steps[3] == {"catalog": "authored", "log": "offload"}
    assert steps[4] == {"catalog": "authored", "log": "offload", "examples": "omitted"}
    assert steps[5] == {"catalog": "omitted", "log": "offload", "examples": "omitted"}


def test_a_higher_priority_contributor_keeps_its_rung_before_a_lower_one_is_considered() -> None:
    a = context("a", system=big("Alpha", 40), priority=90)
    b = context("b", system=big("Bravo", 40), priority=20)
    p = prompt("p", use=[droppable(b), droppable(a)])
    whole = preview(p, input={}, model=model()).input_tokens
    result = preview(p, input={}, model=model(), input_budget=InputBudget(max=whole - 10))
    assert chosen(result) == {"b": "omitted"}


def test_optimize_at_is_preferred_and_max_is_the_fallback_tier() -> None:
    p = catalog_prompt()
    full = preview(p, input={}, model=model()).input_tokens
    soft = preview(p, input={}, model=model(), input_budget=InputBudget(optimize_at=1200, max=full))
    assert soft.tier == "optimize_at" and soft.input_tokens <= 1200
    fallback = preview(p, input={}, model=model(), input_budget=InputBudget(optimize_at=10, max=full))
    assert fallback.tier == "max" and fallback.adaptations == []


def test_every_considered_rung_is_a_candidate_with_a_reason() -> None:
    result = preview(catalog_prompt(), input={}, model=model(), input_budget=InputBudget(max=1200))
    rows = {(c.contributor, c.representation): c for c in result.candidates}
    assert rows[("catalog", "full")].rejection_reason == "over-limit"
    assert rows[("catalog", "authored")].selected and rows[("catalog", "authored")].rejection_reason is None
    assert rows[("catalog", "omitted")].rejection_reason == "lower-fidelity"
    assert rows[("log", "offload")].selected
    assert rows[("examples", "full")].selected
    assert sum(c.selected for c in result.candidates) == 3
    assert rows[("catalog", "authored")].input_tokens == result.input_tokens


def test_plain_contributors_are_never_degraded_and_too_large_raises_before_dispatch() -> None:
    plain = context("policy", system=big("Policy", 100))
    p = prompt("p", system="Own.", use=[plain, droppable(context("extra", system="Extra."))])
    result = preview(p, input={}, model=model(), input_budget=InputBudget(max=50))
    assert result.status == "over-limit" and result.error_code == "REQUEST_TOO_LARGE"
    m = model()
    with pytest.raises(RequestCompositionError) as info:
        generate(p, input={}, model=m, input_budget=InputBudget(max=50))
    assert info.value.code == "REQUEST_TOO_LARGE"
    assert m.requests == []
    ids = {d.contributor for d in info.value.diagnostics}
    assert "policy" in ids and all(d.tokens for d in info.value.diagnostics if d.contributor == "policy")
    assert SECRET not in json.dumps([d.to_dict() for d in info.value.diagnostics]) + str(info.value)


def test_omission_removes_owned_tools_and_other_rungs_keep_them() -> None:
    p = catalog_prompt()
    authored = preview(p, input={}, model=model(), input_budget=InputBudget(max=1200))
    assert "lookup_sku" in authored.tools
    omitted = preview(p, input={}, model=model(), input_budget=InputBudget(max=350))
    assert chosen(omitted)["catalog"] == "omitted"
    assert "lookup_sku" not in omitted.tools


def test_an_explicitly_selected_tool_makes_omission_illegal() -> None:
    result = preview(catalog_prompt(), input={}, model=model(), input_budget=InputBudget(max=400), active_tools=["lookup_sku"])
    rows = {(c.contributor, c.representation): c for c in result.candidates}
    assert rows[("catalog", "omitted")].rejection_reason == "required-tool"
    assert chosen(result).get("catalog") == "authored"
    assert "lookup_sku" in result.tools


def test_active_tools_narrows_what_is_offered_and_rejects_unknown_names() -> None:
    assert preview(catalog_prompt(), input={}, model=model(), active_tools=[]).tools == []
    with pytest.raises(ValueError, match="nope"):
        preview(catalog_prompt(), input={}, model=model(), active_tools=["nope"])


def test_offload_below_above_tokens_is_rejected_as_below_floor() -> None:
    small = context("small", system="A short log line.")
    p = prompt("p", use=[droppable(offloadable(small, above_tokens=1000))])
    result = preview(p, input={}, model=model(), input_budget=InputBudget(max=3))
    rows = {c.representation: c for c in result.candidates}
    assert rows["offload"].rejection_reason == "below-floor"
    assert rows["omitted"].selected


def test_offload_rung_shows_a_bounded_preview_and_injects_read_offload() -> None:
    log = context("log", system="\n".join(f"12:{i:02d} INFO request {i} {SECRET}" for i in range(2000)))
    p = prompt("p", use=[offloadable(log)])
    result = preview(p, input={}, model=model(), input_budget=InputBudget(max=600))
    assert chosen(result) == {"log": "offload"}
    assert "read_offload" in result.tools
    offload_row = next(c for c in result.candidates if c.representation == "offload")
    assert offload_row.tokens is not None and offload_row.tokens <= 256 + 80


def test_an_unprepared_summary_is_a_candidate_marked_unprepared_in_preview() -> None:
    doc = context("doc", system=big("Doc", 100))
    p = prompt("p", use=[droppable(summarizable(doc))])
    store = SummaryStore()
    result = preview(p, input={}, model=model(), input_budget=InputBudget(max=100), summary_store=store)
    rows = {c.representation: c for c in result.candidates}
    assert rows["summary"].rejection_reason == "unprepared" and rows["summary"].input_tokens is None
    assert rows["omitted"].selected
    assert store.count() == 0


def test_a_prepared_summary_is_selected_by_preview() -> None:
    doc = context("doc", system=big("Doc", 100))
    p = prompt("p", use=[droppable(summarizable(doc))])
    store = SummaryStore()
    strategy = summarize.extractive()
    store.put(artifact_key(doc.system, strategy, None), strategy, None, "Doc: short summary.")  # type: ignore[arg-type]
    result = preview(p, input={}, model=model(), input_budget=InputBudget(max=100), summary_store=store)
    assert chosen(result) == {"doc": "summary"}


def test_an_unprepared_summary_that_is_the_only_way_to_fit_gives_representation_unavailable() -> None:
    doc = context("doc", system=big("Doc", 100))
    p = prompt("p", use=[summarizable(doc)])
    result = preview(p, input={}, model=model(), input_budget=InputBudget(max=100), summary_store=SummaryStore())
    assert result.status == "over-limit" and result.error_code == "REPRESENTATION_UNAVAILABLE"


def test_the_breakdown_lists_every_contributor_largest_first() -> None:
    result = preview(catalog_prompt(), input={}, model=model())
    tokens = [c.tokens for c in result.breakdown]
    assert tokens == sorted(tokens, reverse=True)
    names = {c.contributor for c in result.breakdown}
    assert {"catalog", "log", "examples", "<prompt>", "<user-prompt>", "<tools>"} <= names
    assert sum(c.tokens for c in result.breakdown) in range(result.input_tokens - 2, result.input_tokens + 3)


def test_the_preview_serialises_without_contributor_content() -> None:
    result = preview(catalog_prompt(), input={}, model=model(), input_budget=InputBudget(max=700))
    data = result.to_dict()
    text = json.dumps(data)
    assert SECRET not in text
    for key in ("status", "model", "input_tokens", "max_input_tokens", "optimize_at", "adaptations", "candidates", "tools",
                "warnings", "measurement", "context_window", "output_reserve", "safety_margin", "overhead", "breakdown"):
        assert key in data


def test_an_unknown_model_gets_the_conservative_limits() -> None:
    result = preview(catalog_prompt(), input={})
    assert (result.max_input_tokens, result.context_window, result.safety_margin, result.overhead) == (5292, 8192, 820, 32)
    assert result.model is None and result.measurement == "estimated"


def test_a_bad_budget_in_preview_raises_type_error_naming_the_field() -> None:
    with pytest.raises(TypeError, match="max"):
        preview(catalog_prompt(), input={}, input_budget={"max": -5})
    with pytest.raises(TypeError, match="max_tokens"):
        preview(catalog_prompt(), input={}, max_tokens=0)


def test_the_exact_count_matches_a_recount_of_the_sent_request() -> None:
    m = model()
    result = generate(catalog_prompt(), input={}, model=m, input_budget=InputBudget(max=1200))
    sent = m.requests[0]
    counter = default_counter()
    recount = counter.count(sent.system) if sent.system else 0
    recount += sum(counter.count(json.dumps(msg, ensure_ascii=False, separators=(",", ":"), sort_keys=True)) for msg in sent.messages)
    recount += sum(counter.count(json.dumps(t.json_schema(), ensure_ascii=False, separators=(",", ":"), sort_keys=True)) for t in sent.tools)
    assert result.steps[0].request.input_tokens == recount <= 1200


async def test_apreview_awaits_async_callbacks() -> None:
    async def text(_: object) -> str:
        return big("Async", 50)

    p = prompt("p", use=[droppable(prefer(context("a", system=text), context("a-short", system="Short.")))])
    result = await apreview(p, input={}, model=model(), input_budget=InputBudget(max=20))
    assert chosen(result) == {"a": "authored"}


def test_preview_accepts_an_agent_and_merges_its_budget() -> None:
    from crux_devtools import agent

    a = agent("responder", prompt=catalog_prompt(), model=model(), input_budget=InputBudget(optimize_at=700, max=5000))
    result = preview(a, input={}, input_budget=InputBudget(max=1200))
    assert (result.optimize_at, result.max_input_tokens) == (700, 1200)
    assert result.model == "planner-test"


def test_a_ladder_nested_in_a_plain_context_is_a_contributor_and_its_owner_stays_exact() -> None:
    inner = context("inner", system=big("Inner", 80), priority=20)
    owner = context("owner", system="Owner rules.", use=[droppable(prefer(inner, context("inner-short", system="Inner, briefly.")))])
    p = prompt("p", use=[owner])
    result = preview(p, input={}, model=model(), input_budget=InputBudget(max=60))
    assert chosen(result) == {"inner": "authored"}
    m = model()
    generate(p, input={}, model=m, input_budget=InputBudget(max=60))
    assert m.requests[0].system == "Inner, briefly.\n\nOwner rules."


def test_every_rung_but_omission_keeps_the_primarys_tools() -> None:
    from crux_devtools.core.plan.summaries import artifact_key, summarize

    doc = context("doc", system=big("Doc", 200), tools=[lookup], priority=60)
    store = SummaryStore()
    strategy = summarize.extractive()
    store.put(artifact_key(doc.system, strategy, None), strategy, None, big("Summary", 40))  # type: ignore[arg-type]
    p = prompt("p", use=[droppable(offloadable(summarizable(prefer(doc, context("doc-index", system=big("Index", 60))))))])
    seen: dict[str, list[str]] = {}
    for budget in range(3600, 0, -40):
        result = preview(p, input={}, model=model(), input_budget=InputBudget(max=budget), summary_store=store)
        rung = chosen(result).get("doc", "full")
        seen.setdefault(rung, result.tools)
    assert set(seen) == {"full", "authored", "summary", "offload", "omitted"}
    for rung, tools in seen.items():
        assert ("lookup_sku" in tools) == (rung != "omitted"), rung
