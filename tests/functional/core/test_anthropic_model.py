"""AnthropicModel against a local server that speaks the Messages API wire format: tool use through
``generate()``, usage with cache reads and writes, and every fault as a ``ModelError`` of its kind."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest
from pydantic import BaseModel

from chat_server import ChatServer
from crux_devtools import AnthropicModel, Model, ModelError, agenerate, generate, prompt, tool


class City(BaseModel):
    city: str


lookup = tool("lookup", description="Look up the weather of a city.", parameters=City, execute=lambda a: f"12 °C in {a.city}")
weather = prompt("weather", system="You answer weather questions in one sentence.", prompt="Weather in Oslo?", tools=[lookup])


def message(content: list[dict[str, Any]], stop: str = "end_turn", **usage: int) -> dict[str, Any]:
    """A Messages API answer as Anthropic's API reference shows it."""
    return {
        "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": content,
        "stop_reason": stop, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5, **usage},
    }


def test_a_tool_loop_through_generate_speaks_the_messages_format_and_reads_cache_usage() -> None:
    with ChatServer(route="/v1/messages") as server:
        server.reply_json(message([{"type": "text", "text": "Let me look."}, {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"city": "Oslo"}}], "tool_use"))
        server.reply_json(message([{"type": "text", "text": "It is 12 °C in Oslo."}], cache_read_input_tokens=200, cache_creation_input_tokens=50))
        model = AnthropicModel("claude-sonnet-4-5", base_url=server.root_url, api_key="sk-ant-test")
        result = generate(weather, model=model, max_tokens=256)
        first, second = (r.body for r in server.received)
        headers = server.received[0].headers
    assert isinstance(model, Model)
    assert result.text == "It is 12 °C in Oslo." and len(result.steps) == 2
    assert headers["x-api-key"] == "sk-ant-test" and headers["anthropic-version"] == "2023-06-01" and "authorization" not in headers
    assert first["model"] == "claude-sonnet-4-5" and first["max_tokens"] == 256
    assert first["system"] == result.steps[0].sent.system
    assert first["tools"] == [{"name": "lookup", "description": "Look up the weather of a city.", "input_schema": lookup.to_dict()["parameters"]}]
    assert first["messages"] == [{"role": "user", "content": [{"type": "text", "text": "Weather in Oslo?"}]}]
    assert second["messages"][1:] == [
        {"role": "assistant", "content": [{"type": "text", "text": "Let me look."}, {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"city": "Oslo"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "12 °C in Oslo"}]},
    ]
    assert result.steps[0].usage == {"input_tokens": 10, "output_tokens": 5}
    # Anthropic's input_tokens leaves the cached tokens out; ours is the whole input.
    assert result.steps[1].usage == {"input_tokens": 260, "output_tokens": 5, "cache_read_tokens": 200, "cache_write_tokens": 50}
    assert "sk-ant-test" not in repr(model) and "sk-ant-test" not in str(model.to_dict())


def test_acomplete_is_used_by_agenerate() -> None:
    with ChatServer(route="/v1/messages") as server:
        server.reply_json(message([{"type": "text", "text": "Mild."}]))
        result = asyncio.run(agenerate(weather, model=AnthropicModel("claude-haiku-4-5", base_url=server.root_url + "/v1")))
        assert server.received[0].path == "/v1/messages" and server.received[0].body["max_tokens"] == 4096
    assert result.text == "Mild."


@pytest.mark.parametrize(
    ("answer", "kind", "says"),
    [
        ({"status": 429, "body": '{"type":"error","error":{"type":"rate_limit_error"}}'}, "http", "rate limiting"),
        ({"status": 200, "body": "<html>gateway</html>"}, "malformed", "not JSON"),
        ({"status": 200, "body": '{"type":"message","content":[]}'}, "malformed", "neither text nor tool_use"),
        ({"status": 200, "body": '{"content":[{"type":"tool_use","id":"t","name":"lookup","input":"Oslo"}]}'}, "malformed", "not a JSON object"),
    ],
)
def test_faults_are_model_errors_of_their_kind(answer: dict[str, Any], kind: str, says: str) -> None:
    from chat_server import ScriptedAnswer

    with ChatServer(route="/v1/messages") as server:
        server.reply(ScriptedAnswer(status=answer["status"], body=answer["body"]))
        with pytest.raises(ModelError) as raised:
            AnthropicModel("claude-x", base_url=server.root_url).complete(_request())
    assert raised.value.kind == kind and says in str(raised.value)


def _request() -> Any:
    from crux_devtools import ModelRequest

    return ModelRequest("Be brief.", [{"role": "user", "content": "hi"}], [lookup])


def test_an_unreachable_server_is_a_transport_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ModelError) as raised:
        AnthropicModel("claude-x", base_url=f"http://127.0.0.1:{port}").complete(_request())
    assert raised.value.kind == "transport"
