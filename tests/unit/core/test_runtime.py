"""The agent loop: one plan and one step per provider call, tools, offloads, summaries, epochs."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from crux_devtools import (
    ModelError,
    RunError,
    InputBudget,
    ModelCapacityProfile,
    OffloadStore,
    PlanningSession,
    RequestCompositionError,
    ScriptedModel,
    SummaryStore,
    agenerate,
    agent,
    context,
    droppable,
    generate,
    inspect_request,
    offload,
    offloadable,
    prefer,
    preview,
    prompt,
    summarizable,
    summarize,
    tool,
    tool_call,
)
from crux_devtools.core.plan import planner as planner_module
from crux_devtools.core.run.models import ModelResponse, ToolCall

SECRET = "CONFIDENTIAL-CONTENT"


class Query(BaseModel):
    query: str


def capacity() -> ModelCapacityProfile:
    return ModelCapacityProfile(1_000_000, 0, "exact")


def big(label: str, n: int) -> str:
    return " ".join(f"{label} sentence {i} mentions {SECRET} and fact {i}." for i in range(n))


search = tool("search", description="Search the docs", parameters=Query, execute=lambda p: f"found {p.query}")
audit = tool(
    "fetch_audit_log",
    description="Fetch the complete audit log",
    parameters=Query,
    execute=lambda p: "\n".join(f"audit {i} {p.query}" for i in range(3000)),
    output=offloadable(above_tokens=200),
)
forced = tool("fetch_record", description="Fetch one record", parameters=Query, execute=lambda p: offload({"id": p.query, "ok": True}))


def support_prompt(**kwargs: object) -> object:
    docs = context("docs", system=big("Docs", 80), tools=[search], priority=70)
    short = context("docs-short", system="Docs index: search for details.")
    return prompt("support", system="You are Nimbus support.", prompt="Where is my file?", use=[droppable(prefer(docs, short))], tools=[audit, forced], **kwargs)  # type: ignore[arg-type]


def test_each_provider_call_is_one_step_with_its_own_receipt() -> None:
    m = ScriptedModel([[tool_call("search", {"query": "sync"})], "Use the sync tab."], capacity=capacity())
    result = generate(support_prompt(), input={}, model=m)
    assert result.text == "Use the sync tab." and result.stop_reason == "text"
    assert [s.index for s in result.steps] == [0, 1] and len(m.requests) == 2
    first, second = (s.request for s in result.steps)
    assert first.id != second.id and second.previous_request_id == first.id and first.previous_request_id is None
    assert result.steps[0].tool_results[0].output == "found sync"
    sent = m.requests[1].messages
    assert sent[1]["role"] == "assistant" and sent[1]["tool_calls"][0]["function"]["name"] == "search"
    assert sent[2] == {"role": "tool", "tool_call_id": result.steps[0].tool_calls[0].id, "content": "found sync"}
    assert result.steps[1].request.input_tokens > result.steps[0].request.input_tokens
    json.dumps(result.to_dict())


def test_the_loop_plans_exactly_once_before_each_provider_call(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    original = planner_module.Planner.plan

    def spy(self: planner_module.Planner) -> planner_module.Plan:
        calls.append(1)
        return original(self)

    monkeypatch.setattr(planner_module.Planner, "plan", spy)
    m = ScriptedModel([[tool_call("search", {"query": "a"})], [tool_call("search", {"query": "b"})], "done"], capacity=capacity())
    generate(support_prompt(), input={}, model=m)
    assert len(calls) == len(m.requests) == 3


def test_a_large_tool_result_is_offloaded_and_readable_through_read_offload() -> None:
    store = OffloadStore()
    m = ScriptedModel([[tool_call("fetch_audit_log", {"query": "d-1"})], "checked"], capacity=capacity())
    result = generate(support_prompt(), input={}, model=m, offload_store=store)
    step = result.steps[0]
    tool_result = step.tool_results[0]
    assert tool_result.output.startswith("audit 0 d-1")  # the application gets the canonical value
    assert "read_offload" in tool_result.model_output and len(tool_result.model_output) < 2000
    assert [o.byte_size for o in step.offloads] == [len(tool_result.output.encode())]
    assert "read_offload" in [t.name for t in m.requests[1].tools]
    handle = step.offloads[0].handle
    reader = next(t for t in m.requests[1].tools if t.name == "read_offload")
    page = reader.execute(reader.parameters.model_validate({"handle": handle, "offset": 0, "limit": 50}))
    assert page["content"] == tool_result.output[:50]


def test_read_offload_called_by_the_model_returns_the_exact_slice_of_its_own_session_only() -> None:
    from crux_devtools.core.plan.offload_store import make_handle

    store = OffloadStore()
    own = make_handle("support/s-own", "tool:fetch_record:rec-1")
    m = ScriptedModel(
        [[tool_call("fetch_record", {"query": "r9"}, id="rec-1")], [tool_call("read_offload", {"handle": own, "limit": 8})], "ok"],
        capacity=capacity(),
    )
    result = generate(support_prompt(), input={}, model=m, offload_store=store, session=PlanningSession("s-own"))
    assert result.text == "ok"
    assert result.steps[0].offloads[0].handle == own
    assert result.steps[1].tool_results[0].output["content"] == '{"id":"r'
    thief = ScriptedModel([[tool_call("read_offload", {"handle": own})], "never"], capacity=capacity())
    with pytest.raises(RunError) as stolen:
        generate(support_prompt(), input={}, model=thief, offload_store=store, session=PlanningSession("s-other"), active_tools=["read_offload", "search"])
    assert stolen.value.stop_reason == "error" and "unknown offload handle" in str(stolen.value)


def test_offload_forces_a_reference_for_a_small_value() -> None:
    m = ScriptedModel([[tool_call("fetch_record", {"query": "r1"})], "ok"], capacity=capacity())
    step = generate(support_prompt(), input={}, model=m).steps[0]
    assert step.tool_results[0].output == {"id": "r1", "ok": True}
    assert "read_offload" in step.tool_results[0].model_output
    assert step.offloads[0].byte_size == len(b'{"id":"r1","ok":true}')


def test_a_tool_that_raises_stops_the_run_with_a_clear_error_and_writes_nothing() -> None:
    def boom(_: Query) -> str:
        raise RuntimeError("disk on fire")

    broken = tool("broken", description="Breaks", parameters=Query, execute=boom)
    p = prompt("p", prompt="go", tools=[forced, broken])
    store = OffloadStore()
    m = ScriptedModel([[tool_call("fetch_record", {"query": "x"}), tool_call("broken", {"query": "y"})], "never"], capacity=capacity())
    with pytest.raises(RunError) as caught:
        generate(p, input={}, model=m, offload_store=store)
    result = caught.value.result
    assert result.stop_reason == "error" and result.text is None and isinstance(caught.value.__cause__, RuntimeError)
    assert "tool 'broken' raised RuntimeError: disk on fire" in str(result.steps[-1].error or "") == str(caught.value)
    assert store.count() == 0
    assert len(m.requests) == 1


@pytest.mark.parametrize(
    ("response", "message"),
    [
        ([tool_call("nope", {})], "unknown tool 'nope'"),
        ([tool_call("search", {"wrong": 1})], "invalid arguments"),
        (ModelResponse(text=None, tool_calls=[]), "neither text nor tool calls"),
    ],
)
def test_malformed_model_answers_stop_the_run_with_a_step_error(response: object, message: str) -> None:
    m = ScriptedModel([response], capacity=capacity())  # type: ignore[list-item]
    with pytest.raises(RunError) as caught:
        generate(support_prompt(), input={}, model=m)
    assert caught.value.stop_reason == "error" and len(caught.value.steps) == 1
    assert message in str(caught.value.steps[0].error or "")


def test_a_failing_model_is_a_step_error() -> None:
    m = ScriptedModel([], capacity=capacity())
    with pytest.raises(RunError) as caught:
        generate(support_prompt(), input={}, model=m)
    result = caught.value.result
    assert result.stop_reason == "error" and "ran out of responses" in str(result.error or "")
    assert caught.value.error.type == "ModelError" and isinstance(caught.value.__cause__, ModelError)
    assert len(result.steps) == 1 and result.steps[0].request is not None


def test_max_steps_stops_the_loop() -> None:
    m = ScriptedModel([[tool_call("search", {"query": str(i)})] for i in range(5)], capacity=capacity())
    a = agent("a", prompt=support_prompt(), model=m, max_steps=2)
    with pytest.raises(RunError, match="max_steps=2") as caught:
        generate(a, input={})
    assert caught.value.stop_reason == "max_steps" and len(caught.value.steps) == 2 and len(m.requests) == 2


def test_too_large_raises_before_any_dispatch_without_content() -> None:
    m = ScriptedModel(["never"], capacity=capacity())
    p = prompt("p", system=big("Rules", 100), prompt="hi")
    with pytest.raises(RequestCompositionError) as info:
        generate(p, input={}, model=m, input_budget={"max": 100})
    assert info.value.code == "REQUEST_TOO_LARGE" and m.requests == []
    assert info.value.request_id
    assert SECRET not in str(info.value) + json.dumps(info.value.to_dict())


def test_generate_prepares_an_extractive_summary_and_selects_it() -> None:
    doc = context("doc", system=big("Doc", 60))
    p = prompt("p", prompt="hi", use=[droppable(summarizable(doc))])
    store = SummaryStore()
    budget = InputBudget(max=500)
    before = preview(p, input={}, input_budget=budget, model=ScriptedModel([], capacity=capacity()), summary_store=store)
    assert {a.representation for a in before.adaptations} == {"omitted"}
    m = ScriptedModel(["ok"], capacity=capacity())
    result = generate(p, input={}, model=m, input_budget=budget, summary_store=store)
    assert [a.representation for a in result.steps[0].request.adaptations] == ["summary"]
    assert store.count() == 1
    assert "[summary of doc]" in m.requests[0].system
    after = preview(p, input={}, input_budget=budget, model=ScriptedModel([], capacity=capacity()), summary_store=store)
    assert [a.representation for a in after.adaptations] == ["summary"]


def test_a_failing_summary_model_leaves_the_store_empty_and_another_rung_is_chosen() -> None:
    summary_model = ScriptedModel([], name="summarizer")
    doc = context("doc", system=big("Doc", 60))
    p = prompt("p", prompt="hi", use=[droppable(summarizable(doc, model=summary_model, strategy=summarize.hierarchical()))])
    store = SummaryStore()
    m = ScriptedModel(["ok"], capacity=capacity())
    result = generate(p, input={}, model=m, input_budget={"max": 500}, summary_store=store)
    receipt = result.steps[0].request
    assert [a.representation for a in receipt.adaptations] == ["omitted"]
    assert any("summarizer" in w and "could not be prepared" in w for w in receipt.warnings)
    assert store.count() == 0 and result.text == "ok"


def test_a_hierarchical_summary_uses_the_summary_model() -> None:
    summary_model = ScriptedModel(["Doc in brief."], name="summarizer")
    doc = context("doc", system=big("Doc", 60))
    p = prompt("p", prompt="hi", use=[droppable(summarizable(doc, model=summary_model))])
    m = ScriptedModel(["ok"], capacity=capacity())
    generate(p, input={}, model=m, input_budget={"max": 500}, summary_store=SummaryStore())
    assert "Doc in brief." in m.requests[0].system
    assert summary_model.requests[0].messages[0]["content"] == doc.system


def test_on_miss_fail_raises_representation_unavailable_before_dispatch() -> None:
    doc = context("doc", system=big("Doc", 60))
    p = prompt("p", prompt="hi", use=[droppable(summarizable(doc, on_miss="fail"))])
    m = ScriptedModel(["never"], capacity=capacity())
    with pytest.raises(RequestCompositionError) as info:
        generate(p, input={}, model=m, input_budget={"max": 500}, summary_store=SummaryStore())
    assert info.value.code == "REPRESENTATION_UNAVAILABLE" and m.requests == []


def test_on_miss_skip_never_prepares() -> None:
    doc = context("doc", system=big("Doc", 60))
    p = prompt("p", prompt="hi", use=[droppable(summarizable(doc, on_miss="skip"))])
    store = SummaryStore()
    result = generate(p, input={}, model=ScriptedModel(["ok"], capacity=capacity()), input_budget={"max": 500}, summary_store=store)
    assert [a.representation for a in result.steps[0].request.adaptations] == ["omitted"] and store.count() == 0


def test_a_contributor_offload_is_written_before_dispatch_and_recorded_on_the_step() -> None:
    log = context("log", system="\n".join(f"12:{i % 60:02d} INFO job {i} done" for i in range(800)))
    p = prompt("p", prompt="hi", use=[offloadable(log)])
    store = OffloadStore()
    result = generate(p, input={}, model=ScriptedModel(["ok"], capacity=capacity()), input_budget={"max": 600}, offload_store=store)
    step = result.steps[0]
    assert [a.representation for a in step.request.adaptations] == ["offload"]
    assert step.offloads[0].byte_size == len(log.system.encode())  # type: ignore[union-attr]
    assert store.count() == 1


def test_fidelity_does_not_rise_within_an_epoch_and_a_new_budget_starts_a_new_epoch() -> None:
    session = PlanningSession()
    p = support_prompt()
    history = [{"role": "user", "content": big("History", 60)}]
    budget = InputBudget(max=1500)
    assert preview(p, input={}, model=ScriptedModel([], capacity=capacity()), input_budget=budget).adaptations == []
    tight = generate(p, input={}, model=ScriptedModel(["a"], capacity=capacity()), input_budget=budget, messages=history, session=session)
    assert [a.representation for a in tight.steps[0].request.adaptations] == ["authored"]
    roomy = generate(p, input={}, model=ScriptedModel(["b"], capacity=capacity()), input_budget=budget, session=session)
    receipt = roomy.steps[0].request
    assert receipt.epoch == 1 and [a.representation for a in receipt.adaptations] == ["authored"]
    full_row = next(c for c in receipt.candidates if c.representation == "full")
    assert full_row.rejection_reason == "over-limit" and "epoch" in (full_row.detail or "")
    fresh = generate(p, input={}, model=ScriptedModel(["c"], capacity=capacity()), input_budget=InputBudget(max=1501), session=session)
    assert fresh.steps[0].request.epoch == 2 and fresh.steps[0].request.adaptations == []


def test_inspect_request_lists_candidates_and_a_breakdown_largest_first() -> None:
    m = ScriptedModel(["ok"], capacity=capacity())
    receipt = generate(support_prompt(), input={}, model=m, input_budget={"max": 400}).steps[0].request
    inspection = inspect_request(receipt)
    assert {c.representation for c in inspection.candidates} == {"full", "authored", "omitted"}
    tokens = [c.tokens for c in inspection.breakdown]
    assert tokens == sorted(tokens, reverse=True)
    assert SECRET not in json.dumps(inspection.to_dict())
    with pytest.raises(TypeError):
        inspect_request("not a receipt")  # type: ignore[arg-type]


async def test_agenerate_awaits_async_tools_and_callbacks() -> None:
    async def find(p: Query) -> str:
        return f"async {p.query}"

    async def system(_: object) -> str:
        return "Async system."

    finder = tool("find", description="Find", parameters=Query, execute=find)
    p = prompt("p", system=system, prompt="hi", tools=[finder])
    m = ScriptedModel([[tool_call("find", {"query": "q"})], "done"], capacity=capacity())
    result = await agenerate(p, input={}, model=m)
    assert result.text == "done" and result.steps[0].tool_results[0].output == "async q"
    assert m.requests[0].system == "Async system."


def test_generate_without_a_model_raises_type_error() -> None:
    with pytest.raises(TypeError, match="model"):
        generate(support_prompt(), input={})


def test_agent_checks_its_arguments() -> None:
    with pytest.raises(TypeError, match="max_steps"):
        agent("a", prompt=support_prompt(), model=None, max_steps=0)
    with pytest.raises(TypeError, match="optimize_at"):
        agent("a", prompt=support_prompt(), model=None, input_budget={"optimize_at": -1})
    with pytest.raises(TypeError, match="prompt"):
        agent("a", prompt="text", model=None)  # type: ignore[arg-type]


def test_tool_calls_on_the_step_are_the_models_calls() -> None:
    m = ScriptedModel([[ToolCall(id="c1", name="search", arguments={"query": "z"})], "fin"], capacity=capacity())
    result = generate(support_prompt(), input={}, model=m)
    assert result.steps[0].tool_calls[0].id == "c1" and result.steps[0].tool_results[0].call_id == "c1"


def test_caller_history_comes_before_the_user_prompt_and_counts_as_messages() -> None:
    history = [{"role": "user", "content": "Earlier question."}, {"role": "assistant", "content": "Earlier answer."}]
    m = ScriptedModel(["ok"], capacity=capacity())
    result = generate(support_prompt(), input={}, model=m, messages=history)
    assert [x["content"] for x in m.requests[0].messages] == ["Earlier question.", "Earlier answer.", "Where is my file?"]
    kinds = {c.kind for c in result.steps[0].request.contributions}
    assert {"messages", "user-prompt"} <= kinds
    with pytest.raises(TypeError, match="messages"):
        generate(support_prompt(), input={}, model=m, messages="hello")  # type: ignore[arg-type]


def test_each_step_records_when_its_model_call_began_and_how_long_its_tools_took() -> None:
    m = ScriptedModel([[tool_call("fetch_audit_log", {"query": "d-1"})], "checked"], capacity=capacity())
    first, second = generate(support_prompt(), input={}, model=m).steps
    assert first.started_ms is not None and first.latency_ms is not None and first.tool_ms is not None and first.tool_ms >= 0
    assert second.tool_ms is None  # the answer led to no tool call
    assert second.started_ms is not None and second.started_ms >= first.started_ms + first.latency_ms + first.tool_ms
    assert set(("started_ms", "tool_ms")) <= set(first.to_dict())
