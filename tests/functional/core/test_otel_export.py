"""OpenTelemetry out: runs emitted as GenAI spans through the real SDK (read back from its in-memory
exporter, and from our own /v1/traces), the planner's decisions as crux.* attributes, content only on
opt-in, and a backend that hangs never holding up the application."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from pydantic import BaseModel
from waits import until
from web_conftest_helpers import live_server
from web_runs_fakes import RecordingSession

from crux_devtools import (
    ModelCapacityProfile,
    ModelRequest,
    ModelResponse,
    context,
    droppable,
    emit_otel,
    generate,
    prompt,
    record_runs,
    tool,
    tool_call,
)
from crux_devtools.core.errors import RunError
from crux_devtools.core.record import otel_semconv as sc
from crux_devtools.core.record.runstore import RunStore
from crux_devtools.web.app import create_app

class City(BaseModel):
    city: str


lookup = tool("lookup", description="Weather of a city.", parameters=City, execute=lambda a: f"12 °C in {a.city}")


class UsageModel:
    """A scripted provider that reports usage, as a real one does."""

    name = "house-model"
    capacity = ModelCapacityProfile(context_window=2_000, default_output_reserve=200)

    def __init__(self, answers: list[Any]) -> None:
        self.answers = list(answers)

    def complete(self, request: ModelRequest) -> ModelResponse:
        answer = self.answers.pop(0)
        usage = {"input_tokens": 100, "output_tokens": 10, "cache_read_tokens": 40}
        if isinstance(answer, str):
            return ModelResponse(answer, usage=usage)
        return ModelResponse(None, tool_calls=answer, usage=usage)


def weather() -> Any:
    filler = context("history", system="Old notes. " * 400)
    return prompt("weather", system="You answer weather questions.", prompt="Weather in Oslo?", use=[droppable(filler), context("units", system="Use °C.")], tools=[lookup])


def spans_by_name(exporter: InMemorySpanExporter) -> dict[str, list[ReadableSpan]]:
    out: dict[str, list[ReadableSpan]] = {}
    for span in exporter.get_finished_spans():
        out.setdefault(span.name, []).append(span)
    return out


def test_a_run_is_a_span_with_a_child_per_step_and_the_planners_decisions() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with emit_otel(provider, content=False) as emitter:
        result = generate(weather(), model=UsageModel([[tool_call("lookup", {"city": "Oslo"})], "12 °C."]), input_budget={"max": 600})
        assert emitter.flush()
    assert result.text == "12 °C."
    spans = spans_by_name(exporter)
    (run,) = spans["crux.run weather"]
    steps = sorted(spans["chat house-model"], key=lambda s: s.start_time or 0)
    assert len(steps) == 2 and all(s.parent is not None and s.parent.span_id == run.context.span_id for s in steps)
    a = dict(steps[0].attributes or {})
    assert a[sc.OPERATION_NAME] == "chat" and a[sc.REQUEST_MODEL] == "house-model"
    assert (a[sc.USAGE_INPUT_TOKENS], a[sc.USAGE_OUTPUT_TOKENS], a[sc.USAGE_CACHE_READ_TOKENS]) == (100, 10, 40)
    receipt = result.steps[0].request
    assert a[sc.CRUX_INPUT_BUDGET] == receipt.max_input_tokens == 600 and a[sc.CRUX_INPUT_TOKENS] == receipt.input_tokens
    assert a[sc.CRUX_ADAPTATION_COUNT] == len(receipt.adaptations) >= 1
    assert [x["contributor"] for x in json.loads(a[sc.CRUX_ADAPTATIONS])] == [x.contributor for x in receipt.adaptations]
    assert "history" in a[sc.CRUX_DROPPED]
    assert json.loads(a[sc.CRUX_RUNGS]) == {c.contributor: c.representation for c in receipt.contributions if c.kind in ("context", "ladder")}
    assert not any(k in a for k in (sc.INPUT_MESSAGES, sc.OUTPUT_MESSAGES, sc.SYSTEM_INSTRUCTIONS, sc.TOOL_DEFINITIONS))  # content is opt-in
    r = dict(run.attributes or {})
    assert r[sc.CRUX_TARGET] == "weather" and r[sc.CRUX_RUN_STATUS] == "ok" and r[sc.USAGE_INPUT_TOKENS] == 200
    assert run.end_time is not None and run.start_time is not None and steps[1].end_time is not None and run.end_time >= steps[1].end_time


def test_content_on_opt_in_and_a_failed_step_is_an_error_span(monkeypatch: pytest.MonkeyPatch) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setenv(sc.CAPTURE_CONTENT_ENV, "span_only")
    with emit_otel(provider) as emitter:
        generate(weather(), model=UsageModel([[tool_call("lookup", {"city": "Oslo"}, id="c1")], "Mild."]))
        with pytest.raises(RunError):  # a failed run raises, and is still recorded and emitted
            generate(weather(), model=UsageModel([[tool_call("no_such_tool", {})]]))
        assert emitter.flush()
    first, second, failed = sorted(spans_by_name(exporter)["chat house-model"], key=lambda s: s.start_time or 0)
    a = dict(first.attributes or {})
    assert json.loads(a[sc.INPUT_MESSAGES]) == [{"role": "user", "parts": [{"type": "text", "content": "Weather in Oslo?"}]}]
    assert json.loads(a[sc.OUTPUT_MESSAGES])[0]["parts"] == [{"type": "tool_call", "id": "c1", "name": "lookup", "arguments": {"city": "Oslo"}}]
    assert "You answer weather questions." in json.loads(a[sc.SYSTEM_INSTRUCTIONS])[0]["content"]
    assert json.loads(a[sc.TOOL_DEFINITIONS])[0]["name"] == "lookup"
    fed_back = json.loads(dict(second.attributes or {})[sc.INPUT_MESSAGES])
    assert fed_back[-1] == {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "12 °C in Oslo"}]}
    assert failed.status.status_code == StatusCode.ERROR and dict(failed.attributes or {})[sc.ERROR_TYPE] == "UnknownTool"


def test_spans_sent_to_our_own_receiver_come_back_as_the_same_run(tmp_path: Path) -> None:
    with live_server(create_app(RecordingSession(tmp_path), manage_session=False)) as server:
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{server.url}/v1/traces", timeout=30)))
        app_dir = tmp_path / "app"
        with record_runs(app_dir), emit_otel(provider, content=True) as emitter:
            result = generate(weather(), model=UsageModel([[tool_call("lookup", {"city": "Oslo"})], "12 °C."]))
            assert emitter.flush()
        with RunStore.for_project(tmp_path, create=False) as store:
            until(lambda: any((r := store.get(s["id"])) and r["otel"]["run_span"] for s in store.list(origin="otel")), "the run's own span is stored")
            ingested = [store.get(s["id"]) for s in store.list(origin="otel")]
    (run,) = ingested  # one run: its two steps, not two runs of one step each
    assert run is not None and run["target"] == "weather" and run["model"] == "house-model" and run["text"] == "12 °C."
    assert len(run["steps"]) == len(result.steps) == 2
    for back, step in zip(run["steps"], result.steps, strict=True):
        assert back["usage"] == step.usage and back["request"]["input_tokens"] == step.request.input_tokens
        assert back["sent"]["messages"] == step.sent.to_dict()["messages"]
        assert back["sent"]["system"] == step.sent.system
        assert [t["name"] for t in back["sent"]["tools"]] == ["lookup"]
    assert run["steps"][0]["tool_results"] == [r.to_dict() for r in result.steps[0].tool_results]


class HungExporter(SpanExporter):
    """A backend that never answers until released."""

    def __init__(self) -> None:
        self.release = threading.Event()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.release.wait()
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        self.release.set()


def test_a_hung_backend_never_holds_up_the_application_and_warns_once(caplog: pytest.LogCaptureFixture) -> None:
    hung = HungExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(hung))
    caplog.set_level(logging.WARNING, logger="crux_devtools")
    emitter = emit_otel(provider, queue_size=3)
    try:
        results = [generate(prompt("p", prompt="hi"), model=UsageModel(["ok"])) for _ in range(40)]
        assert all(r.text == "ok" for r in results)  # every run finished while the export was stuck
        warnings = [r for r in caplog.records if "OpenTelemetry export is behind" in r.getMessage()]
        assert len(warnings) == 1 and emitter.dropped >= 40 - 3 - 1
    finally:
        hung.release.set()
        emitter.close()
