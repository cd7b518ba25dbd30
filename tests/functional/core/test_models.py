"""Model adapters: the scripted model replays offline; the HTTP model speaks chat-completions to a real
local server and turns every fault into a ModelError that says what went wrong."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import httpx
import pytest
from pydantic import BaseModel

from chat_server import ChatServer, ScriptedAnswer, completion, wire_tool_call
from crux_devtools import (
    CruxError,
    ModelError,
    ModelRequest,
    ModelResponse,
    OpenAICompatibleModel,
    ScriptedModel,
    ToolCall,
    tool,
    tool_call,
)

SECRET = "sk-test-do-not-show-0123456789"


class LookupArgs(BaseModel):
    city: str


LOOKUP = tool("lookup", description="Look up the weather of a city.", parameters=LookupArgs, execute=lambda a: a.city)


def request(*, tools: list | None = None, max_tokens: int | None = None, messages: list | None = None) -> ModelRequest:
    return ModelRequest(
        system="You are terse.",
        messages=messages if messages is not None else [{"role": "user", "content": "Weather in Oslo?"}],
        tools=list(tools or []),
        max_tokens=max_tokens,
    )


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with ChatServer() as s:
        yield s


@pytest.fixture
def no_env_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


# --- tool_call and value types ---------------------------------------------------------------------


def test_tool_call_ids_default_to_distinct_call_n_ids_and_an_explicit_id_is_kept():
    a, b = tool_call("lookup", {"city": "Oslo"}), tool_call("lookup")
    assert a.id != b.id
    assert a.id.startswith("call_") and a.id[len("call_"):].isdigit()
    assert int(b.id[len("call_"):]) > int(a.id[len("call_"):])
    assert b.arguments == {}
    assert tool_call("lookup", id="abc").id == "abc"


@pytest.mark.parametrize("bad", ["", "  ", None, 3])
def test_tool_call_with_an_empty_or_non_string_name_is_rejected(bad):
    with pytest.raises(ValueError, match="non-empty string"):
        tool_call(bad)


def test_tool_call_arguments_must_be_a_mapping():
    with pytest.raises(TypeError, match="arguments must be a dict"):
        tool_call("lookup", ["Oslo"])  # type: ignore[arg-type]


def test_response_to_message_is_an_assistant_message_with_json_string_arguments():
    call = tool_call("lookup", {"city": "Oslo"}, id="c1")
    message = ModelResponse(text=None, tool_calls=[call]).to_message()
    assert message == {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": '{"city": "Oslo"}'}}],
    }
    assert ModelResponse(text="hi", tool_calls=[]).to_message() == {"role": "assistant", "content": "hi"}


def test_request_to_dict_is_the_wire_shape_with_each_tool_schema():
    data = request(tools=[LOOKUP], max_tokens=20).to_dict()
    assert json.loads(json.dumps(data)) == data
    assert data["max_tokens"] == 20 and data["system"] == "You are terse."
    assert data["tools"] == [
        {"name": "lookup", "description": "Look up the weather of a city.", "parameters": LOOKUP.parameters.model_json_schema()}
    ]
    assert data["tools"][0]["parameters"]["required"] == ["city"]


def test_model_error_is_a_crux_error_and_rejects_unknown_kinds():
    assert issubclass(ModelError, CruxError)
    with pytest.raises(ValueError, match="unknown model error kind 'boom'"):
        ModelError("x", kind="boom")  # type: ignore[arg-type]


# --- ScriptedModel ---------------------------------------------------------------------------------


def test_scripted_model_replays_answers_in_order_and_records_each_request():
    model = ScriptedModel([[tool_call("lookup", {"city": "Oslo"}, id="c1")], "It is sunny."])
    first = model.complete(request(tools=[LOOKUP]))
    second = model.complete(request(messages=[{"role": "user", "content": "again"}]))

    assert first.text is None and first.tool_calls == [ToolCall(id="c1", name="lookup", arguments={"city": "Oslo"})]
    assert second == ModelResponse(text="It is sunny.", tool_calls=[])
    assert [r.messages[0]["content"] for r in model.requests] == ["Weather in Oslo?", "again"]
    assert model.requests[0].tools == [LOOKUP] and model.requests[1].tools == []
    assert model.remaining == 0


def test_scripted_model_keeps_a_snapshot_of_the_messages_it_was_sent():
    model = ScriptedModel(["a", "b"])
    messages = [{"role": "user", "content": "first"}]
    model.complete(request(messages=messages))
    messages.append({"role": "assistant", "content": "a"})
    messages[0]["content"] = "changed"
    assert model.requests[0].messages == [{"role": "user", "content": "first"}]


def test_scripted_model_raises_model_error_when_it_runs_out_and_still_records_the_request():
    model = ScriptedModel(["one", "two"])
    model.complete(request())
    model.complete(request())
    with pytest.raises(ModelError, match="scripted model ran out of responses after 2 calls") as info:
        model.complete(request())
    assert info.value.kind == "exhausted" and info.value.model == "scripted"
    assert len(model.requests) == 3


async def test_scripted_model_answers_asynchronously_too():
    model = ScriptedModel(["async answer"], name="demo")
    response = await model.acomplete(request())
    assert response.text == "async answer"
    assert len(model.requests) == 1
    with pytest.raises(ModelError, match="after 1 calls"):
        await model.acomplete(request())


@pytest.mark.parametrize(
    ("responses", "error", "message"),
    [
        ("just text", TypeError, "not a single string"),
        ([3], TypeError, "response #0 must be a string"),
        (["ok", ["lookup"]], TypeError, "response #1 must hold tool_call"),
        ([[]], ValueError, "response #0 is an empty list"),
    ],
)
def test_scripted_model_rejects_responses_it_cannot_replay(responses, error, message):
    with pytest.raises(error, match=message):
        ScriptedModel(responses)


def test_scripted_model_to_dict_names_the_model_and_counts_calls():
    model = ScriptedModel(["x"], name="demo")
    model.complete(request())
    assert model.to_dict() == {"kind": "scripted", "name": "demo", "responses": 1, "calls": 1, "capacity": None}


# --- OpenAICompatibleModel against a real local server ---------------------------------------------


def test_text_answer_is_parsed_and_the_wire_body_has_system_first_and_no_tools_key(server, no_env_key):
    server.reply_text("Sunny, 12 °C.")
    model = OpenAICompatibleModel(server.base_url, "test-model")
    response = model.complete(request(max_tokens=64))

    assert response == ModelResponse(text="Sunny, 12 °C.", tool_calls=[], usage={"input_tokens": 1, "output_tokens": 1})
    [received] = server.received
    assert received.path == "/v1/chat/completions"
    assert received.body == {
        "model": "test-model",
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Weather in Oslo?"},
        ],
        "max_tokens": 64,
    }
    assert "tools" not in received.body
    assert "authorization" not in received.headers


def test_offered_tools_are_sent_as_function_schemas_and_max_tokens_is_omitted_when_unset(server):
    server.reply_text("ok")
    OpenAICompatibleModel(server.base_url, "test-model").complete(request(tools=[LOOKUP]))
    body = server.received[0].body
    assert body["tools"] == [LOOKUP.json_schema()]
    assert body["tools"][0]["function"]["parameters"]["properties"]["city"]["type"] == "string"
    assert "max_tokens" not in body


async def test_async_complete_sends_the_same_body_and_parses_the_answer(server):
    server.reply_text("async ok").reply_text("sync ok")
    model = OpenAICompatibleModel(server.base_url + "/", "test-model")  # a trailing slash is tolerated
    assert (await model.acomplete(request(tools=[LOOKUP]))).text == "async ok"
    assert model.complete(request(tools=[LOOKUP])).text == "sync ok"
    assert server.received[0].path == "/v1/chat/completions"
    assert server.received[0].body == server.received[1].body


def test_tool_calls_are_parsed_with_their_ids_and_decoded_arguments(server):
    server.reply_tool_calls(
        [
            wire_tool_call("lookup", '{"city": "Oslo"}', id="call_a"),
            wire_tool_call("lookup", '{"city": "Bergen"}', id="call_b"),
            wire_tool_call("now", "", id="call_c"),
        ]
    )
    response = OpenAICompatibleModel(server.base_url, "m").complete(request(tools=[LOOKUP]))
    assert response.text is None
    assert response.tool_calls == [
        ToolCall("call_a", "lookup", {"city": "Oslo"}),
        ToolCall("call_b", "lookup", {"city": "Bergen"}),
        ToolCall("call_c", "now", {}),
    ]


def test_empty_text_beside_tool_calls_is_not_taken_for_an_answer(server):
    server.reply_tool_calls([wire_tool_call("lookup", '{"city": "Oslo"}', id="c1")], content="")
    server.reply_tool_calls([wire_tool_call("lookup", '{"city": "Oslo"}', id="c2")], content="Let me check.")
    model = OpenAICompatibleModel(server.base_url, "m")
    assert model.complete(request()).text is None
    assert model.complete(request()).text == "Let me check."


def test_a_tool_call_without_an_id_gets_a_generated_one(server):
    call = wire_tool_call("lookup", '{"city": "Oslo"}')
    del call["id"]
    server.reply_tool_calls([call])
    [parsed] = OpenAICompatibleModel(server.base_url, "m").complete(request()).tool_calls
    assert parsed.id.startswith("call_") and parsed.arguments == {"city": "Oslo"}


async def test_tool_traffic_in_the_conversation_goes_out_in_wire_format(server):
    server.reply_text("done")
    call = tool_call("lookup", {"city": "Oslo"}, id="c9")
    messages = [
        {"role": "user", "content": "Weather in Oslo?"},
        ModelResponse(text=None, tool_calls=[call]).to_message(),
        {"role": "tool", "tool_call_id": "c9", "content": {"temp": 12}},
    ]
    await OpenAICompatibleModel(server.base_url, "m").acomplete(request(messages=messages))
    sent = server.received[0].body["messages"]
    assert sent[2]["tool_calls"][0] == {
        "id": "c9",
        "type": "function",
        "function": {"name": "lookup", "arguments": '{"city": "Oslo"}'},
    }
    assert sent[3] == {"role": "tool", "tool_call_id": "c9", "content": '{"temp": 12}'}


def test_malformed_tool_call_arguments_raise_a_model_error_naming_the_call(server):
    server.reply_tool_calls([wire_tool_call("lookup", '{"city": "Oslo"', id="call_bad")])
    with pytest.raises(ModelError) as info:
        OpenAICompatibleModel(server.base_url, "m").complete(request())
    message = str(info.value)
    assert info.value.kind == "malformed"
    assert "'call_bad'" in message and "'lookup'" in message and "not valid JSON" in message
    # The server relayed the model's words faithfully: the message blames the model, not the wire format.
    assert "the model's output" in message and "speaks the OpenAI chat-completions format" not in message


def test_tool_call_arguments_that_are_not_an_object_raise_a_model_error(server):
    server.reply_tool_calls([wire_tool_call("lookup", '["Oslo"]', id="call_list")])
    with pytest.raises(ModelError, match="decode to list, expected a JSON object"):
        OpenAICompatibleModel(server.base_url, "m").complete(request())


async def test_a_tool_call_without_a_function_name_raises_a_model_error(server):
    server.reply_tool_calls([wire_tool_call(None, "{}", id="call_anon")])
    with pytest.raises(ModelError, match=r"tool call #0 \(id 'call_anon'\) has no function name") as info:
        await OpenAICompatibleModel(server.base_url, "m").acomplete(request())
    assert info.value.kind == "malformed"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (ScriptedAnswer(status=200, body="<html>proxy page</html>", content_type="text/html"), "the body is not JSON"),
        (ScriptedAnswer(status=200, body=json.dumps({"object": "chat.completion"})), "no choices"),
        (ScriptedAnswer(status=200, body=json.dumps(completion({"content": None}))), "neither text content nor tool calls"),
    ],
)
def test_answers_that_are_not_chat_completions_raise_a_malformed_model_error(server, body, message):
    server.reply(body)
    with pytest.raises(ModelError, match=message) as info:
        OpenAICompatibleModel(server.base_url, "m").complete(request())
    assert info.value.kind == "malformed" and info.value.status is None


@pytest.mark.parametrize(("status", "hint"), [(500, "server's logs"), (429, "rate limiting")])
def test_http_error_statuses_raise_a_model_error_with_the_status_and_a_body_excerpt(server, status, hint):
    server.reply_status(status, "upstream exploded: " + "x" * 1000)
    with pytest.raises(ModelError) as info:
        OpenAICompatibleModel(server.base_url, "m").complete(request())
    error = info.value
    assert error.kind == "http" and error.status == status
    assert f"HTTP {status}" in str(error) and "upstream exploded" in str(error) and hint in str(error)
    assert len(str(error)) < 600  # an excerpt, not the whole body
    assert error.to_dict()["status"] == status


async def test_http_errors_surface_the_same_way_from_the_async_path(server):
    server.reply_status(500, "boom")
    with pytest.raises(ModelError, match="HTTP 500: 'boom'") as info:
        await OpenAICompatibleModel(server.base_url, "m").acomplete(request())
    assert info.value.status == 500


def test_a_slow_server_raises_a_timeout_model_error(server):
    server.reply(ScriptedAnswer(status=200, body=json.dumps(completion({"content": "late"})), delay=3.0))
    model = OpenAICompatibleModel(server.base_url, "m", timeout=0.3)
    with pytest.raises(ModelError, match=r"did not answer within 0.3 s") as info:
        model.complete(request())
    assert info.value.kind == "timeout"


async def test_a_slow_server_raises_a_timeout_model_error_from_the_async_path(server):
    server.reply(ScriptedAnswer(status=200, body=json.dumps(completion({"content": "late"})), delay=3.0))
    with pytest.raises(ModelError) as info:
        await OpenAICompatibleModel(server.base_url, "m", timeout=0.3).acomplete(request())
    assert info.value.kind == "timeout"


def test_an_unreachable_server_raises_a_transport_model_error():
    with socket.socket() as s:  # grab a free port, then close it so nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ModelError, match="could not reach model 'm'") as info:
        OpenAICompatibleModel(f"http://127.0.0.1:{port}/v1", "m", timeout=2).complete(request())
    assert info.value.kind == "transport"


# --- API keys --------------------------------------------------------------------------------------


def test_the_api_key_is_sent_as_a_bearer_header_but_never_shown(server, no_env_key):
    server.reply_text("ok")
    model = OpenAICompatibleModel(server.base_url, "m", api_key=SECRET)
    model.complete(request())
    assert server.received[0].headers["authorization"] == f"Bearer {SECRET}"
    assert SECRET not in json.dumps(server.received[0].body)
    assert SECRET not in repr(model)
    assert SECRET not in json.dumps(model.to_dict())
    assert SECRET not in str(model.payload(request()))


async def test_the_api_key_falls_back_to_the_openai_api_key_environment_variable(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    server.reply_text("ok")
    model = OpenAICompatibleModel(server.base_url, "m")
    await model.acomplete(request())
    assert server.received[0].headers["authorization"] == f"Bearer {SECRET}"
    assert SECRET not in repr(model) and SECRET not in json.dumps(model.to_dict())


def test_an_http_error_message_does_not_echo_the_api_key(server):
    server.reply_status(401, "invalid key")
    with pytest.raises(ModelError, match="check the API key") as info:
        OpenAICompatibleModel(server.base_url, "m", api_key=SECRET).complete(request())
    assert SECRET not in str(info.value)


# --- construction and description ------------------------------------------------------------------


def test_to_dict_shows_kind_name_and_base_url_for_the_inspector():
    model = OpenAICompatibleModel("http://127.0.0.1:11434/v1/", "llama3.2", api_key=SECRET, timeout=5)
    data = model.to_dict()
    assert data == {
        "kind": "openai-compatible",
        "name": "llama3.2",
        "model": "llama3.2",
        "base_url": "http://127.0.0.1:11434/v1",
        "timeout": 5.0,
        "capacity": None,
    }
    assert model.url == "http://127.0.0.1:11434/v1/chat/completions"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"base_url": "127.0.0.1:8000", "model": "m"}, "base_url must be an http"),
        ({"base_url": "http://127.0.0.1:8000/v1", "model": ""}, "model must be a non-empty"),
        ({"base_url": "http://127.0.0.1:8000/v1", "model": "m", "timeout": 0}, "timeout must be a positive"),
        ({"base_url": "http://user:hunter2@127.0.0.1:8000/v1", "model": "m"}, "must not contain credentials"),
    ],
)
def test_bad_constructor_arguments_are_rejected_with_the_bad_value(kwargs, message):
    with pytest.raises(ValueError, match=message):
        OpenAICompatibleModel(**kwargs)


def test_a_given_httpx_client_is_used_for_sync_calls(server):
    server.reply_text("via shared client")
    with httpx.Client(headers={"X-Trace": "t1"}) as client:
        model = OpenAICompatibleModel(server.base_url, "m", client=client)
        assert model.complete(request()).text == "via shared client"
    assert server.received[0].headers["x-trace"] == "t1"


async def test_a_given_async_client_is_used_for_async_calls(server):
    server.reply_text("via async client")
    async with httpx.AsyncClient(headers={"X-Trace": "t2"}) as client:
        model = OpenAICompatibleModel(server.base_url, "m", client=client)
        assert (await model.acomplete(request())).text == "via async client"
    assert server.received[0].headers["x-trace"] == "t2"
