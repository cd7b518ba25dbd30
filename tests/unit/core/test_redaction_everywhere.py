"""One redaction for everything a run goes to: the runs store and the OpenTelemetry export get the
same masked run (content spans and error statuses included), and ``record_call(dir=D)`` inside
``record_runs(D, redact=...)`` writes the run once, masked. Read back from the real OpenTelemetry
SDK's in-memory exporter and a real SQLite file."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from pydantic import BaseModel

from crux_devtools import ModelCapacityProfile, RunError, ScriptedModel, agent, context, emit_otel, generate, prompt, record_call, record_runs, redact_values, tool, tool_call
from crux_devtools.core.record.runstore import RunStore

SECRET = "4111-2222-3333-4444"


class Card(BaseModel):
    card: str


def _refund(args: Card) -> str:
    raise PermissionError(f"refund of {args.card} needs a supervisor")


refund = tool("refund", description="Refund a card.", parameters=Card, execute=_refund)
look = tool("look", description="Look a card up.", parameters=Card, execute=lambda a: f"card {a.card} is active")
card_prompt = prompt("card", system="You help with cards.", input=Card, use=[context("on-file", input=Card, system=lambda i: f"Card on file: {i.card}")],
                     tools=[refund, look], prompt=lambda i: f"Refund card {i.card}")
CAPACITY = ModelCapacityProfile(8000, 500, "exact")


def stored_text(root: Path) -> tuple[int, str]:
    with RunStore.for_project(root, create=False) as store:
        runs = [store.get(r["id"]) for r in store.list()]
    return len(runs), repr(runs)


def span_text(exporter: InMemorySpanExporter) -> str:
    return repr([(s.name, dict(s.attributes or {}), s.status.description, [e.attributes for e in s.events]) for s in exporter.get_finished_spans()])


@pytest.mark.parametrize("content", [True, False])
def test_the_otel_export_carries_the_run_the_store_keeps_masked(tmp_path: Path, content: bool) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    ok = ScriptedModel([[tool_call("look", {"card": SECRET})], f"Card {SECRET} is active."], capacity=CAPACITY)
    failing = ScriptedModel([[tool_call("refund", {"card": SECRET})]], capacity=CAPACITY)
    with record_runs(tmp_path, redact=redact_values(input_fields=["card"])), emit_otel(provider, content=content) as emitter:
        generate(agent("card-agent", prompt=card_prompt, model=ok), input={"card": SECRET})
        with pytest.raises(RunError):
            generate(agent("card-agent", prompt=card_prompt, model=failing), input={"card": SECRET})
        assert emitter.flush()
    assert SECRET in ok.requests[0].system  # the value really was in what was sent
    count, text = stored_text(tmp_path)
    assert count == 2 and SECRET not in text and "needs a supervisor" in text
    spans = exporter.get_finished_spans()
    errors = [s for s in spans if s.status.status_code == StatusCode.ERROR]
    assert errors and all("needs a supervisor" in (s.status.description or "") for s in errors)  # the error status is there, masked
    exported = span_text(exporter)
    assert SECRET not in exported and "*" * len(SECRET) in exported
    assert ("Card on file: " + "*" * len(SECRET) in exported) is content  # the content spans, when on, carry the masked text


def test_a_failing_redact_keeps_the_run_from_the_export_too(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="crux_devtools")
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))

    def broken(run: dict) -> dict:
        raise KeyError("card")

    recorder = record_runs(tmp_path, redact=broken)
    try:
        with emit_otel(provider, content=True) as emitter:
            for _ in range(2):
                generate(agent("card-agent", prompt=card_prompt, model=ScriptedModel([f"Card {SECRET}."], capacity=CAPACITY)), input={"card": SECRET})
            assert emitter.flush()
    finally:
        recorder.close()
    assert exporter.get_finished_spans() == ()  # withheld, not exported unmasked
    assert not (tmp_path / ".crux" / "runs.sqlite3").exists() or stored_text(tmp_path)[0] == 0
    (warning,) = [r.getMessage() for r in caplog.records]
    assert "redact raised KeyError" in warning and "no run of this process is stored or exported" in warning


def test_record_call_into_the_folder_record_runs_records_writes_the_run_once_masked(tmp_path: Path) -> None:
    with record_runs(tmp_path, redact=redact_values(input_fields=["card"])):
        with record_call(card_prompt, input={"card": SECRET}, model="gpt-4o-mini", dir=tmp_path) as call:
            assert SECRET in call.to_openai()["messages"][0]["content"]
            call.response({"choices": [{"message": {"role": "assistant", "content": f"Refunded {SECRET}."}, "finish_reason": "stop"}],
                           "usage": {"prompt_tokens": 30, "completion_tokens": 4}})
    with RunStore.for_project(tmp_path, create=False) as store:
        (summary,) = store.list()  # one run, not the masked copy and an unmasked one under its id
        run = store.get(summary["id"])
    assert run is not None and SECRET not in repr(run)
    assert run["text"] == "Refunded " + "*" * len(SECRET) + "."
