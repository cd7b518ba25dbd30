"""A generated agent for replay tests and ``benchmarks/bench_replay.py``: ladders of every kind
(prefer, summarize, offload, drop), tools with large results, a budget it outgrows, and
``record_generated`` to record one run of it into a project folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from crux_devtools import (
    InputBudget,
    ModelCapacityProfile,
    ScriptedModel,
    agent,
    context,
    droppable,
    generate,
    offload,
    offloadable,
    prefer,
    prompt,
    record_runs,
    summarizable,
    summarize,
    tool,
    tool_call,
)
from crux_devtools.core.record.replay import replay_step
from crux_devtools.core.record.runstore import RunStore


class Ask(BaseModel):
    question: str
    size: int = 40


class Q(BaseModel):
    n: int


def _log(n: int) -> str:
    return "\n".join(f"2026-11-29T{h % 24:02d}:{m:02d}:00Z WARN device=d{h} retry {m} of upload batch {h * 60 + m}" for h in range(n) for m in range(0, 60, 20))


fetch = tool("fetch", description="Fetch a big log page.", parameters=Q, execute=lambda q: _log(4 + q.n % 5), output=offloadable(above_tokens=120))
note = tool("note", description="A small note.", parameters=Q, execute=lambda q: {"n": q.n, "ok": True})
pin = tool("pin", description="An exact value, by reference.", parameters=Q, execute=lambda q: offload({"pinned": q.n}))
glossary_tool = tool("define", description="Define a word.", parameters=Q, execute=lambda q: "a word")

rules = context("rules", priority=90, system="Be brief. Cite the log line you rely on.")
nested = context("nested-policy", system="Refunds are decided by billing.", tools=[note])
policy = context("policy", priority=60, system="## Policy\nEscalate outages.", use=[nested])
catalog = droppable(prefer(context("catalog", priority=70, tools=[glossary_tool], system="## Catalog\n" + "\n".join(f"- SKU{i}: plan {i}, {i * 10} GB" for i in range(60))),
                           context("catalog-short", system="## Catalog\nSKU0..SKU59: plans 0..59.")))
history = offloadable(summarizable(context("history", priority=50, system=lambda i: "## History\n" + _log(i.size)), strategy=summarize.extractive(0.1)), above_tokens=200)
extras = droppable(context("extras", priority=10, system="## Examples\n" + "Q: where? A: here.\n" * 30))

ask_prompt = prompt("ask-generated", system="You are a careful agent.", prompt=lambda i: i.question, input=Ask,
                    use=[rules, policy, catalog, history, extras], tools=[fetch, pin])


def scripted_responses(steps: int) -> list[Any]:
    responses: list[Any] = []
    for k in range(steps - 1):
        calls = [tool_call("fetch", {"n": k})] if k % 3 == 0 else [tool_call("note", {"n": k}), tool_call("pin", {"n": k})] if k % 3 == 1 else [tool_call("define", {"n": k})]
        responses.append(calls)
    responses.append("done")
    return responses


def generated_agent(steps: int) -> Any:
    model = ScriptedModel(scripted_responses(steps), name="gen-model", capacity=ModelCapacityProfile(200_000, 1000, "estimated"))
    return agent("gen-agent", prompt=ask_prompt, model=model, input_budget=InputBudget(optimize_at=2500, max=40_000), max_steps=steps)


def record_generated(root: Path, steps: int) -> str:
    with record_runs(root):
        result = generate(generated_agent(steps), input={"question": "why do uploads stall?", "size": 40})
    assert result.stop_reason == "text" and len(result.steps) == steps
    runs = RunStore.for_project(root).list(target="gen-agent")
    return str(runs[0]["id"])


def assert_every_step_replays_exactly(store: RunStore, run_id: str) -> int:
    run = store.get(run_id)
    assert run is not None
    for step in run["steps"]:
        replayed = replay_step(store, run_id, step["index"])
        assert replayed.sent == step["sent"], f"step {step['index']} differs"
        assert replayed.identical
        assert replayed.input_tokens == step["request"]["input_tokens"]
        assert [a.to_dict() for a in replayed.adaptations] == step["request"]["adaptations"]
    return len(run["steps"])
