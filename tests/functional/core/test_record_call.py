"""record_call: a call the application makes itself through the real ``openai`` SDK, recorded as one
run with the planned request, its receipt, the provider's answer, usage and latency; and the planned
request in each provider's wire shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openai
import pytest
from pydantic import BaseModel

from chat_server import ChatServer, completion, wire_tool_call
from crux_devtools import ModelCapacityProfile, ModelRequest, context, prompt, record_call, record_runs, tool
from crux_devtools.core.record.runstore import RunStore


class City(BaseModel):
    city: str


lookup = tool("lookup", description="Look up the weather of a city.", parameters=City, execute=lambda a: f"12 °C in {a.city}")


class Question(BaseModel):
    question: str


def support() -> Any:
    return prompt(
        "support", system="You answer weather questions.", input=Question, prompt=lambda i: i.question,
        use=[context("units", system="Use degrees Celsius.")], tools=[lookup],
    )


def only_run(root: Path) -> dict[str, Any]:
    with RunStore.for_project(root, create=False) as store:
        (summary,) = store.list()
        run = store.get(summary["id"])
    assert run is not None
    return run


def test_an_openai_sdk_call_is_recorded_with_the_planned_request_its_receipt_and_the_answer(tmp_path: Path) -> None:
    with ChatServer() as server:
        body = completion({"content": "It is 12 °C."}, model="gpt-4o-mini")
        body["usage"] = {"prompt_tokens": 120, "completion_tokens": 7, "total_tokens": 127, "prompt_tokens_details": {"cached_tokens": 64}}
        server.reply_json(body)
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
        with record_call(support(), input={"question": "Weather in Oslo?"}, model="gpt-4o-mini", dir=tmp_path) as call:
            resp = client.chat.completions.create(**call.to_openai())
            answer = call.response(resp)
        sent = server.received[0].body
    assert answer.text == "It is 12 °C."
    # What the SDK put on the wire is the planned request, as to_openai() shaped it.
    assert sent["model"] == "gpt-4o-mini"
    assert sent["messages"][0] == {"role": "system", "content": call.sent.system}
    assert "Use degrees Celsius." in sent["messages"][0]["content"]
    assert sent["messages"][1:] == call.sent.to_dict()["messages"]
    assert sent["tools"] == [{"type": "function", "function": {"name": "lookup", "description": "Look up the weather of a city.", "parameters": lookup.to_dict()["parameters"]}}]
    run = only_run(tmp_path)
    assert (run["target"], run["status"], run["origin"], run["model"], run["text"]) == ("support", "ok", "app", "gpt-4o-mini", "It is 12 °C.")
    assert run["input"] == {"question": "Weather in Oslo?"}
    assert run["usage"] == {"input_tokens": 120, "output_tokens": 7, "cache_read_tokens": 64}
    (step,) = run["steps"]
    assert step["sent"] == json.loads(json.dumps(call.sent.to_dict()))
    assert step["request"]["id"] == call.receipt.id and step["request"]["input_tokens"] == call.receipt.input_tokens > 0
    assert [c["contributor"] for c in step["request"]["contributions"]] == [c.contributor for c in call.receipt.contributions]
    assert step["usage"] == {"input_tokens": 120, "output_tokens": 7, "cache_read_tokens": 64}
    assert isinstance(step["latency_ms"], float) and step["latency_ms"] >= 0
    assert step["provider_response"]["choices"][0]["message"]["content"] == "It is 12 °C."
    assert step["error"] is None


def test_tool_calls_from_the_sdk_are_recorded_and_a_failed_sdk_call_is_a_failed_run_the_app_still_sees(tmp_path: Path) -> None:
    with ChatServer() as server:
        server.reply_tool_calls([wire_tool_call("lookup", '{"city": "Oslo"}', id="call_abc")])
        server.reply_status(500, "upstream exploded")
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
        with record_call(support(), input={"question": "Oslo?"}, model="gpt-4o-mini", dir=tmp_path) as call:
            answer = call.response(client.chat.completions.create(**call.to_openai()))
        assert [(c.id, c.name, c.arguments) for c in answer.tool_calls] == [("call_abc", "lookup", {"city": "Oslo"})]
        with pytest.raises(openai.InternalServerError):
            with record_call(support(), input={"question": "Bergen?"}, model="gpt-4o-mini", dir=tmp_path) as call:
                call.response(client.chat.completions.create(**call.to_openai()))
    with RunStore.for_project(tmp_path, create=False) as store:
        failed, called = (store.get(s["id"]) for s in store.list())
    assert called is not None and failed is not None
    assert called["status"] == "ok" and called["steps"][0]["tool_calls"] == [{"id": "call_abc", "name": "lookup", "arguments": {"city": "Oslo"}}]
    assert failed["status"] == "error" and failed["error"]["type"] == "InternalServerError"
    assert "500" in failed["steps"][0]["error"]["message"] and failed["steps"][0]["latency_ms"] is None
    assert failed["steps"][0]["sent"]["messages"][-1]["content"] == "Bergen?"


def test_a_block_without_a_response_and_a_request_that_does_not_fit_are_recorded_as_errors(tmp_path: Path) -> None:
    with record_call(support(), input={"question": "Oslo?"}, model="gpt-4o-mini", dir=tmp_path):
        pass
    tiny = ModelCapacityProfile(context_window=60, default_output_reserve=10)
    with pytest.raises(Exception) as raised:
        with record_call(support(), input={"question": "Oslo? " * 200}, model=tiny, dir=tmp_path):
            raise AssertionError("the block must not run when nothing fits")
    assert type(raised.value).__name__ == "RequestCompositionError"
    with RunStore.for_project(tmp_path, create=False) as store:
        too_big, silent = store.list()
    assert silent["error"]["type"] == "NoResponse" and silent["status"] == "error"
    assert too_big["error"]["type"] == "RequestCompositionError" and too_big["step_count"] == 0


def test_without_dir_the_run_goes_to_what_record_runs_turned_on(tmp_path: Path) -> None:
    with ChatServer() as server, record_runs(tmp_path):
        server.reply_text("hi")
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
        with record_call(support(), input={"question": "Oslo?"}, model="gpt-4o-mini") as call:
            call.response(client.chat.completions.create(**call.to_openai()))
    assert only_run(tmp_path)["text"] == "hi"


def tool_traffic() -> ModelRequest:
    return ModelRequest(
        system="Be brief.",
        messages=[
            {"role": "user", "content": "Weather in Oslo and Bergen?"},
            {"role": "assistant", "content": "Looking.", "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": '{"city": "Oslo"}'}},
                {"id": "c2", "type": "function", "function": {"name": "lookup", "arguments": '{"city": "Bergen"}'}},
            ]},
            {"role": "tool", "tool_call_id": "c1", "content": "12 °C"},
            {"role": "tool", "tool_call_id": "c2", "content": "9 °C"},
        ],
        tools=[lookup],
        max_tokens=300,
    )


def test_to_anthropic_puts_tool_traffic_in_blocks_and_results_in_one_user_turn() -> None:
    body = tool_traffic().to_anthropic("claude-sonnet-4-5")
    assert body["model"] == "claude-sonnet-4-5" and body["system"] == "Be brief." and body["max_tokens"] == 300
    assert body["tools"] == [{"name": "lookup", "description": "Look up the weather of a city.", "input_schema": lookup.to_dict()["parameters"]}]
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Weather in Oslo and Bergen?"}]},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Looking."},
            {"type": "tool_use", "id": "c1", "name": "lookup", "input": {"city": "Oslo"}},
            {"type": "tool_use", "id": "c2", "name": "lookup", "input": {"city": "Bergen"}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "c1", "content": "12 °C"},
            {"type": "tool_result", "tool_use_id": "c2", "content": "9 °C"},
        ]},
    ]
    assert ModelRequest("", [{"role": "user", "content": "hi"}], []).to_anthropic(default_max_tokens=99) == {
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}], "max_tokens": 99,
    }


def test_to_openai_leaves_out_what_is_not_planned() -> None:
    request = tool_traffic()
    body = request.to_openai("gpt-4o")
    assert body["model"] == "gpt-4o" and body["max_tokens"] == 300 and body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert body["messages"][2]["tool_calls"][0]["function"]["arguments"] == '{"city": "Oslo"}'
    assert set(ModelRequest("s", [], []).to_openai()) == {"messages"}
