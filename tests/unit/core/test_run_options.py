"""The run API spelled once: ``generate`` and ``agenerate`` build one ``RunOptions`` and hand it on."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
from typing import Any

import pytest

from crux_devtools import (
    ModelCapacityProfile,
    OffloadStore,
    PlanningSession,
    RunError,
    ScriptedModel,
    SummaryStore,
    agenerate,
    context,
    generate,
    prompt,
    tool,
    tool_call,
)
from crux_devtools.core.run import runtime
from crux_devtools.core.run.runtime import RUN_OPTION_NAMES, GenerateResult, RunOptions, generate_with
from crux_devtools.core.tokens import default_counter


def keywords(fn: Any) -> dict[str, tuple[Any, Any]]:
    """A function's keyword-only parameters: name -> (default, annotation as written)."""
    return {p.name: (p.default, p.annotation) for p in inspect.signature(fn).parameters.values() if p.kind is p.KEYWORD_ONLY}


def test_generate_agenerate_and_run_options_agree_on_every_keyword_its_default_and_its_type() -> None:
    fields = {f.name: (f.default, f.type) for f in dataclasses.fields(RunOptions)}
    assert keywords(generate) == keywords(agenerate) == fields
    assert tuple(fields) == RUN_OPTION_NAMES and len(fields) >= 13
    assert list(inspect.signature(generate).parameters)[0] == list(inspect.signature(agenerate).parameters)[0] == "target"


def test_run_options_are_a_frozen_value_built_from_a_calls_keywords() -> None:
    call = {name: object() for name in RUN_OPTION_NAMES} | {"target": "not an option"}
    options = RunOptions.of(call)
    assert all(getattr(options, name) is call[name] for name in RUN_OPTION_NAMES)
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.max_steps = 3  # type: ignore[misc]
    with pytest.raises(TypeError):
        RunOptions(None)  # type: ignore[misc]  # keywords only: a positional value cannot land in the wrong knob


def test_generate_and_agenerate_hand_every_keyword_to_the_run_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[Any, RunOptions]] = []

    async def spy(target: Any, options: RunOptions) -> GenerateResult:
        seen.append((target, options))
        return GenerateResult("spied", [])

    monkeypatch.setattr(runtime, "generate_with", spy)
    passed: dict[str, Any] = {name: object() for name in RUN_OPTION_NAMES}
    assert generate("target", **passed).text == "spied"
    assert asyncio.run(agenerate("target", **passed)).text == "spied"
    assert len(seen) == 2
    for target, options in seen:
        assert target == "target" and all(getattr(options, name) is passed[name] for name in RUN_OPTION_NAMES)


def run_options_prompt() -> Any:
    from pydantic import BaseModel

    class Search(BaseModel):
        query: str

    search = tool("search", description="Search the docs", parameters=Search, execute=lambda p: f"found {p.query}")
    docs = context("docs", system="Docs about syncing files.", tools=[search])
    return prompt("run-options", system="You are support.", prompt="Where is my file?", use=[docs])


def every_knob(model: Any, session: PlanningSession) -> RunOptions:
    return RunOptions(
        input={}, model=model, input_budget={"max": 50_000}, max_tokens=321,
        messages=[{"role": "user", "content": "earlier question"}, {"role": "assistant", "content": "earlier answer"}],
        active_tools=["search"], counter=default_counter(), summary_store=SummaryStore(), offload_store=OffloadStore(),
        session=session, max_steps=3, token_budget=5_000, capacity_resolver=None,
    )


def scripted() -> ScriptedModel:
    return ScriptedModel([[tool_call("search", {"query": "sync"}, id="c1")], "Use the sync tab."], capacity=ModelCapacityProfile(1_000_000, 0, "exact"))


def test_a_run_from_the_options_value_is_the_run_generate_makes_with_the_same_keywords() -> None:
    by_keywords, by_options = scripted(), scripted()
    options = every_knob(by_options, PlanningSession("same"))
    direct = generate(run_options_prompt(), **{**{n: getattr(options, n) for n in RUN_OPTION_NAMES}, "model": by_keywords, "session": PlanningSession("same")})
    built = asyncio.run(generate_with(run_options_prompt(), options))
    assert direct.text == built.text == "Use the sync tab." and len(direct.steps) == len(built.steps) == 2
    assert [r.to_dict() for r in by_keywords.requests] == [r.to_dict() for r in by_options.requests]
    first = by_options.requests[0]
    assert first.max_tokens == 321 and [t.name for t in first.tools] == ["search"]
    assert [m["content"] for m in first.messages[:2]] == ["earlier question", "earlier answer"]
    assert built.steps[0].request.max_input_tokens == 50_000 and built.steps[0].request.token_budget == 5_000 and built.steps[1].request.previous_request_id == built.steps[0].request.id


def test_max_steps_from_the_options_ends_the_run_with_every_step_on_the_error() -> None:
    model = ScriptedModel([[tool_call("search", {"query": str(i)}, id=f"c{i}")] for i in range(5)], capacity=ModelCapacityProfile(1_000_000, 0, "exact"))
    with pytest.raises(RunError) as caught:
        asyncio.run(generate_with(run_options_prompt(), RunOptions(input={}, model=model, max_steps=2)))
    assert caught.value.stop_reason == "max_steps" and [s.index for s in caught.value.steps] == [0, 1]
    assert caught.value.steps == caught.value.result.steps and "steps" not in vars(caught.value)
