"""What you see is what is sent: ``preview(...).sent`` is the request a model receives, token for token,
and a prompt's ``token_budget`` tells one story in ``inspect``, ``preview`` and ``generate``."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from crux_devtools import (
    RunError,
    ErrorInfo,
    InputBudget,
    ModelCapacityProfile,
    ModelRequest,
    OffloadStore,
    PlanningSession,
    ScriptedModel,
    SummaryStore,
    agent,
    context,
    default_counter,
    droppable,
    generate,
    offloadable,
    prefer,
    preview,
    prompt,
    summarizable,
    tool,
    tool_call,
)
from crux_devtools.core.plan.planner import message_tokens, tool_tokens


class Query(BaseModel):
    query: str


class Ticket(BaseModel):
    message: str


def sentences(label: str, n: int) -> str:
    return " ".join(f"{label} line {i} says the sync of folder {i} finished." for i in range(n))


lookup = tool("lookup", description="Look up an order", parameters=Query, execute=lambda q: {"order": q.query})
credit = tool("issue_credit", description="Issue a credit note", parameters=Query, execute=lambda q: "ok")

rules = context("rules", priority=100, system="## Rules\nNever promise refunds.")
billing = context("billing", priority=20, system="## Billing\nUse list_invoices first. " + sentences("billing", 30), tools=[credit])
catalog_full = context("catalog", priority=60, system="## Catalog\n" + sentences("catalog", 200), tools=[lookup])
catalog_index = context("catalog-index", system="## Catalog index\nNB-PRO, NB-AIR, NB-MINI.")
log = context("sync-log", priority=40, system="## Sync log\n" + sentences("log", 400))


def laddered(token_budget: int | None = None) -> object:
    return prompt(
        "helpdesk",
        system="You are the helpdesk.",
        input=Ticket,
        prompt=lambda i: i.message,
        use=[rules, billing, droppable(prefer(catalog_full, catalog_index)), offloadable(summarizable(log))],
        token_budget=token_budget,
    )


def exact_capacity() -> ModelCapacityProfile:
    return ModelCapacityProfile(1_000_000, 0, "exact")


def count_request(request: ModelRequest) -> int:
    """An independent count of a request, the way the planner prices it: system, then each message
    and each tool schema as compact JSON."""
    counter = default_counter()
    total = counter.count(request.system)
    total += sum(message_tokens(counter, m) for m in request.messages)
    total += sum(tool_tokens(counter, t) for t in request.tools)
    return total


def same_request(a: ModelRequest, b: ModelRequest) -> None:
    assert a.system == b.system
    assert a.messages == b.messages
    assert a.to_dict()["tools"] == b.to_dict()["tools"]
    assert a.max_tokens == b.max_tokens


@pytest.mark.parametrize("limit", [None, 3000, 1500, 1000])
def test_preview_sent_is_exactly_what_a_scripted_model_receives(limit: int | None) -> None:
    p = laddered()
    budget = InputBudget(max=limit) if limit else None
    model = ScriptedModel(["done"], capacity=exact_capacity())
    # generate prepares the summary rung when it needs it; preview only reads the store, so prepare
    # first, then compare. Offload handles are scoped to the run's session: name the same one.
    store = SummaryStore()
    generate(p, input={"message": "warm"}, model=ScriptedModel(["x"], capacity=exact_capacity()), input_budget=budget, summary_store=store)
    session = PlanningSession("s-compare")
    ask = {"message": "Where is my invoice?"}
    planned = preview(p, input=ask, model=model, input_budget=budget, max_tokens=200, summary_store=store, namespace=f"helpdesk/{session.id}")
    result = generate(p, input=ask, model=model, input_budget=budget, max_tokens=200, summary_store=store, session=session)
    assert planned.sent is not None and result.text == "done"
    same_request(planned.sent, model.requests[0])
    same_request(result.steps[0].sent, model.requests[0])
    assert planned.input_tokens == result.steps[0].request.input_tokens == count_request(model.requests[0])


def test_the_sent_request_carries_the_authored_alternative_and_the_offload_reference() -> None:
    p = laddered()
    planned = preview(p, input={"message": "hi"}, model=ScriptedModel([], capacity=ModelCapacityProfile(4000, 500, "exact")))
    assert planned.status == "fits" and planned.sent is not None
    chosen = {a.contributor: a.representation for a in planned.adaptations}
    assert chosen == {"catalog": "authored", "sync-log": "offload"}
    system = planned.sent.system
    assert "## Catalog index" in system and "catalog line 5 " not in system
    parts = {c.contributor: c for c in planned.contributions if c.span is not None}
    catalog = parts["catalog"]
    assert catalog.variant == "catalog-index"
    assert system[catalog.span[0] : catalog.span[1]] == catalog_index.system
    offloaded = parts["sync-log"]
    assert offloaded.handle and offloaded.handle in system[offloaded.span[0] : offloaded.span[1]]
    assert "read_offload" in [t["name"] for t in planned.sent.to_dict()["tools"]]
    # The spans tile the system text: the parts joined by blank lines are the text itself.
    ordered = sorted((c.span for c in planned.contributions if c.span), key=lambda s: s[0])
    assert "\n\n".join(system[a:b] for a, b in ordered) == system


def test_each_tool_is_sent_with_its_schema_and_priced_on_its_own() -> None:
    p = laddered()
    planned = preview(p, input={"message": "hi"}, model=ScriptedModel([], capacity=exact_capacity()))
    assert planned.sent is not None
    wire = planned.sent.to_dict()
    assert json.loads(json.dumps(wire)) == wire
    by_name = {t["name"]: t for t in wire["tools"]}
    assert by_name["lookup"]["parameters"]["properties"]["query"]["type"] == "string"
    assert by_name["lookup"]["description"] == "Look up an order"
    counter = default_counter()
    assert planned.tool_tokens == {t.name: tool_tokens(counter, t) for t in planned.sent.tools}
    assert sum(planned.tool_tokens.values()) == next(c.tokens for c in planned.contributions if c.kind == "tools")


def test_a_prompt_token_budget_drops_in_preview_and_generate_exactly_as_in_inspect() -> None:
    p = laddered(token_budget=120)
    inspection = p.inspect({"message": "hi"})
    dropped = [d.id for d in inspection.dropped_contexts]
    assert "billing" in dropped and "rules" not in dropped
    model = ScriptedModel(["ok"], capacity=exact_capacity())
    planned = preview(p, input={"message": "hi"}, model=model)
    result = generate(p, input={"message": "hi"}, model=model)
    assert [d.id for d in planned.dropped] == dropped == [d.id for d in result.steps[0].request.dropped]
    assert planned.token_budget == 120 == result.steps[0].request.token_budget
    received = model.requests[0]
    assert "## Billing" not in received.system and "## Rules" in received.system
    # The instruction left, and so did its capability.
    assert "issue_credit" not in [t.name for t in received.tools]
    assert "issue_credit" not in planned.tools and "issue_credit" not in inspection.tools


def test_a_call_token_budget_wins_over_the_prompt_one() -> None:
    p = laddered(token_budget=120)
    planned = preview(p, input={"message": "hi"}, model=ScriptedModel([], capacity=exact_capacity()), token_budget=100_000)
    assert planned.dropped == [] and planned.token_budget == 100_000
    assert planned.sent is not None and "## Billing" in planned.sent.system


def test_a_system_text_over_budget_even_after_drops_is_a_warning_not_an_error() -> None:
    p = prompt("tight", system=sentences("own", 40), use=[rules], token_budget=10)
    planned = preview(p, input={}, model=ScriptedModel([], capacity=exact_capacity()))
    assert planned.status == "fits"
    assert any("over token_budget=10 even after dropping" in w for w in planned.warnings)


def test_a_prompt_names_the_profile_it_is_planned_against() -> None:
    big_window = ModelCapacityProfile(128_000, 4_000, "estimated")
    p = prompt("long", system="S", use=[context("doc", system=sentences("doc", 900))], model=big_window)
    planned = preview(p, input={})
    assert planned.capacity_source == "profile" and planned.context_window == 128_000
    assert planned.status == "fits" and planned.adaptations == []
    unnamed = prompt("long-unnamed", system="S", use=[droppable(context("doc2", system=sentences("doc", 900)))])
    fallback = preview(unnamed, input={})
    assert fallback.capacity_source == "conservative" and fallback.max_input_tokens == 5292


def test_a_model_named_by_a_string_is_resolved_through_the_capacity_resolver() -> None:
    p = prompt("named", system="S", model="helpdesk-llm")
    profile = ModelCapacityProfile(32_768, 1_024, "estimated")
    planned = preview(p, input={}, capacity_resolver=lambda name: profile if name == "helpdesk-llm" else None)
    assert planned.model == "helpdesk-llm" and planned.capacity_source == "resolver" and planned.context_window == 32_768
    with pytest.raises(TypeError, match="something to plan against, not a model to call"):
        generate(p, input={})


def test_a_prompt_model_must_be_a_name_a_profile_or_an_adapter() -> None:
    with pytest.raises(TypeError, match="model must be a model name, a ModelCapacityProfile or a model adapter"):
        prompt("bad", system="S", model=42)
    with pytest.raises(ValueError, match="non-empty model name"):
        prompt("bad", system="S", model="  ")


def test_over_limit_preview_sends_nothing() -> None:
    p = prompt("huge", system=sentences("own", 200))
    planned = preview(p, input={}, input_budget=InputBudget(max=50), model=ScriptedModel([], capacity=exact_capacity()))
    assert planned.status == "over-limit" and planned.sent is None


def test_steps_record_usage_latency_and_a_structured_error_with_the_tool_traceback() -> None:
    def explode(_: Query) -> str:
        raise KeyError("missing [/] section")

    broken = tool("broken", description="Breaks", parameters=Query, execute=explode)
    p = prompt("p", prompt="go", tools=[broken])
    model = ScriptedModel([[tool_call("broken", {"query": "x"})]], capacity=exact_capacity())
    with pytest.raises(RunError) as caught:
        generate(agent("a", prompt=p, model=model))
    result = caught.value.result
    step = result.steps[0]
    assert result.stop_reason == "error" and isinstance(step.error, ErrorInfo)
    assert step.error.type == "KeyError" and "missing [/] section" in step.error.message
    assert step.error.traceback and "explode" in step.error.traceback
    assert result.error == step.error
    assert step.usage is None and step.latency_ms is not None and step.latency_ms >= 0
    data = step.to_dict()
    assert data["error"]["type"] == "KeyError" and data["sent"]["tools"][0]["name"] == "broken"
    assert json.loads(json.dumps(result.to_dict()))["steps"][0]["sent"]["messages"] == [{"role": "user", "content": "go"}]


def test_a_run_with_offloads_records_what_each_step_sent() -> None:
    fetch = tool(
        "fetch_history",
        description="Fetch the full sync history",
        parameters=Query,
        execute=lambda q: "\n".join(f"event {i} {q.query}" for i in range(2000)),
        output=offloadable(above_tokens=100),
    )
    p = prompt("p", system="S", prompt="go", tools=[fetch])
    model = ScriptedModel([[tool_call("fetch_history", {"query": "q"})], "done"], capacity=exact_capacity())
    result = generate(p, input={}, model=model, offload_store=OffloadStore())
    assert result.text == "done" and len(result.steps) == 2
    for step, received in zip(result.steps, model.requests, strict=True):
        same_request(step.sent, received)
    second = result.steps[1].sent
    assert "read_offload" in [t.name for t in second.tools]
    assert second.messages[-1]["role"] == "tool" and "event 1000 q" not in second.messages[-1]["content"]


@settings(max_examples=30, deadline=None)
@given(limit=st.integers(min_value=200, max_value=20_000), budget=st.one_of(st.none(), st.integers(min_value=5, max_value=3000)))
def test_input_tokens_always_count_exactly_the_sent_request(limit: int, budget: int | None) -> None:
    p = laddered(token_budget=budget)
    planned = preview(p, input={"message": "Where?"}, model=ScriptedModel([], capacity=exact_capacity()), input_budget=InputBudget(max=limit))
    if planned.status == "over-limit":
        assert planned.sent is None
        return
    assert planned.sent is not None
    assert planned.input_tokens == count_request(planned.sent) <= limit
