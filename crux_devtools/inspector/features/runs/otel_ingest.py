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
from typing import Any

from ....core.record import otel_semconv as sc

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


def ingest(spans: Iterator[Span], *, max_runs: int) -> Ingest:
    """The runs of an export's spans: every GenAI inference span, up to ``max_runs`` (the rest are
    rejected and counted); other spans are ignored. Never raises."""
    out = Ingest()
    for span in spans:
        out.spans += 1
        if not is_genai(span) or not is_inference(span):
            out.ignored += 1
            continue
        if len(out.runs) >= max_runs:
            out.rejected += 1
            if len(out.problems) < 1:
                out.problems.append(f"at most {max_runs:,} GenAI spans are taken per request; send smaller batches")
            continue
        try:
            out.runs.append(span_run(span))
        except Exception as exc:  # noqa: BLE001 - one odd span is rejected, never the whole export
            out.rejected += 1
            out.problems.append(f"span {span.span_id or '?'}: {type(exc).__name__}: {exc}")
    return out


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


def span_run(span: Span) -> dict[str, Any]:
    """One GenAI inference span as a run (the recorded-run JSON shape), with one step."""
    a = span.attributes
    model = a.get(sc.RESPONSE_MODEL) or a.get(sc.REQUEST_MODEL)
    model = model if isinstance(model, str) else None
    usage = _usage(a)
    duration = max(0.0, (span.end_ns - span.start_ns) / 1e6) if span.end_ns and span.start_ns else None
    error = None
    error_type = a.get(sc.ERROR_TYPE)
    if span.status_code == 2 or error_type:
        error = {"type": str(error_type or "Error"), "message": span.status_message or str(error_type or "the span ended with an error status"), "traceback": None}
        for name, event_attributes in span.events:
            if name == "exception":
                error["type"] = str(event_attributes.get("exception.type") or error["type"])
                error["message"] = str(event_attributes.get("exception.message") or error["message"])
                error["traceback"] = event_attributes.get("exception.stacktrace")
    system_texts, messages = chat_messages(_json_attr(a, sc.INPUT_MESSAGES))
    instructions = _json_attr(a, sc.SYSTEM_INSTRUCTIONS)
    if instructions is not None:
        system_texts.insert(0, _parts_text(instructions) or "")
    output = _json_attr(a, sc.OUTPUT_MESSAGES)
    first = output[0] if isinstance(output, list) and output and isinstance(output[0], Mapping) else {}
    text = _parts_text(first.get("parts")) if first else None
    calls = _tool_calls(first.get("parts")) if first else []
    captured = sc.INPUT_MESSAGES in a or sc.OUTPUT_MESSAGES in a
    max_tokens = _count(a, sc.REQUEST_MAX_TOKENS)
    step = {
        "index": 0,
        "request": {"id": span.span_id, "model": model},
        "sent": {"system": "\n\n".join(system_texts), "messages": messages, "tools": _tools(_json_attr(a, sc.TOOL_DEFINITIONS)), "max_tokens": max_tokens},
        "response_text": text,
        "tool_calls": calls,
        "tool_results": [],
        "offloads": [],
        "usage": usage,
        "latency_ms": duration,
        "error": error,
        "otel": {
            "trace_id": span.trace_id, "span_id": span.span_id, "parent_span_id": span.parent_span_id or None, "name": span.name,
            "content_captured": captured,
            "attributes": {k: v for k, v in a.items() if k not in (sc.INPUT_MESSAGES, sc.OUTPUT_MESSAGES, sc.SYSTEM_INSTRUCTIONS, sc.TOOL_DEFINITIONS)},
        },
    }
    target = a.get(sc.CRUX_TARGET) or a.get(sc.AGENT_NAME) or span.resource.get("service.name") or span.name or "otel"
    last_user = next((m.get("content") for m in reversed(messages) if m.get("role") == "user"), None)
    return {
        "id": f"otel-{span.trace_id or 'notrace'}-{span.span_id or 'nospan'}",
        "target": str(target),
        "kind": "span",
        "file": None,
        "line": None,
        "origin": "otel",
        "started_at": _iso(span.start_ns),
        "duration_ms": duration,
        "status": "error" if error else "ok",
        "error": error,
        "model": model,
        "input": last_user,
        "text": text,
        "usage": usage,
        "steps": [step],
    }


__all__ = ["Ingest", "OtlpError", "Span", "decode", "export_response", "ingest", "span_run"]
