"""OpenTelemetry in and out: OTLP ingest rate, span export to an open /runs page, and the cost of
emitting spans per step.

    .venv/bin/python benchmarks/bench_otel.py [--spans 5000] [--batch 512] [--exports 15] [--runs 400]

1. Ingest: ``--spans`` GenAI chat spans (with usage and captured messages), made by the real SDK and
   exported with the real OTLP/HTTP protobuf exporter in batches of ``--batch`` to ``POST /v1/traces``
   of uvicorn on 127.0.0.1; spans per second from the first export to the last run stored.
2. Live: ``/runs`` open in Debian's Chromium over the real ``ProjectSession`` of ``sample_project``;
   ``--exports`` times, one span is exported (SimpleSpanProcessor) and a MutationObserver stamps when
   its row is in the DOM. Median of (row in the DOM - span end, the export starting).
3. Export overhead: ``generate`` of a two-step agent (ScriptedModel), ``--runs`` runs with recording
   alone, then with recording and ``emit_otel`` (BatchSpanProcessor + OTLP/HTTP exporter to the same
   server), eight interleaved trials in alternating order, each into a fresh store; the wall time per step and the
   application thread's own CPU time per step, and their ratios (the spans are built on the
   emitter's thread and sent by the SDK's: the wall ratio also carries their share of the GIL).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from pydantic import BaseModel  # noqa: E402
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor  # noqa: E402
import httpx  # noqa: E402
from bench_web_runs import OBSERVE  # noqa: E402 - the same row stamping as the runs page benchmark
from web_conftest_helpers import chromium, free_port, live_server, new_page  # noqa: E402

from crux_devtools import ScriptedModel, agent, emit_otel, generate, prompt, record_runs, tool, tool_call  # noqa: E402
from crux_devtools.core.record import otel_semconv as sc  # noqa: E402
from crux_devtools.core.record.runstore import RunStore  # noqa: E402
from crux_devtools.inspector.session.service import ProjectSession  # noqa: E402
from crux_devtools.web.app import create_app  # noqa: E402

MESSAGES = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "Was INV-1042 charged twice? " * 5}]}])
ANSWER = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": "It was paid once."}], "finish_reason": "stop"}])


def chat_span(tracer: object, n: int) -> str:
    with tracer.start_as_current_span(f"chat m{n % 3}") as span:  # type: ignore[attr-defined]
        span.set_attributes({
            sc.OPERATION_NAME: "chat", sc.REQUEST_MODEL: f"m{n % 3}", sc.USAGE_INPUT_TOKENS: 100 + n, sc.USAGE_OUTPUT_TOKENS: 9,
            sc.INPUT_MESSAGES: MESSAGES, sc.OUTPUT_MESSAGES: ANSWER,
        })
        context = span.get_span_context()
    return f"otel-{context.trace_id:032x}-{context.span_id:016x}"


def ingest_rate(url: str, root: Path, spans: int, batch: int) -> float:
    provider = TracerProvider(resource=Resource.create({"service.name": "bench"}))
    processor = BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces", timeout=60), max_queue_size=max(spans, batch) + 1, max_export_batch_size=batch, schedule_delay_millis=50)
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("bench")
    for n in range(spans):
        chat_span(tracer, n)
    started = time.perf_counter()
    processor.force_flush(timeout_millis=600_000)
    with RunStore.for_project(root, create=False) as store:
        while store.count(origin="otel") < spans:
            time.sleep(0.01)
    elapsed = time.perf_counter() - started
    provider.shutdown()
    return spans / elapsed


async def export_to_dom(url: str, exports: int) -> list[float]:
    provider = TracerProvider(resource=Resource.create({"service.name": "live-bench"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces", timeout=30)))
    tracer = provider.get_tracer("bench")
    delays = []
    async with chromium() as browser, new_page(browser) as page:
        await page.goto(url + "/runs")
        await page.wait_for_selector("#live-status[data-state='live']")
        await page.evaluate(OBSERVE)
        for n in range(exports):
            started = time.time() * 1000.0
            run_id = await asyncio.to_thread(chat_span, tracer, 10_000 + n)  # ends the span: exported at once
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                seen = await page.evaluate("window.__seen")
                if run_id in seen:
                    delays.append(seen[run_id] - started)
                    break
                await asyncio.sleep(0.01)
            else:
                raise SystemExit(f"run {run_id} never appeared on the open page")
            await asyncio.sleep(0.3)
    provider.shutdown()
    return delays


def overhead(url: str, runs: int, tmp: Path, project: Path) -> tuple[tuple[float, ...], tuple[float, ...]]:
    sent = [RunStore.for_project(project, create=False).count(origin="otel")]
    class Order(BaseModel):
        id: str = "A-1"

    lookup = tool("lookup", description="Find an order.", parameters=Order, execute=lambda a: "paid")
    bot = agent("bench-agent", prompt=prompt("bench", system="You help.", prompt="Order?", tools=[lookup]), model=ScriptedModel([]))

    def per_step(emit: bool, trial: int) -> tuple[float, float]:
        provider = TracerProvider()
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces", timeout=30)))
        with record_runs(tmp / f"{'emit' if emit else 'plain'}-{trial}", keep=100_000):
            emitter = emit_otel(provider, content=True) if emit else None
            started, cpu = time.perf_counter(), time.thread_time()
            for _ in range(runs):
                generate(bot, model=ScriptedModel([[tool_call("lookup", {})], "Paid."]))
            elapsed, cpu = time.perf_counter() - started, time.thread_time() - cpu
            if emitter is not None:
                emitter.flush()
                emitter.close()
        provider.shutdown()
        if emit:  # let the server store them all before the next trial starts
            sent[0] += runs * 2
            with RunStore.for_project(project, create=False) as store:
                while store.count(origin="otel") < sent[0]:
                    time.sleep(0.05)
        return elapsed / (runs * 2) * 1000.0, cpu / (runs * 2) * 1000.0

    per_step(True, -1)  # warm up imports and caches
    plain, emitted = [], []
    for trial in range(8):  # interleaved, in alternating order, each into a fresh store: drift hits both alike
        for emit in (False, True) if trial % 2 else (True, False):
            (emitted if emit else plain).append(per_step(emit, trial))
    return tuple(statistics.median(x[i] for x in plain) for i in (0, 1)), tuple(statistics.median(x[i] for x in emitted) for i in (0, 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=5000)
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--exports", type=int, default=15)
    parser.add_argument("--runs", type=int, default=400)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        project = tmp / "sample"
        shutil.copytree(REPO / "sample_project", project, ignore=shutil.ignore_patterns("data", "__pycache__", ".crux"))
        with live_server(create_app(ProjectSession(project, history=False))) as server:
            rate = ingest_rate(server.url, project, args.spans, args.batch)
            print(f"OTLP ingest: {rate:,.0f} spans/s into runs ({args.spans:,} GenAI spans, protobuf batches of {args.batch})")
            delays = asyncio.run(export_to_dom(server.url, args.exports))
            print(f"span export -> row on an open /runs page: median {statistics.median(delays):.0f} ms, max {max(delays):.0f} ms ({args.exports} exports)")
        # The overhead is measured against a server in its own process, as an application would
        # have it: spans ingested there do not compete for this process's GIL.
        port = free_port()
        other = subprocess.Popen([str(Path(sys.executable).with_name("crux-devtools")), "serve", str(project), "--port", str(port), "--no-open"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    if httpx.get(url + "/api/runs?limit=1", timeout=5).status_code < 500:
                        break
                except httpx.HTTPError:
                    time.sleep(0.2)
            plain, emitted = overhead(url, args.runs, tmp, project)
            print(f"per step, wall: recording alone {plain[0]:.3f} ms, recording + emit_otel {emitted[0]:.3f} ms: ratio {emitted[0] / plain[0]:.2f}x")
            print(f"per step, the application thread's CPU: {plain[1]:.3f} ms vs {emitted[1]:.3f} ms: ratio {emitted[1] / plain[1]:.2f}x")
        finally:
            other.terminate()
            other.wait(30)


if __name__ == "__main__":
    main()
