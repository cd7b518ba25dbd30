"""OpenTelemetry in: the real OpenTelemetry SDK and OTLP/HTTP exporter (and the real OpenAI
instrumentation driving the real ``openai`` client) export to ``POST /v1/traces`` of a real uvicorn on
127.0.0.1; GenAI spans become runs with origin "otel". Bad bodies are a 4xx with a reason or a
partial success, never a 500, and never cost a run already stored."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Status, StatusCode
from waits import until
from web_conftest_helpers import LiveServer, live_server
from web_runs_fakes import RecordingSession

from chat_server import ChatServer, completion
from crux_devtools.core.record import otel_semconv as sc
from crux_devtools.core.record.runstore import RunStore
from crux_devtools.web.app import create_app
from crux_devtools.web.routes.otel import MAX_BODY, TOKEN_ENV


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    with live_server(create_app(RecordingSession(tmp_path), manage_session=False)) as srv:
        yield srv


def provider(server: LiveServer, service: str = "billing-app", compression: Compression = Compression.NoCompression) -> TracerProvider:
    tracer_provider = TracerProvider(resource=Resource.create({"service.name": service}))
    exporter = OTLPSpanExporter(endpoint=f"{server.url}/v1/traces", timeout=30, compression=compression)
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    return tracer_provider


def stored(root: Path, count: int) -> list[dict[str, Any]]:
    """The runs in the store once there are ``count`` of them."""
    with RunStore.for_project(root, create=False) as store:
        until(lambda: store.count() >= count, f"{count} run(s) arrive")
        return [r for s in store.list(limit=count + 10) if (r := store.get(s["id"])) is not None]


INPUT = [
    {"role": "system", "parts": [{"type": "text", "content": "Answer billing questions."}]},
    {"role": "user", "parts": [{"type": "text", "content": "Was INV-1042 charged twice?"}]},
    {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "lookup", "arguments": {"invoice": "INV-1042"}}]},
    {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "paid once"}]},
]
OUTPUT = [{"role": "assistant", "parts": [{"type": "text", "content": "It was paid once."}], "finish_reason": "stop"}]
TOOLS = [{"type": "function", "name": "lookup", "description": "Find an invoice.", "parameters": {"type": "object", "properties": {"invoice": {"type": "string"}}}}]


def test_genai_spans_from_the_sdk_become_runs_and_other_spans_are_ignored(server: LiveServer, tmp_path: Path) -> None:
    tracer = provider(server, compression=Compression.Gzip).get_tracer("test")
    with tracer.start_as_current_span("handle request"):  # not a GenAI span
        with tracer.start_as_current_span("chat gpt-4o-mini") as span:
            span.set_attributes({
                sc.OPERATION_NAME: "chat", sc.PROVIDER_NAME: "openai", sc.REQUEST_MODEL: "gpt-4o-mini", sc.RESPONSE_MODEL: "gpt-4o-mini-2024-07-18",
                sc.USAGE_INPUT_TOKENS: 120, sc.USAGE_OUTPUT_TOKENS: 9, sc.USAGE_CACHE_READ_TOKENS: 64, sc.REQUEST_MAX_TOKENS: 200,
                sc.INPUT_MESSAGES: json.dumps(INPUT), sc.OUTPUT_MESSAGES: json.dumps(OUTPUT), sc.TOOL_DEFINITIONS: json.dumps(TOOLS),
            })
        with tracer.start_as_current_span("chat claude") as failed:
            failed.set_attributes({sc.OPERATION_NAME: "chat", sc.REQUEST_MODEL: "claude-haiku-4-5", sc.ERROR_TYPE: "RateLimitError"})
            failed.record_exception(RuntimeError("429 Too Many Requests"))
            failed.set_status(Status(StatusCode.ERROR, "rate limited"))
    runs = {r["model"]: r for r in stored(tmp_path, 2)}
    ok, bad = runs["gpt-4o-mini-2024-07-18"], runs["claude-haiku-4-5"]
    assert (ok["origin"], ok["status"], ok["target"], ok["kind"]) == ("otel", "ok", "billing-app", "span")
    assert ok["usage"] == {"input_tokens": 120, "output_tokens": 9, "cache_read_tokens": 64}
    assert ok["text"] == "It was paid once." and ok["input"] == "Was INV-1042 charged twice?"
    (step,) = ok["steps"]
    assert step["sent"]["system"] == "Answer billing questions." and step["sent"]["max_tokens"] == 200
    assert step["sent"]["messages"] == [
        {"role": "user", "content": "Was INV-1042 charged twice?"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": '{"invoice": "INV-1042"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "paid once"},
    ]
    assert step["sent"]["tools"] == [{"name": "lookup", "description": "Find an invoice.", "parameters": TOOLS[0]["parameters"]}]
    assert step["latency_ms"] >= 0 and step["otel"]["content_captured"] is True and step["otel"]["parent_span_id"]
    assert bad["status"] == "error" and bad["error"]["type"] == "RuntimeError" and "429" in bad["error"]["message"]
    assert "RuntimeError" in bad["error"]["traceback"]
    page = httpx.get(f"{server.url}/runs/{ok['id']}", timeout=60)
    assert page.status_code == 200 and "It was paid once." in page.text and "Answer billing questions." in page.text
    assert "Not planned by crux" in page.text and "Sent at full fidelity" not in page.text
    listed = httpx.get(f"{server.url}/runs?origin=otel", timeout=60)
    assert listed.status_code == 200 and listed.text.count('class="run-row"') == 2


def test_the_openai_instrumentation_driving_the_real_client_becomes_a_run(server: LiveServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import openai
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    monkeypatch.setenv("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental")
    monkeypatch.setenv(sc.CAPTURE_CONTENT_ENV, "span_only")
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider(server, "support-bot"))
    try:
        with ChatServer() as chat:
            body = completion({"content": "Refund issued."}, model="gpt-4o-mini")
            body["usage"] = {"prompt_tokens": 33, "completion_tokens": 4, "total_tokens": 37}
            chat.reply_json(body)
            client = openai.OpenAI(base_url=chat.base_url, api_key="sk-test", max_retries=0)
            client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Refund?"}])
    finally:
        instrumentor.uninstrument()
    (run,) = stored(tmp_path, 1)
    assert (run["origin"], run["target"], run["model"], run["status"]) == ("otel", "support-bot", "gpt-4o-mini", "ok")
    assert run["usage"] == {"input_tokens": 33, "output_tokens": 4}
    assert run["text"] == "Refund issued."
    sent = run["steps"][0]["sent"]
    assert "Be brief." in sent["system"] and sent["messages"][-1] == {"role": "user", "content": "Refund?"}


def otlp_json(*spans: dict[str, Any]) -> dict[str, Any]:
    return {"resourceSpans": [{"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "svc"}}]}, "scopeSpans": [{"spans": list(spans)}]}]}


def json_span(n: int, **attributes: Any) -> dict[str, Any]:
    def value(v: Any) -> dict[str, Any]:
        if isinstance(v, bool):
            return {"boolValue": v}
        if isinstance(v, int):
            return {"intValue": str(v)}
        if isinstance(v, float):
            return {"doubleValue": v}
        if isinstance(v, list):
            return {"arrayValue": {"values": [value(x) for x in v]}}
        return {"stringValue": str(v)}

    return {
        "traceId": f"{n:032x}", "spanId": f"{n:016x}", "name": f"chat {n}", "startTimeUnixNano": str(1_764_000_000_000_000_000 + n),
        "endTimeUnixNano": str(1_764_000_000_050_000_000 + n), "attributes": [{"key": k, "value": value(v)} for k, v in attributes.items()],
    }


def post(server: LiveServer, body: bytes | str, content_type: str = "application/json", **headers: str) -> httpx.Response:
    data = body.encode() if isinstance(body, str) else body
    return httpx.post(f"{server.url}/v1/traces", content=data, headers={"content-type": content_type, **headers}, timeout=120)


GENAI = {sc.OPERATION_NAME: "chat", sc.REQUEST_MODEL: "m"}


def test_bad_bodies_are_4xx_with_a_reason_and_stored_runs_stay(server: LiveServer, tmp_path: Path) -> None:
    assert post(server, json.dumps(otlp_json(json_span(1, **GENAI)))).status_code == 200
    before = stored(tmp_path, 1)
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

    whole = ExportTraceServiceRequest(resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=[Span(trace_id=b"\x01" * 16, span_id=b"\x02" * 8, name="chat x")])])]).SerializeToString()
    cases = [
        (post(server, "hello", "text/plain"), 415, "not OTLP"),
        (post(server, whole[: len(whole) // 2], "application/x-protobuf"), 400, "truncated"),
        (post(server, "{not json", "application/json"), 400, "not JSON"),
        (post(server, "[1, 2]", "application/json"), 400, "resourceSpans"),
        (post(server, "[" * 100_000 + "]" * 100_000, "application/json"), 400, "not JSON"),
        (post(server, b"x" * (MAX_BODY + 1), "application/json"), 413, "smaller batches"),
        (post(server, gzip.compress(b" " * (MAX_BODY + 10)), "application/json", **{"content-encoding": "gzip"}), 413, "decompressed"),
        (post(server, b"\x1f\x8b broken", "application/json", **{"content-encoding": "gzip"}), 400, "gzip"),
        (post(server, "{}", "application/json", **{"content-encoding": "br"}), 415, "encoding"),
    ]
    for response, status, says in cases:
        assert (response.status_code, says in response.text) == (status, True), response.text
    assert [r["id"] for r in stored(tmp_path, 1)] == [r["id"] for r in before]


def test_odd_spans_are_a_partial_success_and_a_resent_batch_replaces_its_runs(server: LiveServer, tmp_path: Path) -> None:
    body = otlp_json(
        json_span(1, **GENAI, **{sc.USAGE_INPUT_TOKENS: "many", sc.USAGE_OUTPUT_TOKENS: 3.5, sc.INPUT_MESSAGES: "not json", sc.OUTPUT_MESSAGES: 12}),
        json_span(2, **{"http.method": "GET"}),
        {"spanId": 7, "attributes": "wrong", "status": {"code": "STATUS_CODE_ERROR"}},
        json_span(3, **{sc.OPERATION_NAME: "chat", "gen_ai.system": "openai", "gen_ai.usage.prompt_tokens": 7, "gen_ai.usage.completion_tokens": 2}),
    )
    first = post(server, json.dumps(body))
    assert first.status_code == 200
    assert first.json()["partialSuccess"]["rejectedSpans"] == "0" and "2 span(s) without gen_ai attributes ignored" in first.json()["partialSuccess"]["errorMessage"]
    assert post(server, json.dumps(body)).status_code == 200  # the exporter retried
    runs = {r["id"]: r for r in stored(tmp_path, 2)}
    assert len(runs) == 2
    odd = runs[f"otel-{1:032x}-{1:016x}"]
    assert odd["usage"] is None and odd["steps"][0]["sent"]["messages"] == [] and odd["text"] is None
    legacy = runs[f"otel-{3:032x}-{3:016x}"]
    assert legacy["usage"] == {"input_tokens": 7, "output_tokens": 2}


def test_ten_thousand_spans_in_one_request_are_all_stored(server: LiveServer, tmp_path: Path) -> None:
    body = json.dumps(otlp_json(*(json_span(n, **GENAI, **{sc.USAGE_INPUT_TOKENS: n, sc.USAGE_OUTPUT_TOKENS: 1}) for n in range(1, 10_001))))
    response = post(server, body)
    assert response.status_code == 200 and response.json() == {}
    with RunStore.for_project(tmp_path, create=False) as store:
        assert store.count(origin="otel") == 10_000
        assert sum(r["input_tokens"] for r in store.usage_by_model()) == sum(range(1, 10_001))


async def test_only_this_machine_may_send_unless_a_token_is_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = create_app(RecordingSession(tmp_path), manage_session=False)
    body = json.dumps(otlp_json(json_span(1, **GENAI)))
    headers = {"content-type": "application/json"}

    async def send(client: tuple[str, int], **extra: str) -> httpx.Response:
        transport = httpx.ASGITransport(app=app, client=client)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:4400") as c:
            return await c.post("/v1/traces", content=body, headers={**headers, **extra})

    far = await send(("10.1.2.3", 5000))
    assert far.status_code == 403 and TOKEN_ENV in far.text
    assert (await send(("127.0.0.1", 5000))).status_code == 200
    monkeypatch.setenv(TOKEN_ENV, "s3cret")
    assert (await send(("127.0.0.1", 5000))).status_code == 401
    assert (await send(("10.1.2.3", 5000), authorization="Bearer wrong")).status_code == 401
    assert (await send(("10.1.2.3", 5000), authorization="Bearer s3cret")).status_code == 200


def test_a_batch_of_writes_is_one_transaction_all_or_nothing(tmp_path: Path) -> None:
    with RunStore.for_project(tmp_path) as store, RunStore.for_project(tmp_path, create=False) as reader:
        store.write({"id": "kept", "target": "t"})
        with store.batch():
            store.write({"id": "a", "target": "t"})
            store.write({"id": "b", "target": "t"})
            assert reader.count() == 1  # another connection sees nothing until the batch commits
            assert store.count() == 3  # the batch's own connection reads inside its transaction
        assert reader.count() == 3
        with pytest.raises(RuntimeError):
            with store.batch():
                store.write({"id": "c", "target": "t"})
                raise RuntimeError("the sender's connection dropped")
        assert sorted(r["id"] for r in reader.list()) == ["a", "b", "kept"]
        store.write({"id": "d", "target": "t"})  # writing goes on normally after a failed batch
        assert reader.count() == 4
