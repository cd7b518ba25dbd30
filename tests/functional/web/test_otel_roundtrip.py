"""Runs from OpenTelemetry keep their shape: an agent run recorded with a ScriptedModel-like model and
emitted with ``emit_otel`` through the real OpenTelemetry SDK (to its in-memory exporter, and with
its OTLP/HTTP exporter to ``POST /v1/traces`` of a real uvicorn on 127.0.0.1) is ingested as the same
run, field by field; and the bad inputs: no agent span, spans out of order, a trace over several
exports, a parent that never arrives, 500 steps."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags, set_span_in_context
from otel_roundtrip import differences
from pydantic import BaseModel
from waits import until
from web_conftest_helpers import LiveServer, live_server
from web_runs_fakes import RecordingSession

from crux_devtools import ModelCapacityProfile, ModelRequest, ModelResponse, agent, context, droppable, emit_otel, generate, prompt, record_runs, tool, tool_call
from crux_devtools.core.record import otel_semconv as sc
from crux_devtools.core.record.runstore import RunStore
from crux_devtools.inspector.features.runs.otel_ingest import decode, ingest
from crux_devtools.inspector.features.runs.text import NOT_PLANNED, run_line, run_summary
from crux_devtools.tui.runs_render import render_run_header, run_row
from crux_devtools.web.app import create_app

PROTOBUF = "application/x-protobuf"


class City(BaseModel):
    city: str


lookup = tool("lookup", description="Weather of a city.", parameters=City, execute=lambda a: {"city": a.city, "celsius": 12})


class UsageModel:
    """A scripted provider that reports usage (cache reads included), as a real one does."""

    name = "house-model"
    capacity = ModelCapacityProfile(context_window=2_000, default_output_reserve=200)

    def __init__(self, answers: list[Any]) -> None:
        self.answers = list(answers)

    def complete(self, request: ModelRequest) -> ModelResponse:
        answer = self.answers.pop(0)
        usage = {"input_tokens": 100 + len(self.answers), "output_tokens": 10, "cache_read_tokens": 40}
        if isinstance(answer, str):
            return ModelResponse(answer, usage=usage)
        return ModelResponse(None, tool_calls=answer, usage=usage)


def weather_agent() -> Any:
    filler = context("history", system="Old notes. " * 1200)  # more than the window: the budget drops it
    body = prompt("weather", system="You answer weather questions.", prompt="Weather in Oslo and Bergen?", use=[droppable(filler), context("units", system="Use °C.")], tools=[lookup])
    answers = [[tool_call("lookup", {"city": "Oslo"}, id="c1")], [tool_call("lookup", {"city": "Bergen"}, id="c2")], "12 °C in both."]
    return agent("weather-bot", prompt=body, model=UsageModel(answers))


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    with live_server(create_app(RecordingSession(tmp_path / "inspector"), manage_session=False)) as srv:
        yield srv


def recorded_run(root: Path, content: bool = True) -> tuple[dict[str, Any], list[ReadableSpan]]:
    """One agent run recorded in ``root`` and emitted to the SDK's in-memory exporter: the run as
    stored, and its finished spans."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "weather-app"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    with record_runs(root), emit_otel(provider, content=content) as emitter:
        generate(weather_agent())
        assert emitter.flush()
    with RunStore.for_project(root, create=False) as store:
        (summary,) = store.list()
        run = store.get(summary["id"])
    assert run is not None
    return run, list(memory.get_finished_spans())


def body(spans: Sequence[ReadableSpan]) -> bytes:
    return encode_spans(spans).SerializeToString()


def post(server: LiveServer, data: bytes) -> httpx.Response:
    response = httpx.post(f"{server.url}/v1/traces", content=data, headers={"content-type": PROTOBUF}, timeout=120)
    assert response.status_code == 200, response.text
    return response


def otel_runs(root: Path) -> list[dict[str, Any]]:
    with RunStore.for_project(root, create=False) as store:
        return [r for s in store.list(origin="otel", limit=1000) if (r := store.get(s["id"])) is not None]


def test_an_agent_run_sent_through_the_sdk_exporter_comes_back_as_the_same_run(server: LiveServer, tmp_path: Path) -> None:
    """The real OTLP/HTTP exporter, one export per span as SimpleSpanProcessor sends them: the steps
    reach the receiver before the agent span that is their run."""
    inspector = tmp_path / "inspector"
    provider = TracerProvider(resource=Resource.create({"service.name": "weather-app"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{server.url}/v1/traces", timeout=30)))
    with record_runs(tmp_path / "app"), emit_otel(provider, content=True) as emitter:
        generate(weather_agent())
        assert emitter.flush()
    with RunStore.for_project(tmp_path / "app", create=False) as store:
        recorded = store.get(store.list()[0]["id"])
    assert recorded is not None
    with RunStore.for_project(inspector, create=False) as store:
        until(lambda: any((r := store.get(s["id"])) and r["otel"]["run_span"] for s in store.list(origin="otel")), "the agent span is stored with its run")
    (run,) = otel_runs(inspector)
    assert differences(recorded, run) == []
    # and the same, said field by field
    assert (run["target"], run["kind"], run["status"], run["origin"]) == ("weather-bot", "agent", "ok", "otel")
    assert [s["index"] for s in run["steps"]] == [0, 1, 2] and run["text"] == "12 °C in both."
    for back, step in zip(run["steps"], recorded["steps"], strict=True):
        assert back["request"] == step["request"]  # every planner decision: rungs, adaptations, drops, tokens
        assert back["usage"] == step["usage"] == {"input_tokens": back["usage"]["input_tokens"], "output_tokens": 10, "cache_read_tokens": 40}
        assert back["tool_results"] == step["tool_results"] and back["tool_calls"] == step["tool_calls"]
    assert [(a["contributor"], a["representation"]) for a in run["steps"][0]["request"]["adaptations"]] == [("history", "omitted")]
    assert run["steps"][0]["tool_results"][0]["output"] == {"city": "Oslo", "celsius": 12}
    assert run["planned"] is True and run["otel"]["recorded_as"] == recorded["id"]
    page = httpx.get(f"{server.url}/runs/{run['id']}", timeout=60)
    assert page.status_code == 200 and page.text.count('class="card step-card') == 3
    ours = sum(s["request"]["input_tokens"] for s in recorded["steps"])
    assert f"{ours:,}" in page.text and NOT_PLANNED not in page.text


def test_without_content_the_decisions_still_round_trip(tmp_path: Path) -> None:
    """Content capture off: no prompt text on the spans, and still the same steps, target, receipts,
    usage, latency and errors (the in-memory exporter's spans, encoded as OTLP protobuf)."""
    recorded, spans = recorded_run(tmp_path / "app", content=False)
    assert not any(sc.INPUT_MESSAGES in (s.attributes or {}) or sc.CRUX_RUN_INPUT in (s.attributes or {}) for s in spans)
    result = ingest(decode(body(spans), PROTOBUF), max_runs=10)
    (run,) = result.runs
    assert differences(recorded, run, content=False) == []
    assert run["input"] is None and run["steps"][0]["sent"]["messages"] == []
    assert [r["name"] for r in run["steps"][0]["tool_results"]] == ["lookup"]  # the tool spans, without their values
    assert differences(recorded, run) != []  # the content really is not there


def test_spans_out_of_order_over_several_exports_are_one_run(server: LiveServer, tmp_path: Path) -> None:
    recorded, spans = recorded_run(tmp_path / "app")
    shuffled = list(spans)
    random.Random(7).shuffle(shuffled)
    agent_span = next(s for s in spans if s.name.startswith("invoke_agent"))
    rest = [s for s in shuffled if s is not agent_span]
    # the agent span in the middle export, the other spans reversed and split around it
    post(server, body(rest[: len(rest) // 2][::-1]))
    post(server, body([agent_span, *rest[len(rest) // 2 : -1]]))
    post(server, body(rest[-1:]))
    (run,) = otel_runs(tmp_path / "inspector")
    assert differences(recorded, run) == []
    post(server, body(spans))  # the exporter sent everything again: the same run, not another
    (again,) = otel_runs(tmp_path / "inspector")
    assert again["id"] == run["id"] and differences(recorded, again) == []


def plain_tracer(server: LiveServer | None = None, memory: InMemorySpanExporter | None = None) -> Any:
    provider = TracerProvider(resource=Resource.create({"service.name": "plain-app"}))
    if server is not None:
        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{server.url}/v1/traces", timeout=30)))
    if memory is not None:
        provider.add_span_processor(SimpleSpanProcessor(memory))
    return provider.get_tracer("another-library")


def chat(tracer: Any, n: int, start: int, **extra: Any) -> None:
    span = tracer.start_span(f"chat gpt-4o-mini {n}", start_time=start, **extra)
    span.set_attributes({sc.OPERATION_NAME: "chat", sc.REQUEST_MODEL: "gpt-4o-mini", sc.USAGE_INPUT_TOKENS: 50 + n, sc.USAGE_OUTPUT_TOKENS: 5})
    span.end(end_time=start + 1_000_000)


def test_a_plain_agent_trace_from_another_library_is_one_run_not_planned_here(server: LiveServer, tmp_path: Path) -> None:
    """GenAI spans no crux wrote: an invoke_agent span with chat and execute_tool children, exported
    span by span (children first). A model call is a one-step run until a tool span or the agent span
    shows the trace is an agent's; then the trace is one run, and stays one as its spans arrive. Its
    input tokens are "not planned here" wherever they show."""
    tracer = plain_tracer(server)
    inspector = tmp_path / "inspector"
    t0 = 1_764_000_000_000_000_000
    with tracer.start_as_current_span("invoke_agent helper", start_time=t0, attributes={sc.OPERATION_NAME: "invoke_agent", sc.AGENT_NAME: "helper"}) as root:
        trace_id = f"{root.get_span_context().trace_id:032x}"
        chat(tracer, 1, t0 + 10_000_000)
        until(lambda: [r["id"].startswith(f"otel-{trace_id}-") for r in otel_runs(inspector)] == [True], "the first call is a one-step run")
        tool_span = tracer.start_span("execute_tool search", start_time=t0 + 12_000_000, attributes={sc.OPERATION_NAME: "execute_tool", sc.TOOL_NAME: "search", sc.TOOL_CALL_ID: "t1"})
        tool_span.end(end_time=t0 + 13_000_000)
        until(lambda: [r["id"] for r in otel_runs(inspector)] == [f"otel-{trace_id}"], "the tool span folds the call into the trace's run")
        chat(tracer, 0, t0 + 20_000_000)
        until(lambda: [len(r["steps"]) for r in otel_runs(inspector)] == [2], "the second call joins the run")
        assert otel_runs(inspector)[0]["otel"]["run_span_missing"] is True
        root.set_attribute(sc.USAGE_INPUT_TOKENS, 101)
    until(lambda: otel_runs(inspector)[0]["otel"]["run_span_missing"] is False, "the agent span arrives")
    (run,) = otel_runs(inspector)
    trace_id = f"{root.get_span_context().trace_id:032x}"
    assert run["id"] == f"otel-{trace_id}" and (run["target"], run["kind"], run["planned"]) == ("helper", "agent", False)
    assert run["usage"] == {"input_tokens": 101, "output_tokens": 0}
    assert [s["otel"]["name"] for s in run["steps"]] == ["chat gpt-4o-mini 1", "chat gpt-4o-mini 0"]  # start order, not name or arrival
    assert [s["usage"]["input_tokens"] for s in run["steps"]] == [51, 50]
    assert run["steps"][0]["tool_results"] == [{"name": "search", "call_id": "t1", "error": None}] and run["steps"][1]["tool_results"] == []
    # one fact, said alike on the page, in the CLI and in the TUI
    page = httpx.get(f"{server.url}/runs/{run['id']}", timeout=60).text
    assert NOT_PLANNED in page and '<span class="mono strong">0</span>' not in page and "0 tok" not in page and ">0</b> input tokens" not in page
    assert page.count(NOT_PLANNED) >= 1 + 2 * len(run["steps"])  # the run's stat, each step's pill and title
    listed = httpx.get(f"{server.url}/runs?origin=otel", timeout=60).text
    assert NOT_PLANNED in listed
    assert NOT_PLANNED in run_line(run) and f"input tokens {NOT_PLANNED}" in run_summary(run)
    assert NOT_PLANNED in " ".join(cell.plain for cell in run_row(run))
    from rich.console import Console

    console = Console(width=160, record=True)
    console.print(render_run_header(run))
    assert NOT_PLANNED in console.export_text()


def test_without_an_agent_span_each_model_call_is_its_own_run(server: LiveServer, tmp_path: Path) -> None:
    memory = InMemorySpanExporter()
    tracer = plain_tracer(memory=memory)
    t0 = 1_764_000_000_000_000_000
    with tracer.start_as_current_span("handle request", start_time=t0):  # not a GenAI span: no run of its own
        chat(tracer, 0, t0 + 1_000)
        chat(tracer, 1, t0 + 2_000_000)
    post(server, body(memory.get_finished_spans()))
    runs = sorted(otel_runs(tmp_path / "inspector"), key=lambda r: r["started_at"])
    assert [len(r["steps"]) for r in runs] == [1, 1] and all(r["planned"] is False and r["kind"] == "span" for r in runs)
    assert {r["steps"][0]["usage"]["input_tokens"] for r in runs} == {50, 51}


def test_a_span_whose_parent_never_arrives_still_shows_under_its_run_marked(server: LiveServer, tmp_path: Path) -> None:
    memory = InMemorySpanExporter()
    tracer = plain_tracer(memory=memory)
    t0 = 1_764_000_000_000_000_000
    with tracer.start_as_current_span("invoke_agent helper", start_time=t0, attributes={sc.OPERATION_NAME: "invoke_agent", sc.AGENT_NAME: "helper"}) as root:
        trace_id = root.get_span_context().trace_id
        chat(tracer, 0, t0 + 1_000_000)
    lost = SpanContext(trace_id=trace_id, span_id=0xDEAD, is_remote=False, trace_flags=TraceFlags(1))  # a parent span never exported
    chat(tracer, 1, t0 + 5_000_000, context=set_span_in_context(NonRecordingSpan(lost)))
    orphan_tool = tracer.start_span("execute_tool search", start_time=t0 + 100, context=set_span_in_context(NonRecordingSpan(lost)),
                                    attributes={sc.OPERATION_NAME: "execute_tool", sc.TOOL_NAME: "search", sc.TOOL_CALL_ID: "t9"})
    orphan_tool.end(end_time=t0 + 200)
    post(server, body(memory.get_finished_spans()))
    (run,) = otel_runs(tmp_path / "inspector")
    assert [s["otel"]["parent_missing"] for s in run["steps"]] == [False, True]
    assert [t["result"]["name"] for t in run["otel"]["loose_tools"]] == ["search"] and run["otel"]["loose_tools"][0]["parent_missing"]
    page = httpx.get(f"{server.url}/runs/{run['id']}", timeout=60).text
    assert page.count("never arrived") == 2 and f"{0xDEAD:016x}" in page and 'id="run-loose-tools"' in page
    # the agent span itself never arriving: the run is made of its steps, and says so
    memory.clear()
    tracer2 = plain_tracer(memory=memory)
    with tracer2.start_as_current_span("invoke_agent other", attributes={sc.OPERATION_NAME: "invoke_agent", sc.CRUX_RUN_ID: "r1"}):
        span = tracer2.start_span("chat m", attributes={sc.OPERATION_NAME: "chat", sc.REQUEST_MODEL: "m", sc.CRUX_STEP_INDEX: 0, sc.CRUX_TARGET: "other"})
        span.end()
    steps_only = [s for s in memory.get_finished_spans() if s.name == "chat m"]
    post(server, body(steps_only))
    other = next(r for r in otel_runs(tmp_path / "inspector") if r["target"] == "other")
    assert other["otel"]["run_span_missing"] is True and len(other["steps"]) == 1
    assert 'id="run-span-missing"' in httpx.get(f"{server.url}/runs/{other['id']}", timeout=60).text


def test_a_run_of_500_steps_ingests_in_order_and_its_page_renders(server: LiveServer, tmp_path: Path) -> None:
    memory = InMemorySpanExporter()
    tracer = plain_tracer(memory=memory)
    t0 = 1_764_000_000_000_000_000
    with tracer.start_as_current_span("invoke_agent long", start_time=t0, attributes={sc.OPERATION_NAME: "invoke_agent", sc.AGENT_NAME: "long"}):
        for n in range(500):
            chat(tracer, n, t0 + (n + 1) * 2_000_000)
    spans = list(memory.get_finished_spans())
    random.Random(3).shuffle(spans)
    post(server, body(spans))
    (run,) = otel_runs(tmp_path / "inspector")
    assert len(run["steps"]) == 500 and [s["usage"]["input_tokens"] for s in run["steps"]] == [50 + n for n in range(500)]
    page = httpx.get(f"{server.url}/runs/{run['id']}", timeout=120)
    assert page.status_code == 200
    shown = re.findall(r'<section class="card (step-card|step-row)[^"]*" id="step-(\d+)"', page.text)  # whole, or a row that loads it
    assert [int(n) for _, n in shown] == list(range(500)) and [kind for kind, _ in shown].count("step-card") == 20


def test_a_cut_receipt_attribute_falls_back_to_the_decisions_named_apart(tmp_path: Path) -> None:
    """A backend or SDK that limits attribute length cuts ``crux.request``: the step keeps what the
    separately named ``crux.*`` attributes say (tokens, budget, tier, drops)."""
    recorded, spans = recorded_run(tmp_path / "app", content=False)
    step_span = next(s for s in spans if s.name.startswith("chat"))
    attributes = dict(step_span.attributes or {})
    attributes[sc.CRUX_REQUEST] = attributes[sc.CRUX_REQUEST][:40]
    from opentelemetry.sdk.trace import ReadableSpan as Readable

    cut = Readable(name=step_span.name, context=step_span.context, parent=step_span.parent, resource=step_span.resource, attributes=attributes,
                   start_time=step_span.start_time, end_time=step_span.end_time, status=step_span.status, kind=step_span.kind)
    (run,) = ingest(decode(body([cut if s is step_span else s for s in spans]), PROTOBUF), max_runs=10).runs
    receipt, original = run["steps"][0]["request"], recorded["steps"][0]["request"]
    assert {k: receipt[k] for k in ("input_tokens", "max_input_tokens", "optimize_at", "tier")} == {k: original[k] for k in ("input_tokens", "max_input_tokens", "optimize_at", "tier")}
    assert [d["id"] for d in receipt["dropped"]] == ["history"] and run["planned"] is True  # the omitted context, by id
    assert [(a["contributor"], a["representation"], a["full_tokens"]) for a in receipt["adaptations"]] == [(a["contributor"], a["representation"], a["full_tokens"]) for a in original["adaptations"]]
    assert json.loads(json.dumps(run))  # still plain JSON, storable as it is
