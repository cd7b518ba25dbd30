"""``generate`` has one failure story: it returns only with text; every failure raises an error that
carries the run so far (``result``, ``steps``) and is recorded; a tool may ask for its errors to be
told to the model instead."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from pydantic import BaseModel

from crux_devtools import (
    CruxError,
    InputBudget,
    InputValidationError,
    ModelCapacityProfile,
    OpenAICompatibleModel,
    RequestCompositionError,
    RunError,
    ScriptedModel,
    agent,
    generate,
    prompt,
    record_runs,
    tool,
    tool_call,
)


class Query(BaseModel):
    query: str


class Question(BaseModel):
    question: str = "Where is my parcel?"


def _explode(args: Query) -> str:
    raise ConnectionError(f"tracking service down for {args.query}")


CAPACITY = ModelCapacityProfile(8000, 500, "exact")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_partial_result_is_declared_on_the_error_class_not_patched_on() -> None:
    assert "result" in CruxError.__annotations__ and CruxError.result is None
    assert isinstance(CruxError.__dict__["steps"], property)
    assert issubclass(RunError, CruxError) and RequestCompositionError("REQUEST_TOO_LARGE", "x").steps == []


def test_an_unreachable_model_raises_with_the_step_so_far_instead_of_returning_none(tmp_path: Path) -> None:
    model = OpenAICompatibleModel(f"http://127.0.0.1:{free_port()}/v1", "gpt-test", api_key="k", capacity=CAPACITY, timeout=30)
    p = prompt("ask", system="Be brief.", input=Question, prompt=lambda i: i.question, model=model)
    with record_runs(tmp_path), pytest.raises(RunError) as caught:
        generate(p, input={}, input_budget=InputBudget(max=2000))
    error = caught.value
    assert error.stop_reason == "error" and error.error.type == "ModelError" and error.__cause__ is not None
    assert error.result.text is None and [s.index for s in error.steps] == [0]
    assert error.steps[0].sent.system == "Be brief." and error.steps[0].error == error.error
    [run] = [r for r in _runs(tmp_path)]
    assert run["status"] == "error" and run["error"]["type"] == "ModelError" and len(run["steps"]) == 1


def test_a_raising_tool_ends_the_run_with_an_error_carrying_every_step(tmp_path: Path) -> None:
    track = tool("track", description="Track a parcel.", parameters=Query, execute=_explode)
    p = prompt("ask", system="Be brief.", input=Question, prompt=lambda i: i.question, tools=[track])
    model = ScriptedModel([[tool_call("track", {"query": "P-1"})], "never"], capacity=CAPACITY)
    with record_runs(tmp_path), pytest.raises(RunError, match="tool 'track' raised ConnectionError: tracking service down for P-1") as caught:
        generate(agent("support", prompt=p, model=model))
    assert isinstance(caught.value.__cause__, ConnectionError) and len(model.requests) == 1
    assert caught.value.steps[0].tool_calls[0].name == "track" and caught.value.steps[0].error.type == "ConnectionError"
    [run] = _runs(tmp_path)
    assert run["status"] == "error" and run["error"]["type"] == "ConnectionError" and run["steps"][0]["error"]["type"] == "ConnectionError"


def test_a_tool_that_asks_for_it_has_its_error_told_to_the_model_and_the_run_goes_on() -> None:
    track = tool("track", description="Track a parcel.", parameters=Query, execute=_explode, on_error="tell_model")
    p = prompt("ask", system="Be brief.", input=Question, prompt=lambda i: i.question, tools=[track])
    model = ScriptedModel([[tool_call("track", {"query": "P-1"})], [tool_call("track", {"bad": 1})], "Tracking is down; try later."], capacity=CAPACITY)
    result = generate(agent("support", prompt=p, model=model))
    assert result.text == "Tracking is down; try later." and result.stop_reason == "text"
    told = [m["content"] for m in model.requests[1].messages if m.get("role") == "tool"]
    assert told == ["error: tool 'track' raised ConnectionError: tracking service down for P-1"]
    first, second = result.steps[0].tool_results[0], result.steps[1].tool_results[0]
    assert first.error is not None and first.error.type == "ConnectionError" and first.output is None
    assert second.error is not None and second.error.type == "InvalidToolArguments"
    with pytest.raises(ValueError, match="on_error must be one of 'raise', 'tell_model'"):
        tool("t", description="", parameters=Query, execute=_explode, on_error="ignore")  # type: ignore[arg-type]


def test_planning_and_input_failures_carry_a_result_too_and_are_recorded(tmp_path: Path) -> None:
    tiny = ModelCapacityProfile(300, 100, "exact")
    huge = prompt("huge", system="word " * 2000, model=ScriptedModel(["never"], capacity=tiny))
    with record_runs(tmp_path):
        with pytest.raises(RequestCompositionError) as too_large:
            generate(huge)
        with pytest.raises(InputValidationError) as bad_input:
            generate(prompt("ask", input=Question, prompt=lambda i: i.question, model=ScriptedModel(["x"])), input={"question": 3})
    for caught in (too_large, bad_input):
        assert caught.value.result is not None and caught.value.result.text is None and caught.value.steps == []
        assert caught.value.result.error.type == type(caught.value).__name__
    assert sorted(r["error"]["type"] for r in _runs(tmp_path)) == ["InputValidationError", "RequestCompositionError"]


def _runs(folder: Path) -> list[dict]:
    from crux_devtools.core.record.runstore import RunStore

    store = RunStore.for_project(folder)
    try:
        return [store.get(r["id"]) for r in store.list()]
    finally:
        store.close()
