"""Streamed answers from the adapters (``astream``) and through the tool loop (``generate(...,
on_text=...)``): the same answer, tool calls and usage as the same answer not streamed; every piece
reaches ``on_text`` before the server sends the next (paced by events); a stream cut mid-way is a
``ModelError`` and a failed step holding the text that arrived; the step records its timing."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest
from chat_server import ChatServer, chat_chunks, completion, message_events, wire_tool_call

from crux_devtools import AnthropicModel, ModelError, ModelRequest, ModelResponse, OpenAICompatibleModel, RunError, ScriptedModel, generate, prompt, record_runs
from crux_devtools.core.record.live import figures_text, stream_figures
from crux_devtools.core.record.runstore import RunStore

OPENAI_USAGE = {"prompt_tokens": 50, "completion_tokens": 6, "total_tokens": 56, "prompt_tokens_details": {"cached_tokens": 32}}
ANTHROPIC_USAGE = {"input_tokens": 10, "cache_creation_input_tokens": 30, "cache_read_input_tokens": 200}
PIECES = ["Twelve ", "degrees ", "in ", "Oslo."]


def request() -> ModelRequest:
    return ModelRequest(system="Be brief.", messages=[{"role": "user", "content": "Weather in Oslo?"}], tools=[], max_tokens=100)


async def streamed(model: Any) -> tuple[list[str], ModelResponse]:
    pieces, final = [], None
    async for piece in model.astream(request()):
        if isinstance(piece, str):
            pieces.append(piece)
        else:
            final = piece
    assert isinstance(final, ModelResponse)
    return pieces, final


def test_openai_astream_gives_the_pieces_then_the_answer_acomplete_gives_usage_and_cache_included() -> None:
    call = wire_tool_call("lookup", '{"city": "Oslo"}', id="call_1")
    with ChatServer() as server:
        body = completion({"content": "".join(PIECES), "tool_calls": [call]})
        body["usage"] = OPENAI_USAGE
        server.reply_json(body)
        server.reply_stream(chat_chunks(PIECES, usage=OPENAI_USAGE, tool_calls=[call]))
        model = OpenAICompatibleModel(server.base_url, "test-model", api_key="sk-test")
        plain = asyncio.run(model.acomplete(request()))
        pieces, final = asyncio.run(streamed(model))
        sent = server.received[1]
    assert pieces == PIECES
    assert final == plain and final.usage == {"input_tokens": 50, "output_tokens": 6, "cache_read_tokens": 32}
    assert [c.arguments for c in final.tool_calls] == [{"city": "Oslo"}]
    assert sent.body["stream"] is True and sent.body["stream_options"] == {"include_usage": True}
    assert sent.headers["accept"] == "text/event-stream" and sent.headers["authorization"] == "Bearer sk-test"


def test_anthropic_astream_reads_the_message_events_into_the_answer_acomplete_gives() -> None:
    tool_use = {"id": "toolu_1", "name": "lookup", "input": {"city": "Oslo"}}
    with ChatServer(route="/v1/messages") as server:
        server.reply_json({
            "id": "msg_test", "type": "message", "role": "assistant", "model": "claude-test", "stop_reason": "tool_use",
            "content": [{"type": "text", "text": "".join(PIECES)}, {"type": "tool_use", **tool_use}],
            "usage": {**ANTHROPIC_USAGE, "output_tokens": 9},
        })
        server.reply_stream(message_events(PIECES, usage=ANTHROPIC_USAGE, output_tokens=9, tool_use=tool_use), done=False)
        model = AnthropicModel("claude-test", base_url=server.root_url, api_key="sk-ant-test")
        plain = asyncio.run(model.acomplete(request()))
        pieces, final = asyncio.run(streamed(model))
        sent = server.received[1]
    assert pieces == PIECES and final == plain
    assert final.usage == {"input_tokens": 240, "output_tokens": 9, "cache_read_tokens": 200, "cache_write_tokens": 30}
    assert sent.body["stream"] is True and sent.headers["x-api-key"] == "sk-ant-test"


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_stream_cut_mid_way_is_a_transport_error_that_says_how_much_came(provider: str) -> None:
    route = "/v1/chat/completions" if provider == "openai" else "/v1/messages"
    with ChatServer(route=route) as server:
        if provider == "openai":
            server.reply_stream(chat_chunks(PIECES, usage=OPENAI_USAGE), cut_after=3)
            model: Any = OpenAICompatibleModel(server.base_url, "test-model")
        else:
            server.reply_stream(message_events(PIECES, usage=ANTHROPIC_USAGE, output_tokens=9), cut_after=5, done=False)
            model = AnthropicModel("claude-test", base_url=server.root_url, api_key="k")
        with pytest.raises(ModelError) as raised:
            asyncio.run(streamed(model))
    assert raised.value.kind == "transport" and "was cut after" in str(raised.value) and "characters of text" in str(raised.value)


def test_an_anthropic_error_event_is_a_model_error() -> None:
    events = message_events(PIECES[:1], usage=ANTHROPIC_USAGE, output_tokens=1)[:4]
    events.append(("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}))
    with ChatServer(route="/v1/messages") as server:
        server.reply_stream(events, done=False)
        with pytest.raises(ModelError, match="overloaded_error: Overloaded") as raised:
            asyncio.run(streamed(AnthropicModel("claude-test", base_url=server.root_url, api_key="k")))
    assert raised.value.kind == "http"


def test_an_http_error_before_the_stream_is_the_same_error_as_without_streaming() -> None:
    with ChatServer() as server:
        server.reply_status(429, "slow down")
        with pytest.raises(ModelError) as raised:
            asyncio.run(streamed(OpenAICompatibleModel(server.base_url, "test-model")))
    assert raised.value.kind == "http" and raised.value.status == 429 and "rate limiting" in str(raised.value)


def weather() -> Any:
    return prompt("weather", system="You report the weather.", prompt=lambda i: "Weather in Oslo?")


def test_generate_with_on_text_streams_each_step_and_every_piece_reaches_the_app_before_the_next_is_sent(tmp_path: Path) -> None:
    with ChatServer() as server:
        events = chat_chunks(PIECES, usage=OPENAI_USAGE)
        # Event 0 is the role, 1 the first piece: each later piece (and the finish) waits for the app to have the one before.
        gates = {i: threading.Event() for i in range(2, len(PIECES) + 2)}
        stream = server.reply_stream(events, gates=gates)
        got: list[str] = []

        def on_text(piece: str) -> None:
            n = len(got) + 1  # the event this piece came in (event 0 is the role)
            assert not stream.sent[n + 1].is_set(), "the piece was held back until a later one came"
            got.append(piece)
            gates[n + 1].set()

        with record_runs(tmp_path):
            result = generate(weather(), model=OpenAICompatibleModel(server.base_url, "test-model"), on_text=on_text)
    assert got == PIECES and result.text == "".join(PIECES)
    step = result.steps[0]
    assert step.stream is not None and step.stream["chunks"] == len(PIECES) and step.stream["first_token_ms"] <= step.latency_ms
    assert step.usage == {"input_tokens": 50, "output_tokens": 6, "cache_read_tokens": 32}
    with RunStore.for_project(tmp_path, create=False) as store:
        recorded = store.get(store.list()[0]["id"])
    assert recorded is not None and recorded["steps"][0]["stream"] == step.stream


def test_a_stream_cut_in_the_tool_loop_fails_the_run_with_the_text_that_arrived() -> None:
    with ChatServer() as server:
        server.reply_stream(chat_chunks(PIECES, usage=OPENAI_USAGE), cut_after=3)
        with pytest.raises(RunError) as raised:
            generate(weather(), model=OpenAICompatibleModel(server.base_url, "test-model"), on_text=lambda piece: None)
    (step,) = raised.value.result.steps
    assert step.response_text == "Twelve degrees " and step.error is not None and "was cut after 3 chunks" in step.error.message
    assert step.stream == {"first_token_ms": step.stream["first_token_ms"], "chunks": 2}


def test_scripted_model_streams_in_chunks_paced_by_before_chunk_and_on_text_may_be_async() -> None:
    asked: list[int] = []

    async def pace(i: int) -> None:
        asked.append(i)

    got: list[str] = []

    async def on_text(piece: str) -> None:
        got.append(piece)

    model = ScriptedModel(["abcdefghij", "klm"], chunk=4, before_chunk=pace)
    result = generate(weather(), model=model, on_text=on_text)
    assert got == ["abcd", "efgh", "ij"] and asked == [0, 1, 2] and result.text == "abcdefghij"
    plain: list[str] = []
    assert generate(weather(), model=ScriptedModel(["whole"]), on_text=plain.append).text == "whole" and plain[0] == "whole"
    no_stream = generate(weather(), model=ScriptedModel(["x"]))
    assert no_stream.steps[0].stream is None and "stream" not in no_stream.steps[0].to_dict()


def test_on_text_and_chunk_are_checked() -> None:
    with pytest.raises(TypeError, match="on_text must be a function"):
        generate(weather(), model=ScriptedModel(["x"]), on_text="print")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="chunk must be a positive number"):
        ScriptedModel(["x"], chunk=0)


def test_stream_figures_are_time_to_first_token_and_output_tokens_per_second_after_it() -> None:
    assert stream_figures(200.0, 1200.0, 50) == (200.0, 50.0)
    assert stream_figures(None, 1200.0, 50) == (None, None)
    assert stream_figures(200.0, 200.0, 50) == (200.0, None) and stream_figures(200.0, 900.0, None) == (200.0, None)
    assert figures_text(200.0, 1200.0, 50) == "first token 200 ms · 50.0 tok/s" and figures_text(5217.0, 6500.0, None) == "first token 5.2 s"
    assert figures_text(None, 1.0, 1) is None and figures_text(12.4, None, None) == "first token 12 ms"
