"""record_call with a streamed call through the real ``openai`` SDK, against a local server that
streams server-sent events (``chat_server.py``): the application gets every chunk as it arrives
(the server sends the next only once the application has the one before), the run is recorded
from the chunks with the same answer and usage as the same call not streamed, the text shows in
the store's live row while it arrives, and a stream cut mid-way is an error step with what came."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import openai
import pytest
from chat_server import ChatServer, chat_chunks, completion, message_events, wire_tool_call
from test_record_call import only_run, support
from waits import until

from crux_devtools import record_call
from crux_devtools.core.record.runstore import RunStore

USAGE = {"prompt_tokens": 120, "completion_tokens": 7, "total_tokens": 127, "prompt_tokens_details": {"cached_tokens": 64}}
PIECES = ["It ", "is ", "12 ", "°C ", "in ", "Oslo."]


def step_as_compared(step: dict[str, Any]) -> dict[str, Any]:
    """A recorded step without what differs between two calls of the same answer (timing, ids)."""
    drop = {"latency_ms", "stream", "provider_response", "request", "sent"}
    return {k: v for k, v in step.items() if k not in drop}


def test_a_streamed_sdk_call_reaches_the_app_chunk_by_chunk_and_records_what_the_plain_call_records(tmp_path: Path) -> None:
    plain_dir, streamed_dir = tmp_path / "plain", tmp_path / "streamed"
    with ChatServer() as server:
        body = completion({"content": "".join(PIECES)}, model="gpt-4o-mini")
        body["usage"] = USAGE
        server.reply_json(body)
        events = chat_chunks(PIECES, usage=USAGE, model="gpt-4o-mini")
        gates = {i: threading.Event() for i in range(1, len(events))}  # event i waits until the app has event i-1
        stream = server.reply_stream(events, gates=gates)
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
        with record_call(support(), input={"question": "Weather in Oslo?"}, model="gpt-4o-mini", dir=plain_dir) as call:
            call.response(client.chat.completions.create(**call.to_openai()))
        got: list[str] = []
        with record_call(support(), input={"question": "Weather in Oslo?"}, model="gpt-4o-mini", dir=streamed_dir) as call:
            for n, chunk in enumerate(call.stream(client.chat.completions.create(**call.to_openai(stream=True)))):
                # Not buffered: the server has not sent the next chunk yet, and sends it only now.
                assert not (n + 1 < len(events) and stream.sent[n + 1].is_set())
                if chunk.choices and chunk.choices[0].delta.content:
                    got.append(chunk.choices[0].delta.content)
                if n + 1 in gates:
                    gates[n + 1].set()
        sent = server.received[1].body
    assert got == PIECES
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}
    plain, streamed = only_run(plain_dir), only_run(streamed_dir)
    assert streamed["status"] == "ok" and streamed["text"] == "It is 12 °C in Oslo."
    assert streamed["usage"] == plain["usage"] == {"input_tokens": 120, "output_tokens": 7, "cache_read_tokens": 64}
    assert step_as_compared(streamed["steps"][0]) == step_as_compared(plain["steps"][0])
    assert streamed["steps"][0]["sent"] == plain["steps"][0]["sent"]
    answer = streamed["steps"][0]["provider_response"]
    assert answer["object"] == "chat.completion" and answer["choices"][0]["message"]["content"] == "It is 12 °C in Oslo."
    assert answer["usage"]["prompt_tokens_details"]["cached_tokens"] == 64 and answer["choices"][0]["finish_reason"] == "stop"
    timing = streamed["steps"][0]["stream"]
    assert timing["chunks"] == len(events) and 0 <= timing["first_token_ms"] <= streamed["steps"][0]["latency_ms"]
    assert "stream" not in plain["steps"][0]


def test_streamed_tool_calls_are_assembled_from_their_pieces(tmp_path: Path) -> None:
    calls = [wire_tool_call("lookup", '{"city": "Oslo"}', id="call_1"), wire_tool_call("lookup", '{"city": "Bergen"}', id="call_2")]
    with ChatServer() as server:
        server.reply_stream(chat_chunks([], usage=USAGE, tool_calls=calls, model="gpt-4o-mini"))
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
        with record_call(support(), input={"question": "Oslo and Bergen?"}, model="gpt-4o-mini", dir=tmp_path) as call:
            for _chunk in call.stream(client.chat.completions.create(**call.to_openai(stream=True))):
                pass
    step = only_run(tmp_path)["steps"][0]
    assert step["tool_calls"] == [{"id": "call_1", "name": "lookup", "arguments": {"city": "Oslo"}}, {"id": "call_2", "name": "lookup", "arguments": {"city": "Bergen"}}]
    assert step["error"] is None and step["response_text"] is None


def test_an_async_sdk_stream_is_recorded_the_same_way(tmp_path: Path) -> None:
    async def main(server: ChatServer) -> list[str]:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
        got = []
        with record_call(support(), input={"question": "Oslo?"}, model="gpt-4o-mini", dir=tmp_path) as call:
            async for chunk in call.stream(await client.chat.completions.create(**call.to_openai(stream=True))):
                if chunk.choices and chunk.choices[0].delta.content:
                    got.append(chunk.choices[0].delta.content)
        await client.close()
        return got

    with ChatServer() as server:
        server.reply_stream(chat_chunks(PIECES, usage=USAGE, model="gpt-4o-mini"))
        assert asyncio.run(main(server)) == PIECES
    run = only_run(tmp_path)
    assert run["status"] == "ok" and run["text"] == "It is 12 °C in Oslo." and run["usage"]["cache_read_tokens"] == 64


def test_while_the_stream_runs_its_text_so_far_is_in_the_store_and_goes_when_the_run_is_written(tmp_path: Path) -> None:
    with ChatServer() as server:
        events = chat_chunks(PIECES, usage=USAGE, model="gpt-4o-mini")
        hold = threading.Event()
        server.reply_stream(events, gates={4: hold})  # the role chunk and three pieces, then it waits
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
        store = RunStore.for_project(tmp_path, create=False)
        with record_call(support(), input={"question": "Oslo?"}, model="gpt-4o-mini", dir=tmp_path) as call:
            chunks = call.stream(client.chat.completions.create(**call.to_openai(stream=True)))
            for n, _chunk in enumerate(chunks):
                if n == 3:  # the app has "It is 12 ": the open page must show it before the rest comes
                    until(lambda: (store.live_runs() or [{}])[0].get("live", {}).get("text") == "It is 12 ", "the live row holds the text so far")
                    (live,) = store.live_runs()
                    assert live["target"] == "support" and live["status"] == "running" and live["model"] == "gpt-4o-mini"
                    assert live["live"]["index"] == 0 and live["live"]["first_token_ms"] is not None
                    token = store.live_token()
                    hold.set()
        run = only_run(tmp_path)
        assert store.live_runs() == [] and store.live_token() > token  # written: its live row went in the same transaction
        assert run["id"] == live["id"] and run["text"] == "It is 12 °C in Oslo."
        store.close()


def test_a_stream_cut_by_the_server_is_an_error_step_with_what_arrived(tmp_path: Path) -> None:
    with ChatServer() as server:
        server.reply_stream(chat_chunks(PIECES, usage=USAGE, model="gpt-4o-mini"), cut_after=4)
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
        got = []
        with pytest.raises(Exception) as raised:
            with record_call(support(), input={"question": "Oslo?"}, model="gpt-4o-mini", dir=tmp_path) as call:
                for chunk in call.stream(client.chat.completions.create(**call.to_openai(stream=True))):
                    got.append(chunk.choices[0].delta.content)
    run = only_run(tmp_path)
    assert "".join(g or "" for g in got) == "It is 12 "
    assert run["status"] == "error" and run["error"]["type"] == type(raised.value).__name__
    (step,) = run["steps"]
    assert step["response_text"] == "It is 12 " and step["error"]["type"] == type(raised.value).__name__
    assert step["stream"]["chunks"] == 4 and step["usage"] is None


def test_an_app_that_stops_reading_early_records_an_error_step_with_what_it_read(tmp_path: Path) -> None:
    with ChatServer() as server:
        server.reply_stream(chat_chunks(PIECES, usage=USAGE, model="gpt-4o-mini"))
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
        with record_call(support(), input={"question": "Oslo?"}, model="gpt-4o-mini", dir=tmp_path) as call:
            for n, _chunk in enumerate(call.stream(client.chat.completions.create(**call.to_openai(stream=True)))):
                if n == 2:
                    break
    run = only_run(tmp_path)
    (step,) = run["steps"]
    assert run["status"] == "error" and step["error"]["type"] == "StreamCut"
    assert "the application stopped reading it" in step["error"]["message"] and "3 chunks" in step["error"]["message"]
    assert step["response_text"] == "It is "


def test_an_anthropic_event_stream_is_recorded_with_its_cache_counts(tmp_path: Path) -> None:
    usage = {"input_tokens": 10, "cache_creation_input_tokens": 30, "cache_read_input_tokens": 200}
    events = [data for _name, data in message_events(["Twelve ", "degrees."], usage=usage, output_tokens=9,
                                                     tool_use={"id": "toolu_1", "name": "lookup", "input": {"city": "Oslo"}})]
    with record_call(support(), input={"question": "Oslo?"}, model="claude-sonnet-4-5", dir=tmp_path) as call:
        passed = [e for e in call.stream(iter(json.loads(json.dumps(events))))]
    assert len(passed) == len(events)
    (step,) = only_run(tmp_path)["steps"]
    assert step["response_text"] == "Twelve degrees."
    assert step["tool_calls"] == [{"id": "toolu_1", "name": "lookup", "arguments": {"city": "Oslo"}}]
    assert step["usage"] == {"input_tokens": 240, "output_tokens": 9, "cache_read_tokens": 200, "cache_write_tokens": 30}
    assert step["provider_response"]["stop_reason"] == "tool_use"


def test_stream_takes_only_an_iterator_and_only_once(tmp_path: Path) -> None:
    with record_call(support(), input={"question": "Oslo?"}, model="gpt-4o-mini", dir=tmp_path) as call:
        with pytest.raises(TypeError, match="takes the stream the SDK returned"):
            call.stream(42)
        call.stream(iter([]))
        with pytest.raises(RuntimeError, match="already called"):
            call.stream(iter([]))
    assert only_run(tmp_path)["steps"][0]["error"]["type"] == "StreamCut"
