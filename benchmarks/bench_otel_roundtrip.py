"""OpenTelemetry round trip: the sample project's runs emitted with ``emit_otel`` and ingested again
are the same runs; and how long a 500-step trace takes to ingest.

    .venv/bin/python benchmarks/bench_otel_roundtrip.py [--steps 500] [--repeat 5]

1. Round trip: every target of ``sample_project`` is run on each of its examples: a runnable one
   (an agent, or a prompt with a model: here ScriptedModels, replayed from the top for each run as
   the inspector's Run does) with its own model, every other prompt with a one-answer ScriptedModel, with recording on and ``emit_otel(content=True)``; the real SDK sends every
   span as its own export (SimpleSpanProcessor, OTLP/HTTP protobuf) to ``POST /v1/traces`` of uvicorn
   on 127.0.0.1, so each run's steps arrive before the agent span that is their run. Each recorded
   run is compared field by field with the run the receiver made of its trace (run: target, kind,
   file, line, status, error, model, input, text, usage, started_at, duration_ms; each step: index,
   receipt, sent, answer, tool calls and results, offloads, usage, latency, error). Prints the
   fraction that round-trip exactly (goal: 100%) and the differences of any that do not.
2. 500 steps: one ``invoke_agent`` span with 500 ``chat`` children (usage and captured messages),
   one OTLP protobuf export: the median time of ``POST /v1/traces`` until the response (the run is
   stored by then), of the ingest alone (decode and build the run, no store), and of rendering its
   ``/runs/{id}`` page.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

import httpx  # noqa: E402
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans  # noqa: E402
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from otel_roundtrip import differences  # noqa: E402
from web_conftest_helpers import live_server  # noqa: E402
from web_runs_fakes import RecordingSession  # noqa: E402

from crux_devtools import ScriptedModel, emit_otel, generate, record_runs  # noqa: E402
from crux_devtools.core.record import otel_semconv as sc  # noqa: E402
from crux_devtools.core.record.runstore import RunStore  # noqa: E402
from crux_devtools.inspector.features.runs.otel_ingest import decode, ingest  # noqa: E402
from crux_devtools.inspector.session.discovery import discover  # noqa: E402
from crux_devtools.inspector.worker.evaluate import example_inputs, fresh_model, runnable_model  # noqa: E402
from crux_devtools.inspector.worker.imports import load_project  # noqa: E402
from crux_devtools.web.app import create_app  # noqa: E402

SAMPLE = REPO / "sample_project"
PROTOBUF = "application/x-protobuf"


def sample_runs(app_dir: Path, endpoint: str) -> int:
    """Run every runnable sample target on each example, recorded in ``app_dir`` and emitted to ``endpoint``."""
    sys.path.insert(0, str(SAMPLE))
    found = discover(SAMPLE)
    project = load_project(SAMPLE, [m.to_dict() for m in found.modules])
    if project.import_errors:
        raise SystemExit(f"the sample project did not load: {project.import_errors}")
    provider = TracerProvider(resource=Resource.create({"service.name": "sample"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=endpoint, timeout=60)))
    count = 0
    with record_runs(app_dir, keep=100_000), emit_otel(provider, content=True) as emitter:
        for target in project.targets:
            model = runnable_model(target) or ScriptedModel(["(the scripted answer)"], name="bench-scripted")
            for _name, data in example_inputs(target):
                try:
                    generate(target.obj, input=data, model=fresh_model(model))
                except Exception:  # noqa: BLE001 - a failed run is recorded (and emitted) all the same
                    pass
                count += 1
        if not emitter.flush(timeout=600):
            raise SystemExit("the spans were not all exported within 10 minutes")
    provider.shutdown()
    return count


def round_trip() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        inspector, app_dir = Path(tmp) / "inspector", Path(tmp) / "app"
        with live_server(create_app(RecordingSession(inspector), manage_session=False)) as server:
            made = sample_runs(app_dir, f"{server.url}/v1/traces")
            with RunStore.for_project(app_dir, create=False) as store:
                recorded = [r for s in store.list(limit=100_000) if (r := store.get(s["id"])) is not None]
            with RunStore.for_project(inspector, create=False) as store:
                deadline = time.monotonic() + 120
                while store.count(origin="otel") < len(recorded) and time.monotonic() < deadline:
                    time.sleep(0.05)
                ingested = [r for s in store.list(origin="otel", limit=100_000) if (r := store.get(s["id"])) is not None]
    by_recorded_id = {r["otel"].get("recorded_as"): r for r in ingested if isinstance(r.get("otel"), dict)}
    exact, kinds = 0, {}
    for run in recorded:
        kinds[run["kind"]] = kinds.get(run["kind"], 0) + 1
        back = by_recorded_id.get(run["id"])
        found = ["no run was ingested for it"] if back is None else differences(run, back)
        if found:
            print(f"  {run['target']} ({run['id']}): " + "; ".join(found[:4]))
        else:
            exact += 1
    steps = sum(len(r["steps"]) for r in recorded)
    print(f"round trip: {exact}/{len(recorded)} sample runs ({', '.join(f'{n} {k}' for k, n in sorted(kinds.items()))}; {steps} steps; "
          f"{made} generate calls) came back exactly: {exact / max(len(recorded), 1):.0%} (target 100%); "
          f"{len(ingested)} runs ingested from {len(recorded)} traces")


def long_trace(steps: int) -> bytes:
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "long"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("bench")
    t0 = time.time_ns()
    messages = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "Summarise the ticket. " * 10}]}])
    answer = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": "Done."}], "finish_reason": "stop"}])
    with tracer.start_as_current_span("invoke_agent long", start_time=t0, attributes={sc.OPERATION_NAME: "invoke_agent", sc.AGENT_NAME: "long"}):
        for n in range(steps):
            span = tracer.start_span("chat m", start_time=t0 + (n + 1) * 1_000_000)
            span.set_attributes({sc.OPERATION_NAME: "chat", sc.REQUEST_MODEL: "m", sc.USAGE_INPUT_TOKENS: 100 + n, sc.USAGE_OUTPUT_TOKENS: 5,
                                 sc.INPUT_MESSAGES: messages, sc.OUTPUT_MESSAGES: answer})
            span.end(end_time=t0 + (n + 1) * 1_000_000 + 500_000)
    return encode_spans(memory.get_finished_spans()).SerializeToString()


def five_hundred(steps: int, repeat: int) -> None:
    body = long_trace(steps)
    alone = []
    for _ in range(repeat):
        started = time.perf_counter()
        (run,) = ingest(decode(body, PROTOBUF), max_runs=10).runs
        alone.append(time.perf_counter() - started)
    assert len(run["steps"]) == steps
    posted, pages = [], []
    with tempfile.TemporaryDirectory() as tmp, live_server(create_app(RecordingSession(Path(tmp)), manage_session=False)) as server:
        for _ in range(repeat):
            started = time.perf_counter()
            response = httpx.post(f"{server.url}/v1/traces", content=body, headers={"content-type": PROTOBUF}, timeout=300)
            posted.append(time.perf_counter() - started)
            assert response.status_code == 200, response.text
        for _ in range(repeat):
            started = time.perf_counter()
            page = httpx.get(f"{server.url}/runs/{run['id']}", timeout=300)
            pages.append(time.perf_counter() - started)
            assert page.status_code == 200 and page.text.count('class="card step-card') == steps
    print(f"{steps}-step trace ({len(body):,} bytes of protobuf): POST /v1/traces median {statistics.median(posted) * 1000:.0f} ms "
          f"(stored, merged into the run already there), ingest alone {statistics.median(alone) * 1000:.0f} ms, "
          f"its /runs/{{id}} page {statistics.median(pages) * 1000:.0f} ms (medians of {repeat})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    round_trip()
    five_hundred(args.steps, args.repeat)


if __name__ == "__main__":
    main()
