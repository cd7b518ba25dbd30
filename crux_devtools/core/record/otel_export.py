"""OpenTelemetry out: every recorded run also emitted as GenAI spans through the OpenTelemetry SDK.

    from crux_devtools import emit_otel
    emitter = emit_otel()            # the global TracerProvider; or emit_otel(tracer_provider=...)

Each run (``generate``/``agenerate``, agents, ``record_call``) becomes one span for the run with one
child span per step (``chat {model}``, ``gen_ai.operation.name = "chat"``): model, usage (cache
reads and writes included), duration, errors (status ``ERROR`` and ``error.type``), and the
planner's decisions as ``crux.*`` attributes: the input budget, the tokens planned, the tier, the
adaptations, the contexts dropped, the rung each contributor was sent at. Messages, system
instructions and tool definitions go on the step spans only when content capture is on
(``content=True``, or ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` set to ``true``/
``span_only``/``span_and_event``), as the GenAI conventions require. Attribute names come from
``otel_semconv`` only.

Cost to the application: handing a finished run to a bounded queue. A background thread builds the
spans; when a backend is down and the queue is full, runs are dropped from the export (the store
still has them) with one warning on the ``crux_devtools`` logger. The application is never slowed
beyond the hand-over and never sees an exception. Step spans carry each step's exact duration,
laid end to end from the run's start (a step's own start time is not recorded).
"""

from __future__ import annotations

import json
import logging
import os
import queue
import threading
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from . import otel_semconv as sc
from . import recording
from .runstore import storable

logger = logging.getLogger("crux_devtools")

_STOP = object()


def content_from_env() -> bool:
    value = os.environ.get(sc.CAPTURE_CONTENT_ENV, "").strip().lower()
    return value in ("true", "1", "yes", "span_only", "span_and_event")


class OtelEmitter:
    """Turns runs into spans on a background thread; ``close()`` stops it (flushing what is queued)."""

    def __init__(self, tracer_provider: Any = None, *, content: bool | None = None, queue_size: int = 2048) -> None:
        try:
            from opentelemetry import trace
        except ImportError as exc:
            raise ImportError("emit_otel needs the OpenTelemetry SDK: pip install 'crux-devtools[otel]'") from exc
        if isinstance(queue_size, bool) or not isinstance(queue_size, int) or queue_size < 1:
            raise ValueError(f"queue_size must be a positive int, got {queue_size!r}")
        provider = tracer_provider if tracer_provider is not None else trace.get_tracer_provider()
        self.tracer = provider.get_tracer("crux_devtools", schema_url=sc.SCHEMA_URL)
        self.content = content_from_env() if content is None else bool(content)
        self.enabled = True
        self.emitted = 0
        self.dropped = 0
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=queue_size)
        self._warned = False
        self._thread = threading.Thread(target=self._work, name="crux-otel-export", daemon=True)
        self._thread.start()

    def __enter__(self) -> OtelEmitter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def write(self, run: dict[str, Any]) -> dict[str, Any] | None:
        """Queue ``run`` for export (called by recording as each run ends). Never blocks, never raises."""
        if not self.enabled:
            return None
        try:
            self._queue.put_nowait(run)
        except queue.Full:
            self.dropped += 1
            if not self._warned:
                self._warned = True
                logger.warning(
                    "crux_devtools: the OpenTelemetry export is behind (its backend may be down): runs are left out of the "
                    "export until it catches up; they are still recorded. This warning is shown once."
                )
        return run

    def close(self, timeout: float = 10.0) -> None:
        """Stop taking runs, emit those queued (up to ``timeout`` seconds) and stop the thread."""
        if not self.enabled:
            return
        self.enabled = False
        recording.remove_listener(self)
        try:
            self._queue.put(_STOP, timeout=timeout)
        except queue.Full:
            return
        self._thread.join(timeout)

    def flush(self, timeout: float = 30.0) -> bool:
        """Wait until every queued run has become spans; True when it did within ``timeout``."""
        done = threading.Event()
        try:
            self._queue.put(done, timeout=timeout)
        except queue.Full:
            return False
        return done.wait(timeout)

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            if isinstance(item, threading.Event):
                item.set()
                continue
            try:
                self.emit(item)
                self.emitted += 1
            except Exception as exc:  # noqa: BLE001 - an odd run never stops the export of the others
                if not self._warned:
                    self._warned = True
                    logger.warning("crux_devtools: a run could not be exported to OpenTelemetry (%s: %s); this warning is shown once", type(exc).__name__, exc)

    # -- a run as spans ---------------------------------------------------------------------------
    def emit(self, run: Mapping[str, Any]) -> None:
        from opentelemetry import trace
        from opentelemetry.trace import Status, StatusCode

        start = _start_ns(run.get("started_at"))
        end = start + _ns(run.get("duration_ms"))
        target = str(run.get("target") or "")
        agent = run.get("kind") == "agent"
        attributes: dict[str, Any] = {
            sc.CRUX_TARGET: target, sc.CRUX_RUN_ID: str(run.get("id") or ""), sc.CRUX_RUN_STATUS: str(run.get("status") or ""),
            sc.CRUX_ORIGIN: str(run.get("origin") or "app"),
        }
        if agent:
            attributes.update({sc.OPERATION_NAME: sc.RUN_OPERATION, sc.AGENT_NAME: target})
        attributes.update(_usage_attributes(run.get("usage")))
        attributes.update(run_attributes(run, content=self.content))
        span = self.tracer.start_span(f"invoke_agent {target}" if agent else f"crux.run {target}", start_time=start, attributes=attributes)
        _set_error(span, run.get("error"), Status, StatusCode, start)
        context = trace.set_span_in_context(span)
        at = start
        for step in run.get("steps") or []:
            if isinstance(step, Mapping):
                at = self._emit_step(step, run, at, context, Status, StatusCode)
        span.end(end_time=max(end, at))

    def _emit_step(self, step: Mapping[str, Any], run: Mapping[str, Any], at: int, context: Any, Status: Any, StatusCode: Any) -> int:
        receipt, sent = _map(step.get("request")), _map(step.get("sent"))
        model = receipt.get("model") or run.get("model")
        attributes: dict[str, Any] = {sc.OPERATION_NAME: "chat", sc.CRUX_TARGET: str(run.get("target") or "")}
        if isinstance(model, str) and model:
            attributes[sc.REQUEST_MODEL] = model
        if isinstance(sent.get("max_tokens"), int):
            attributes[sc.REQUEST_MAX_TOKENS] = sent["max_tokens"]
        attributes.update(_usage_attributes(step.get("usage")))
        attributes.update(planner_attributes(receipt))
        attributes.update(step_attributes(step))
        if self.content:
            attributes.update(content_attributes(sent, step))
        span = self.tracer.start_span(f"chat {model}" if model else "chat", context=context, start_time=at, attributes=attributes)
        _set_error(span, step.get("error"), Status, StatusCode, at)
        end = at + _ns(step.get("latency_ms"))
        span.end(end_time=end)
        calls = {str(c.get("id")): c for c in step.get("tool_calls") or [] if isinstance(c, Mapping)}
        results = [r for r in step.get("tool_results") or [] if isinstance(r, Mapping)]
        for position, result in enumerate(results):  # a nanosecond apart, so their order is their start order
            self._emit_tool(result, calls.get(str(result.get("call_id") or "")), step.get("index"), end + position, context, Status, StatusCode)
        return end

    def _emit_tool(self, result: Mapping[str, Any], call: Mapping[str, Any] | None, index: Any, at: int, context: Any, Status: Any, StatusCode: Any) -> None:
        """One tool call the step led to, as an ``execute_tool`` span beside the step's (a child of the
        run's span, as the conventions place tools); it starts where its step ended, the step's calls a
        nanosecond apart (tool time is not recorded)."""
        name = str(result.get("name") or "")
        attributes: dict[str, Any] = {sc.OPERATION_NAME: sc.TOOL_OPERATION, sc.TOOL_NAME: name, sc.TOOL_CALL_ID: str(result.get("call_id") or "")}
        if isinstance(index, int) and not isinstance(index, bool):
            attributes[sc.CRUX_STEP_INDEX] = index  # the step that asked for it
        if isinstance(result.get("error"), Mapping):
            attributes[sc.CRUX_TOOL_ERROR] = _json(result["error"])
        if self.content:
            if call is not None:
                attributes[sc.TOOL_CALL_ARGUMENTS] = _json(call.get("arguments"))
            if isinstance(result.get("model_output"), str):
                attributes[sc.TOOL_CALL_RESULT] = result["model_output"]
            if "output" in result:
                attributes[sc.CRUX_TOOL_OUTPUT] = _json(result.get("output"))
        span = self.tracer.start_span(f"execute_tool {name}", context=context, start_time=at, attributes=attributes)
        error = result.get("error")
        if isinstance(error, Mapping):
            span.set_attribute(sc.ERROR_TYPE, str(error.get("type") or "Error"))
        span.end(end_time=at)


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _ns(ms: Any) -> int:
    return int(ms * 1_000_000) if isinstance(ms, (int, float)) and not isinstance(ms, bool) and ms > 0 else 0


def _start_ns(started_at: Any) -> int:
    try:
        return int(datetime.fromisoformat(str(started_at)).timestamp() * 1e9)
    except ValueError:
        import time

        return time.time_ns()


def _usage_attributes(usage: Any) -> dict[str, int]:
    if not isinstance(usage, Mapping):
        return {}
    out = {}
    for key, name in (("input_tokens", sc.USAGE_INPUT_TOKENS), ("output_tokens", sc.USAGE_OUTPUT_TOKENS),
                      ("cache_read_tokens", sc.USAGE_CACHE_READ_TOKENS), ("cache_write_tokens", sc.USAGE_CACHE_WRITE_TOKENS)):
        value = usage.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            out[name] = value
    return out


def _set_error(span: Any, error: Any, Status: Any, StatusCode: Any, at: int) -> None:
    """A failure as the conventions say (status ``ERROR``, ``error.type``, an ``exception`` event),
    and as recorded (``crux.error``)."""
    if isinstance(error, Mapping):
        kind = str(error.get("type") or "Error")
        span.set_attribute(sc.ERROR_TYPE, kind)
        span.set_attribute(sc.CRUX_ERROR, _json(error))
        event = {"exception.type": kind, "exception.message": str(error.get("message") or "")}
        if isinstance(error.get("traceback"), str):
            event["exception.stacktrace"] = error["traceback"]
        span.add_event("exception", event, timestamp=at)
        span.set_status(Status(StatusCode.ERROR, str(error.get("message") or kind)))


def _json(value: Any) -> str:
    """``value`` as JSON, anything not JSON as the store keeps it (its ``repr``)."""
    return json.dumps(storable(value), ensure_ascii=False)


def run_attributes(run: Mapping[str, Any], *, content: bool) -> dict[str, Any]:
    """What the run span carries besides its target and status: kind, where the target is defined,
    the run's model, start and duration as recorded, its usage; its input and final text with content."""
    out: dict[str, Any] = {sc.CRUX_RUN_KIND: str(run.get("kind") or "")}
    if isinstance(run.get("file"), str):
        out[sc.CODE_FILE_PATH] = run["file"]
    if isinstance(run.get("line"), int) and not isinstance(run.get("line"), bool):
        out[sc.CODE_LINE_NUMBER] = run["line"]
    if isinstance(run.get("model"), str):
        out[sc.CRUX_RUN_MODEL] = run["model"]
    if isinstance(run.get("started_at"), str):
        out[sc.CRUX_RUN_STARTED_AT] = run["started_at"]
    if isinstance(run.get("duration_ms"), (int, float)) and not isinstance(run.get("duration_ms"), bool):
        out[sc.CRUX_RUN_DURATION_MS] = float(run["duration_ms"])
    if isinstance(run.get("usage"), Mapping):
        out[sc.CRUX_USAGE] = _json(run["usage"])
    if content:
        out[sc.CRUX_RUN_INPUT] = _json(run.get("input"))
        if isinstance(run.get("text"), str):
            out[sc.CRUX_RUN_TEXT] = run["text"]
    return out


def step_attributes(step: Mapping[str, Any]) -> dict[str, Any]:
    """A step's recorded values the conventions have no exact name for: the whole receipt, the cache
    placement, offloads, its index, latency and usage as recorded (no prompt text in any)."""
    out: dict[str, Any] = {}
    if isinstance(step.get("request"), Mapping):
        out[sc.CRUX_REQUEST] = _json(step["request"])
    sent = _map(step.get("sent"))
    if isinstance(sent.get("cache"), Mapping):
        out[sc.CRUX_CACHE] = _json(sent["cache"])
    if step.get("offloads"):
        out[sc.CRUX_OFFLOADS] = _json(step["offloads"])
    if isinstance(step.get("index"), int) and not isinstance(step.get("index"), bool):
        out[sc.CRUX_STEP_INDEX] = step["index"]
    if isinstance(step.get("latency_ms"), (int, float)) and not isinstance(step.get("latency_ms"), bool):
        out[sc.CRUX_LATENCY_MS] = float(step["latency_ms"])
    if isinstance(step.get("usage"), Mapping):
        out[sc.CRUX_USAGE] = _json(step["usage"])
    return out


def planner_attributes(receipt: Mapping[str, Any]) -> dict[str, Any]:
    """The planner's decisions of one step (its receipt) as ``crux.*`` attributes."""
    out: dict[str, Any] = {}
    for key, name in (("max_input_tokens", sc.CRUX_INPUT_BUDGET), ("optimize_at", sc.CRUX_OPTIMIZE_AT), ("input_tokens", sc.CRUX_INPUT_TOKENS)):
        if isinstance(receipt.get(key), int):
            out[name] = receipt[key]
    if isinstance(receipt.get("tier"), str):
        out[sc.CRUX_TIER] = receipt["tier"]
    adaptations = [a for a in receipt.get("adaptations") or [] if isinstance(a, Mapping)]
    out[sc.CRUX_ADAPTATION_COUNT] = len(adaptations)
    if adaptations:
        out[sc.CRUX_ADAPTATIONS] = json.dumps([
            {"contributor": a.get("contributor"), "rung": a.get("representation"), "full_tokens": a.get("full_tokens"), "tokens": a.get("selected_tokens")}
            for a in adaptations
        ], ensure_ascii=False)
    dropped = [str(d.get("id")) for d in receipt.get("dropped") or [] if isinstance(d, Mapping)]
    dropped += [str(a.get("contributor")) for a in adaptations if a.get("representation") == "omitted"]
    if dropped:
        out[sc.CRUX_DROPPED] = dropped
    rungs = {str(c.get("contributor")): c.get("representation") for c in receipt.get("contributions") or [] if isinstance(c, Mapping) and c.get("kind") in ("context", "ladder")}
    if rungs:
        out[sc.CRUX_RUNGS] = json.dumps(rungs, ensure_ascii=False)
    warnings = [str(w) for w in receipt.get("warnings") or []]
    if warnings:
        out[sc.CRUX_WARNINGS] = warnings
    return out


def content_attributes(sent: Mapping[str, Any], step: Mapping[str, Any]) -> dict[str, str]:
    """What was sent and answered, in the conventions' message shape (role + parts), as JSON strings."""
    out: dict[str, str] = {}
    if sent.get("system"):
        out[sc.SYSTEM_INSTRUCTIONS] = json.dumps([{"type": "text", "content": sent["system"]}], ensure_ascii=False)
    out[sc.INPUT_MESSAGES] = json.dumps([_message_parts(m) for m in sent.get("messages") or [] if isinstance(m, Mapping)], ensure_ascii=False)
    parts: list[dict[str, Any]] = []
    if isinstance(step.get("response_text"), str):
        parts.append({"type": "text", "content": step["response_text"]})
    parts += [{"type": "tool_call", "id": c.get("id"), "name": c.get("name"), "arguments": c.get("arguments")} for c in step.get("tool_calls") or [] if isinstance(c, Mapping)]
    out[sc.OUTPUT_MESSAGES] = json.dumps([{"role": "assistant", "parts": parts, "finish_reason": "tool_call" if step.get("tool_calls") else "stop"}], ensure_ascii=False)
    tools = [t for t in sent.get("tools") or [] if isinstance(t, Mapping)]
    if tools:
        out[sc.TOOL_DEFINITIONS] = json.dumps([{"type": "function", "name": t.get("name"), "description": t.get("description"), "parameters": t.get("parameters")} for t in tools], ensure_ascii=False)
    return out


def _message_parts(message: Mapping[str, Any]) -> dict[str, Any]:
    role = str(message.get("role") or "user")
    content = message.get("content")
    if role == "tool":
        return {"role": "tool", "parts": [{"type": "tool_call_response", "id": message.get("tool_call_id"), "response": content}]}
    parts: list[dict[str, Any]] = []
    if isinstance(content, str) and content:
        parts.append({"type": "text", "content": content})
    elif isinstance(content, list):
        parts += [{"type": "text", "content": p.get("text")} for p in content if isinstance(p, Mapping) and p.get("type") == "text"]
    for call in message.get("tool_calls") or []:
        function = _map(call.get("function")) if isinstance(call, Mapping) else {}
        arguments = function.get("arguments")
        try:
            decoded = json.loads(arguments) if isinstance(arguments, str) else arguments
        except ValueError:
            decoded = arguments
        parts.append({"type": "tool_call", "id": call.get("id") if isinstance(call, Mapping) else None, "name": function.get("name"), "arguments": decoded})
    return {"role": role, "parts": parts}


def emit_otel(tracer_provider: Any = None, *, content: bool | None = None, queue_size: int = 2048) -> OtelEmitter:
    """Emit every run of this process as OpenTelemetry GenAI spans (see the module's docstring).

    ``tracer_provider``: the SDK ``TracerProvider`` to use (default: the global one). ``content``:
    put messages, system text and tool definitions on the spans (default: the GenAI capture
    environment variable). ``queue_size``: runs waiting for export before new ones are left out.
    Returns the emitter: ``.close()`` (or leaving its ``with`` block) stops it.
    """
    emitter = OtelEmitter(tracer_provider, content=content, queue_size=queue_size)
    recording.add_listener(emitter)
    return emitter


__all__ = ["OtelEmitter", "emit_otel", "planner_attributes", "run_attributes", "step_attributes"]
