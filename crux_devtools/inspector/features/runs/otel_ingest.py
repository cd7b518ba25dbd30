"""OpenTelemetry in: OTLP trace exports (JSON or protobuf) turned into recorded runs.

Each GenAI inference span (``gen_ai.operation.name`` ``chat``/``text_completion``/
``generate_content``, or a span with a model and no operation) becomes one run with origin
``"otel"`` and one step: the model, duration, usage (cache reads and writes included), the error
when the span failed, and, when the application captured content (the instrumentation's
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``, span attributes), the system instructions,
the messages, the tool definitions and the answer. A run's id comes from its trace and span ids, so
an exporter that sends a batch again replaces the same runs instead of doubling them.

Spans without GenAI attributes are accepted and ignored; a span whose attributes have the wrong
type keeps what can be read. Nothing here raises on bad input except ``OtlpError`` (a 4xx).
Attribute names come from ``core.record.otel_semconv`` only. Standard library only, plus
``opentelemetry-proto`` for protobuf bodies (the ``otel`` extra).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from ....core.record import otel_semconv as sc
from .text import step_planned

JSON_TYPE = "application/json"
PROTOBUF_TYPE = "application/x-protobuf"


class OtlpError(Exception):
    """A body this endpoint cannot take: ``status`` is the 4xx to answer, the message says why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class Span:
    """One span, whatever its encoding: ids as lower-case hex, times in ns since the epoch."""

    trace_id: str
    span_id: str
    parent_span_id: str
    name: str
    start_ns: int
    end_ns: int
    status_code: int  # 0 unset, 1 ok, 2 error
    status_message: str
    attributes: dict[str, Any]
    resource: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


@dataclass
class Ingest:
    """What one export request gave: the runs to write and how many spans were ignored or rejected."""

    runs: list[dict[str, Any]] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)  # one-step runs now folded into their trace's run: delete them
    spans: int = 0
    ignored: int = 0
    rejected: int = 0
    problems: list[str] = field(default_factory=list)

    def message(self) -> str:
        parts = []
        if self.rejected:
            parts.append(f"{self.rejected} span(s) rejected: " + "; ".join(self.problems[:3]))
        if self.ignored:
            parts.append(f"{self.ignored} span(s) without gen_ai attributes ignored")
        return "; ".join(parts)


# -- decoding --------------------------------------------------------------------------------------
def decode(body: bytes, content_type: str) -> Iterator[Span]:
    """The spans of an ``ExportTraceServiceRequest`` body; ``OtlpError(400)`` when it is not one."""
    kind = content_type.split(";", 1)[0].strip().lower()
    if kind == JSON_TYPE:
        try:
            data = json.loads(body)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            raise OtlpError(400, f"the body is not JSON: {type(exc).__name__}: {exc}") from None
        if not isinstance(data, dict):
            raise OtlpError(400, f"an OTLP/JSON export is an object with resourceSpans, got {type(data).__name__}")
        return _json_spans(data)
    if kind == PROTOBUF_TYPE:
        return _protobuf_spans(body)
    raise OtlpError(415, f"content type {content_type or '(none)'!r} is not OTLP: send {PROTOBUF_TYPE} or {JSON_TYPE}")


def _json_value(value: Any) -> Any:
    if not isinstance(value, Mapping):
        return None
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError):
            return None
    if "arrayValue" in value:
        values = (value["arrayValue"] or {}).get("values") if isinstance(value["arrayValue"], Mapping) else None
        return [_json_value(v) for v in values] if isinstance(values, list) else []
    if "kvlistValue" in value:
        return _json_attributes((value["kvlistValue"] or {}).get("values") if isinstance(value["kvlistValue"], Mapping) else None)
    if "bytesValue" in value:
        return value["bytesValue"]
    return None


def _json_attributes(items: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(items, list):
        for item in items:
            if isinstance(item, Mapping) and isinstance(item.get("key"), str):
                out[item["key"]] = _json_value(item.get("value"))
    return out


def _json_id(value: Any) -> str:
    """OTLP/JSON ids are hex; some senders use base64 (the protobuf JSON mapping): both are read."""
    if not isinstance(value, str):
        return ""
    text = value.strip()
    if len(text) in (16, 32) and all(c in "0123456789abcdefABCDEF" for c in text):
        return text.lower()
    try:
        return base64.b64decode(text, validate=True).hex()
    except (ValueError, TypeError):
        return ""


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _json_spans(data: Mapping[str, Any]) -> Iterator[Span]:
    for resource_spans in _list(data.get("resourceSpans")):
        resource = _json_attributes(_map(resource_spans.get("resource")).get("attributes"))
        for scope_spans in _list(resource_spans.get("scopeSpans")):
            for span in _list(scope_spans.get("spans")):
                status = _map(span.get("status"))
                code = status.get("code", 0)
                yield Span(
                    trace_id=_json_id(span.get("traceId")), span_id=_json_id(span.get("spanId")), parent_span_id=_json_id(span.get("parentSpanId")),
                    name=str(span.get("name") or ""), start_ns=_int(span.get("startTimeUnixNano")), end_ns=_int(span.get("endTimeUnixNano")),
                    status_code=_STATUS_CODES.get(code, 0) if isinstance(code, str) else _int(code),
                    status_message=str(status.get("message") or ""),
                    attributes=_json_attributes(span.get("attributes")), resource=resource,
                    events=[(str(e.get("name") or ""), _json_attributes(e.get("attributes"))) for e in _list(span.get("events"))],
                )


_STATUS_CODES = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Mapping[str, Any]]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _protobuf_spans(body: bytes) -> Iterator[Span]:
    try:
        from google.protobuf.message import DecodeError  # type: ignore[import-untyped]
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    except ImportError:
        raise OtlpError(415, f"protobuf bodies need the opentelemetry-proto package (pip install 'crux-devtools[otel]'); or send {JSON_TYPE}") from None
    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(body)
    except (DecodeError, ValueError, RuntimeError, RecursionError) as exc:
        raise OtlpError(400, f"the body is not an ExportTraceServiceRequest ({exc}); is it truncated?") from None
    return _pb_spans(request)


def _pb_spans(request: Any) -> Iterator[Span]:
    for resource_spans in request.resource_spans:
        resource = _pb_attributes(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                yield Span(
                    trace_id=span.trace_id.hex(), span_id=span.span_id.hex(), parent_span_id=span.parent_span_id.hex(), name=span.name,
                    start_ns=span.start_time_unix_nano, end_ns=span.end_time_unix_nano, status_code=span.status.code,
                    status_message=span.status.message, attributes=_pb_attributes(span.attributes), resource=resource,
                    events=[(e.name, _pb_attributes(e.attributes)) for e in span.events],
                )


def _pb_value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [_pb_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return _pb_attributes(value.kvlist_value.values)
    if kind == "bytes_value":
        return base64.b64encode(value.bytes_value).decode("ascii")
    return getattr(value, kind)


def _pb_attributes(items: Any) -> dict[str, Any]:
    return {item.key: _pb_value(item.value) for item in items}


def export_response(ingest: Ingest, content_type: str) -> tuple[bytes, str]:
    """The ``ExportTraceServiceResponse`` for ``ingest``, in the request's encoding: a
    ``partial_success`` when spans were rejected (or ignored: a warning, with 0 rejected)."""
    message = ingest.message()
    if content_type.split(";", 1)[0].strip().lower() == PROTOBUF_TYPE:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

        response = ExportTraceServiceResponse()
        if message:
            response.partial_success.rejected_spans = ingest.rejected
            response.partial_success.error_message = message
        return response.SerializeToString(), PROTOBUF_TYPE
    body: dict[str, Any] = {}
    if message:
        body["partialSuccess"] = {"rejectedSpans": str(ingest.rejected), "errorMessage": message}
    return json.dumps(body).encode(), JSON_TYPE


# -- spans to runs ---------------------------------------------------------------------------------
def attribute(attributes: Mapping[str, Any], name: str) -> Any:
    """An attribute by its current name, else by an older spelling (``otel_semconv.LEGACY``)."""
    if name in attributes:
        return attributes[name]
    for old in sc.LEGACY.get(name, ()):
        if old in attributes:
            return attributes[old]
    return None


def is_genai(span: Span) -> bool:
    return any(marker in span.attributes for marker in sc.GENAI_MARKERS)


def is_inference(span: Span) -> bool:
    operation = span.attributes.get(sc.OPERATION_NAME)
    if isinstance(operation, str):
        return operation in sc.INFERENCE_OPERATIONS
    return any(k in span.attributes for k in (sc.REQUEST_MODEL, sc.RESPONSE_MODEL))


def is_run_span(span: Span) -> bool:
    """The span of a whole run: an agent invocation, or the run span ``emit_otel`` writes for a prompt."""
    return span.attributes.get(sc.OPERATION_NAME) == sc.RUN_OPERATION or isinstance(span.attributes.get(sc.CRUX_RUN_ID), str)


def is_tool(span: Span) -> bool:
    return span.attributes.get(sc.OPERATION_NAME) == sc.TOOL_OPERATION


class Stored(Protocol):
    """What merging an export into earlier ones reads of the run store (``RunStore`` has all three)."""

    def get(self, run_id: str) -> dict[str, Any] | None: ...

    def known_ids(self, ids: list[str]) -> set[str]: ...

    def ids_starting(self, prefix: str) -> list[str]: ...


@dataclass
class _Trace:
    """The spans of one trace in one export, sorted into the run's span, its steps and its tools."""

    trace_id: str
    run_spans: list[Span] = field(default_factory=list)
    steps: list[Span] = field(default_factory=list)
    tools: list[Span] = field(default_factory=list)
    seen: dict[str, str] = field(default_factory=dict)  # every span id of the trace -> its parent's id
    count: int = 0

    @property
    def run_id(self) -> str:
        return trace_run_id(self.trace_id)

    def crux_marked(self) -> bool:
        return any(isinstance(s.attributes.get(sc.CRUX_REQUEST), str) or sc.CRUX_STEP_INDEX in s.attributes for s in self.steps)


def trace_run_id(trace_id: str) -> str:
    """The id of the run a trace with an agent span becomes: the trace is the run's key."""
    return f"otel-{trace_id or 'notrace'}"


def ingest(spans: Iterator[Span], *, max_runs: int, store: Stored | None = None) -> Ingest:
    """The runs of an export's spans. Never raises.

    A trace with a run span (``invoke_agent``, or ``emit_otel``'s run span), a tool span, or steps
    ``emit_otel`` wrote is one run, keyed by its trace id: its model-call spans are the steps in start order, its ``execute_tool`` spans go under
    their step. With ``store``, spans of the trace that came in earlier exports are merged in (the
    trace's run as stored, and the one-step runs its model calls made before its run span arrived,
    which ``Ingest.gone`` then lists to delete). Any other trace gives one run per model call, as an
    OpenTelemetry instrumentation of a provider's client emits them. Spans without GenAI
    attributes are ignored; at most ``max_runs`` runs are taken (the rest are rejected and counted).
    """
    out = Ingest()
    traces: dict[str, _Trace] = {}
    for span in spans:
        out.spans += 1
        trace = traces.get(span.trace_id)
        if trace is None:
            trace = traces[span.trace_id] = _Trace(span.trace_id)
        if len(trace.seen) < MAX_SEEN:
            trace.seen[span.span_id] = span.parent_span_id
        if is_run_span(span):
            trace.run_spans.append(span)
        elif is_genai(span) and is_tool(span):
            trace.tools.append(span)
        elif is_genai(span) and is_inference(span):
            trace.steps.append(span)
        else:
            out.ignored += 1
            continue
        trace.count += 1
    stored_runs = store.known_ids([t.run_id for t in traces.values() if t.count]) if store is not None else set()
    for trace in traces.values():
        if not trace.count:
            continue
        as_one = bool(trace.run_spans or trace.tools) or trace.run_id in stored_runs or trace.crux_marked()
        made = 1 if as_one else len(trace.steps)
        if len(out.runs) + made > max_runs:
            out.rejected += trace.count
            if not any("runs are taken" in p for p in out.problems):
                out.problems.append(f"at most {max_runs:,} runs are taken per request; send smaller batches")
            continue
        try:
            if as_one:
                earlier = store.get(trace.run_id) if store is not None and trace.run_id in stored_runs else None
                folded = [r for i in store.ids_starting(trace.run_id + "-") if (r := store.get(i)) is not None] if store is not None else []
                out.runs.append(trace_run(trace, earlier, folded))
                out.gone += [str(r.get("id")) for r in folded]
            else:
                out.runs += [span_run(span) for span in trace.steps]
        except Exception as exc:  # noqa: BLE001 - one odd trace is rejected, never the whole export
            out.rejected += trace.count
            out.problems.append(f"trace {trace.trace_id or '?'}: {type(exc).__name__}: {exc}")
    return out


MAX_SEEN = 5_000  # span ids of one trace kept per export, to tell a parent that never arrived


def _count(attributes: Mapping[str, Any], name: str) -> int | None:
    value = attribute(attributes, name)
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and value >= 0:
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _usage(attributes: Mapping[str, Any]) -> dict[str, int] | None:
    tokens_in, tokens_out = _count(attributes, sc.USAGE_INPUT_TOKENS), _count(attributes, sc.USAGE_OUTPUT_TOKENS)
    if tokens_in is None and tokens_out is None:
        return None
    usage = {"input_tokens": tokens_in or 0, "output_tokens": tokens_out or 0}
    for key, name in (("cache_read_tokens", sc.USAGE_CACHE_READ_TOKENS), ("cache_write_tokens", sc.USAGE_CACHE_WRITE_TOKENS)):
        value = _count(attributes, name)
        if value:
            usage[key] = value
    return usage


def _json_attr(attributes: Mapping[str, Any], name: str) -> Any:
    """A content attribute: a JSON string per the conventions (or already structured)."""
    value = attributes.get(name)
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return None
    return value


def _parts_text(parts: Any) -> str | None:
    if isinstance(parts, str):
        return parts
    if not isinstance(parts, list):
        return None
    texts = [str(p.get("content") if p.get("content") is not None else p.get("text") or "") for p in parts if isinstance(p, Mapping) and p.get("type") in ("text", None)]
    return "".join(texts) if texts else None


def _tool_calls(parts: Any) -> list[dict[str, Any]]:
    calls = []
    for p in parts if isinstance(parts, list) else []:
        if isinstance(p, Mapping) and p.get("type") == "tool_call":
            arguments = p.get("arguments")
            calls.append({"id": str(p.get("id") or ""), "name": str(p.get("name") or ""), "arguments": arguments if isinstance(arguments, (dict, list)) else _maybe_json(arguments)})
    return calls


def _maybe_json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value if value is not None else {}


def chat_messages(messages: Any) -> tuple[list[str], list[dict[str, Any]]]:
    """GenAI ``gen_ai.input.messages`` (role + parts) as system texts and OpenAI-style chat messages."""
    system: list[str] = []
    out: list[dict[str, Any]] = []
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, Mapping):
            continue
        role, parts = str(message.get("role") or "user"), message.get("parts", message.get("content"))
        text = _parts_text(parts)
        if role == "system":
            system.append(text or "")
            continue
        responses = [p for p in parts if isinstance(p, Mapping) and p.get("type") == "tool_call_response"] if isinstance(parts, list) else []
        for p in responses:
            response = p.get("response", p.get("result"))
            out.append({"role": "tool", "tool_call_id": str(p.get("id") or ""), "content": response if isinstance(response, str) else json.dumps(response, ensure_ascii=False)})
        calls = _tool_calls(parts)
        if role == "tool" or (responses and text is None and not calls):
            continue
        message_out: dict[str, Any] = {"role": role, "content": text}
        if calls:
            message_out["tool_calls"] = [
                {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": json.dumps(c["arguments"], ensure_ascii=False)}} for c in calls
            ]
        out.append(message_out)
    return system, out


def _tools(definitions: Any) -> list[dict[str, Any]]:
    tools = []
    for d in definitions if isinstance(definitions, list) else []:
        if not isinstance(d, Mapping):
            continue
        nested = d.get("function")
        function: Mapping[str, Any] = nested if isinstance(nested, Mapping) else d
        tools.append({"name": str(function.get("name") or ""), "description": str(function.get("description") or ""), "parameters": function.get("parameters") or {}})
    return tools


def _iso(ns: int) -> str:
    return datetime.fromtimestamp(ns / 1e9, UTC).isoformat(timespec="microseconds") if ns > 0 else datetime.now(UTC).isoformat(timespec="microseconds")


def _loads(value: Any) -> Any:
    """A ``crux.*`` JSON attribute, or ``None`` when it is missing or not JSON (cut by a length limit)."""
    if not isinstance(value, str):
        return None
    try:
        return json.loads(value)
    except ValueError:
        return None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 else None


def _error(span: Span) -> dict[str, Any] | None:
    a = span.attributes
    recorded = _loads(a.get(sc.CRUX_ERROR))
    if isinstance(recorded, dict):
        return recorded
    error_type = a.get(sc.ERROR_TYPE)
    if span.status_code != 2 and not error_type:
        return None
    error: dict[str, Any] = {"type": str(error_type or "Error"), "message": span.status_message or str(error_type or "the span ended with an error status"), "traceback": None}
    for name, event_attributes in span.events:
        if name == "exception":
            error["type"] = str(event_attributes.get("exception.type") or error["type"])
            error["message"] = str(event_attributes.get("exception.message") or error["message"])
            error["traceback"] = event_attributes.get("exception.stacktrace")
    return error


_CONTENT = frozenset({sc.INPUT_MESSAGES, sc.OUTPUT_MESSAGES, sc.SYSTEM_INSTRUCTIONS, sc.TOOL_DEFINITIONS, sc.CRUX_REQUEST, sc.CRUX_RUN_INPUT,
                      sc.CRUX_RUN_TEXT, sc.CRUX_TOOL_OUTPUT, sc.TOOL_CALL_ARGUMENTS, sc.TOOL_CALL_RESULT})


def _kept_attributes(a: Mapping[str, Any]) -> dict[str, Any]:
    """A span's attributes as the run keeps them: without the content and the receipt (both are in the step)."""
    return {k: v for k, v in a.items() if k not in _CONTENT}


def _receipt(span: Span, model: str | None) -> dict[str, Any]:
    """The step's receipt: as ``emit_otel`` recorded it (``crux.request``), else what the other
    ``crux.*`` attributes say of it, else (a span from outside crux) only its id and model."""
    a = span.attributes
    recorded = _loads(a.get(sc.CRUX_REQUEST))
    if isinstance(recorded, dict):
        return recorded
    receipt: dict[str, Any] = {"id": span.span_id, "model": model}
    for key, name in (("input_tokens", sc.CRUX_INPUT_TOKENS), ("max_input_tokens", sc.CRUX_INPUT_BUDGET), ("optimize_at", sc.CRUX_OPTIMIZE_AT)):
        value = _count(a, name)
        if value is not None:
            receipt[key] = value
    if isinstance(a.get(sc.CRUX_TIER), str):
        receipt["tier"] = a[sc.CRUX_TIER]
    adaptations = _loads(a.get(sc.CRUX_ADAPTATIONS))
    if isinstance(adaptations, list):
        receipt["adaptations"] = [
            {"contributor": x.get("contributor"), "representation": x.get("rung"), "full_tokens": x.get("full_tokens"), "selected_tokens": x.get("tokens")}
            for x in adaptations if isinstance(x, Mapping)
        ]
    dropped = a.get(sc.CRUX_DROPPED)
    if isinstance(dropped, list):
        receipt["dropped"] = [{"id": str(d)} for d in dropped]
    warnings = a.get(sc.CRUX_WARNINGS)
    if isinstance(warnings, list):
        receipt["warnings"] = [str(w) for w in warnings]
    return receipt


def span_step(span: Span) -> dict[str, Any]:
    """One model-call span as a step (``Step.to_dict()``'s shape; ``index`` set by its run), with the
    span's ids, times and attributes under ``otel``."""
    a = span.attributes
    model = a.get(sc.RESPONSE_MODEL) or a.get(sc.REQUEST_MODEL)
    model = model if isinstance(model, str) else None
    recorded_usage = _loads(a.get(sc.CRUX_USAGE))
    usage = recorded_usage if isinstance(recorded_usage, dict) else _usage(a)
    latency = _number(a.get(sc.CRUX_LATENCY_MS))
    if latency is None:
        latency = max(0.0, (span.end_ns - span.start_ns) / 1e6) if span.end_ns and span.start_ns else None
    system_texts, messages = chat_messages(_json_attr(a, sc.INPUT_MESSAGES))
    instructions = _json_attr(a, sc.SYSTEM_INSTRUCTIONS)
    if instructions is not None:
        system_texts.insert(0, _parts_text(instructions) or "")
    output = _json_attr(a, sc.OUTPUT_MESSAGES)
    first = output[0] if isinstance(output, list) and output and isinstance(output[0], Mapping) else {}
    text = _parts_text(first.get("parts")) if first else None
    calls = _tool_calls(first.get("parts")) if first else []
    captured = sc.INPUT_MESSAGES in a or sc.OUTPUT_MESSAGES in a
    sent: dict[str, Any] = {"system": "\n\n".join(system_texts), "messages": messages, "tools": _tools(_json_attr(a, sc.TOOL_DEFINITIONS)), "max_tokens": _count(a, sc.REQUEST_MAX_TOKENS)}
    cache = _loads(a.get(sc.CRUX_CACHE))
    if isinstance(cache, dict):
        sent["cache"] = cache
    offloads = _loads(a.get(sc.CRUX_OFFLOADS))
    index = a.get(sc.CRUX_STEP_INDEX)
    return {
        "index": index if isinstance(index, int) and not isinstance(index, bool) else 0,
        "request": _receipt(span, model),
        "sent": sent,
        "response_text": text,
        "tool_calls": calls,
        "tool_results": [],
        "offloads": offloads if isinstance(offloads, list) else [],
        "usage": usage,
        "latency_ms": latency,
        "error": _error(span),
        "otel": {
            "trace_id": span.trace_id, "span_id": span.span_id, "parent_span_id": span.parent_span_id or None, "name": span.name,
            "start_ns": span.start_ns, "end_ns": span.end_ns, "content_captured": captured, "attributes": _kept_attributes(a), "tools": [],
        },
    }


def tool_record(span: Span) -> dict[str, Any]:
    """One ``execute_tool`` span as kept under its step (``otel.tools``): what it says and where it sits."""
    a = span.attributes
    result: dict[str, Any] = {"name": str(a.get(sc.TOOL_NAME) or span.name.removeprefix("execute_tool ").strip()), "call_id": str(a.get(sc.TOOL_CALL_ID) or "")}
    if sc.CRUX_TOOL_OUTPUT in a:
        result["output"] = _loads(a.get(sc.CRUX_TOOL_OUTPUT))
    raw = a.get(sc.TOOL_CALL_RESULT)
    if raw is not None:
        result["model_output"] = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)
        result.setdefault("output", raw)
    told = _loads(a.get(sc.CRUX_TOOL_ERROR))
    result["error"] = told if isinstance(told, dict) else (_error(span) if span.status_code == 2 or a.get(sc.ERROR_TYPE) else None)
    index = a.get(sc.CRUX_STEP_INDEX)
    return {
        "span_id": span.span_id, "parent_span_id": span.parent_span_id or None, "name": span.name, "start_ns": span.start_ns, "end_ns": span.end_ns,
        "step": index if isinstance(index, int) and not isinstance(index, bool) else None, "arguments": _maybe_json(a.get(sc.TOOL_CALL_ARGUMENTS)) if sc.TOOL_CALL_ARGUMENTS in a else None,
        "result": result,
    }


def _step_of(tool: Mapping[str, Any], steps: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The step a tool call goes under: the one whose span is its parent, else the one it names
    (``crux.step.index``), else the one that asked for its call id, else the last that ended before
    it started; ``None`` when it started before every step."""
    for step in steps:
        if step["otel"]["span_id"] == tool.get("parent_span_id"):
            return step
    if isinstance(tool.get("step"), int):
        for step in steps:
            if step["otel"]["attributes"].get(sc.CRUX_STEP_INDEX) == tool["step"]:
                return step
    call_id = tool["result"].get("call_id")
    if call_id:
        for step in steps:
            if any(c.get("id") == call_id for c in step.get("tool_calls") or []):
                return step
    before = [s for s in steps if (s["otel"].get("end_ns") or 0) <= (tool.get("start_ns") or 0)]
    return before[-1] if before else None


def _place_tools(steps: list[dict[str, Any]], tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Put each tool record under its step (in start order); returns those that fit no step."""
    for step in steps:
        added = set(step["otel"].get("added_calls") or [])
        step["tool_calls"] = [c for c in step.get("tool_calls") or [] if c.get("id") not in added]  # placed anew below
        step["otel"]["tools"], step["otel"]["added_calls"] = [], []
        step["tool_results"] = []
    loose: list[dict[str, Any]] = []
    for tool in sorted(tools, key=lambda t: (t.get("start_ns") or 0, t.get("span_id") or "")):
        home = _step_of(tool, steps)
        if home is None:
            loose.append(tool)
            continue
        home["otel"]["tools"].append(tool)
        home["tool_results"].append(tool["result"])
        if tool.get("arguments") is not None and not any(c.get("id") == tool["result"]["call_id"] for c in home["tool_calls"]):
            home["tool_calls"].append({"id": tool["result"]["call_id"], "name": tool["result"]["name"], "arguments": tool["arguments"]})
            home["otel"]["added_calls"].append(tool["result"]["call_id"])  # known from the tool span only
    return loose


def _planned(steps: list[dict[str, Any]]) -> bool:
    return any(step_planned(s) for s in steps)


def _sum_usage(steps: list[dict[str, Any]]) -> dict[str, int] | None:
    reported = [s["usage"] for s in steps if isinstance(s.get("usage"), dict)]
    if not reported:
        return None
    return {key: sum(int(u.get(key) or 0) for u in reported) for key in ("input_tokens", "output_tokens")}


def span_run(span: Span) -> dict[str, Any]:
    """One GenAI inference span as a run (the recorded-run JSON shape), with one step."""
    step = span_step(span)
    step["index"] = 0
    a = span.attributes
    target = a.get(sc.CRUX_TARGET) or a.get(sc.AGENT_NAME) or span.resource.get("service.name") or span.name or "otel"
    messages = step["sent"]["messages"]
    last_user = next((m.get("content") for m in reversed(messages) if m.get("role") == "user"), None)
    return {
        "id": f"otel-{span.trace_id or 'notrace'}-{span.span_id or 'nospan'}",
        "target": str(target),
        "kind": "span",
        "file": None,
        "line": None,
        "origin": "otel",
        "started_at": _iso(span.start_ns),
        "duration_ms": step["latency_ms"],
        "status": "error" if step["error"] else "ok",
        "error": step["error"],
        "model": step["request"].get("model") if isinstance(step["request"].get("model"), str) else None,
        "input": last_user,
        "text": step["response_text"],
        "usage": step["usage"],
        "planned": _planned([step]),
        "steps": [step],
    }


def _run_span_record(span: Span) -> dict[str, Any]:
    return {
        "span_id": span.span_id, "parent_span_id": span.parent_span_id or None, "name": span.name, "start_ns": span.start_ns, "end_ns": span.end_ns,
        "status_code": span.status_code, "status_message": span.status_message, "attributes": span.attributes, "events": span.events,
        "service": span.resource.get("service.name"),
    }


def trace_run(trace: _Trace, earlier: Mapping[str, Any] | None = None, folded: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """One trace with a run span as one run: the spans of this export merged with ``earlier`` (the
    trace's run as stored from earlier exports) and ``folded`` (one-step runs its model calls made
    before the run span arrived). A span sent again replaces the one stored."""
    old = _map(earlier.get("otel")) if earlier else {}
    steps: dict[str, dict[str, Any]] = {}
    tools: dict[str, dict[str, Any]] = {}
    for run in [*([earlier] if earlier else []), *(folded or [])]:
        for step in run.get("steps") or []:
            record = _map(step.get("otel")) if isinstance(step, Mapping) else {}
            if record.get("span_id"):
                steps[str(record["span_id"])] = dict(step)
                for tool in record.get("tools") or []:
                    tools[str(tool.get("span_id"))] = tool
    for tool in old.get("loose_tools") or []:
        tools[str(tool.get("span_id"))] = tool
    for span in trace.steps:
        steps[span.span_id] = span_step(span)
    for span in trace.tools:
        tools[span.span_id] = tool_record(span)
    run_span = dict(old["run_span"]) if isinstance(old.get("run_span"), Mapping) else None
    if trace.run_spans:
        first = min(trace.run_spans, key=lambda s: (s.start_ns, s.span_id))
        if run_span is None or first.start_ns <= int(run_span.get("start_ns") or 0) or first.span_id == run_span.get("span_id"):
            run_span = _run_span_record(first)
    seen: dict[str, str] = {str(k): str(v or "") for k, v in _map(old.get("spans")).items()}
    seen.update(trace.seen)
    for step_id, step in steps.items():
        seen.setdefault(step_id, str(step["otel"].get("parent_span_id") or ""))
    ordered = sorted(steps.values(), key=lambda s: (int(s["otel"].get("start_ns") or 0), _index_key(s), str(s["otel"]["span_id"])))
    loose = _place_tools(ordered, list(tools.values()))
    run_span_id = run_span["span_id"] if run_span else None
    for i, step in enumerate(ordered):
        step["index"] = i
        parent = step["otel"].get("parent_span_id")
        step["otel"]["parent_missing"] = bool(parent) and parent not in seen and parent != run_span_id
    for tool in loose:
        tool["parent_missing"] = bool(tool.get("parent_span_id")) and tool["parent_span_id"] not in seen
    a: Mapping[str, Any] = run_span["attributes"] if run_span else {}
    error = _error(Span(trace.trace_id, run_span["span_id"], run_span.get("parent_span_id") or "", run_span["name"], run_span["start_ns"], run_span["end_ns"],
                        run_span["status_code"], run_span["status_message"], dict(a), {}, [tuple(e) for e in run_span.get("events") or []])) if run_span else None
    if error is None:
        error = next((s["error"] for s in reversed(ordered) if s.get("error")), None)
    first_step = _map(ordered[0]["otel"]) if ordered else {}
    start_ns = int(run_span["start_ns"]) if run_span else int(first_step.get("start_ns") or 0)
    end_ns = int(run_span["end_ns"]) if run_span else max((int(s["otel"].get("end_ns") or 0) for s in ordered), default=0)
    duration = _number(a.get(sc.CRUX_RUN_DURATION_MS))
    if duration is None:
        duration = max(0.0, (end_ns - start_ns) / 1e6) if start_ns and end_ns else None
    status = a.get(sc.CRUX_RUN_STATUS)
    if status not in ("ok", "error", "max_steps"):
        status = "error" if error else "ok"
    step_targets = [s["otel"]["attributes"].get(sc.CRUX_TARGET) for s in ordered]
    service = run_span.get("service") if run_span else None
    target = a.get(sc.CRUX_TARGET) or a.get(sc.AGENT_NAME) or next((t for t in step_targets if t), None) or service or (run_span or {}).get("name") or "otel"
    model = a.get(sc.CRUX_RUN_MODEL) or a.get(sc.RESPONSE_MODEL) or a.get(sc.REQUEST_MODEL)
    if not isinstance(model, str):
        model = next((m for s in reversed(ordered) if isinstance(m := s["request"].get("model"), str)), None)
    recorded_usage = _loads(a.get(sc.CRUX_USAGE))
    usage = recorded_usage if isinstance(recorded_usage, dict) else (_usage(a) or _sum_usage(ordered))
    if sc.CRUX_RUN_INPUT in a:
        run_input = _loads(a.get(sc.CRUX_RUN_INPUT))
    else:
        messages = ordered[0]["sent"]["messages"] if ordered else []
        run_input = next((m.get("content") for m in messages if m.get("role") == "user"), None)
    text = a[sc.CRUX_RUN_TEXT] if isinstance(a.get(sc.CRUX_RUN_TEXT), str) else (ordered[-1]["response_text"] if ordered else None)
    kind = a.get(sc.CRUX_RUN_KIND) or ("agent" if a.get(sc.OPERATION_NAME) == sc.RUN_OPERATION else "span")
    line = a.get(sc.CODE_LINE_NUMBER)
    extra = {k: v for k, v in seen.items() if k not in steps and k not in tools}
    return {
        "id": trace_run_id(trace.trace_id),
        "target": str(target),
        "kind": str(kind),
        "file": a.get(sc.CODE_FILE_PATH) if isinstance(a.get(sc.CODE_FILE_PATH), str) else None,
        "line": line if isinstance(line, int) and not isinstance(line, bool) else None,
        "origin": "otel",
        "started_at": a[sc.CRUX_RUN_STARTED_AT] if isinstance(a.get(sc.CRUX_RUN_STARTED_AT), str) else _iso(start_ns),
        "duration_ms": duration,
        "status": status,
        "error": error,
        "model": model,
        "input": run_input,
        "text": text,
        "usage": usage,
        "planned": _planned(ordered),
        "steps": ordered,
        "otel": {
            "trace_id": trace.trace_id, "run_span": run_span,
            "recorded_as": a.get(sc.CRUX_RUN_ID) if isinstance(a.get(sc.CRUX_RUN_ID), str) else None,
            "run_span_missing": run_span is None, "loose_tools": loose, "spans": dict(list(extra.items())[:MAX_SEEN]),
        },
    }


def _index_key(step: Mapping[str, Any]) -> int:
    index = _map(step.get("otel")).get("attributes", {}).get(sc.CRUX_STEP_INDEX)
    return index if isinstance(index, int) and not isinstance(index, bool) else 1 << 62


__all__ = ["Ingest", "OtlpError", "Span", "Stored", "decode", "export_response", "ingest", "span_run", "span_step", "trace_run", "trace_run_id"]
