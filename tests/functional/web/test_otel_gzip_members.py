"""A gzip OTLP body of several members (concatenated, as RFC 1952 allows) is read whole: every
member's spans become runs, on a real uvicorn; a body cut inside a member is refused with a reason."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from test_otel_ingest import GENAI, json_span, otlp_json, post, server, stored  # noqa: F401 - server is a fixture
from web_conftest_helpers import LiveServer

from crux_devtools.core.record.runstore import RunStore


def test_every_member_of_a_multi_member_gzip_body_is_stored(server: LiveServer, tmp_path: Path) -> None:  # noqa: F811
    first = gzip.compress(json.dumps(otlp_json(json_span(1, **GENAI), json_span(2, **GENAI))).encode())
    second = gzip.compress(json.dumps(otlp_json(json_span(3, **GENAI))).encode())
    response = post(server, first + second, "application/json", **{"content-encoding": "gzip"})
    assert response.status_code == 200 and response.json() == {}, response.text  # a full success: nothing was left out
    runs = stored(tmp_path, 3)
    assert sorted(r["id"] for r in runs) == [f"otel-{n:032x}-{n:016x}" for n in (1, 2, 3)]


def test_protobuf_members_are_read_one_by_one(server: LiveServer, tmp_path: Path) -> None:  # noqa: F811
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
    from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

    def export(n: int) -> bytes:
        attributes = [KeyValue(key=k, value=AnyValue(string_value=v)) for k, v in GENAI.items()]
        span = Span(trace_id=n.to_bytes(16, "big"), span_id=n.to_bytes(8, "big"), name=f"chat {n}", attributes=attributes,
                    start_time_unix_nano=1_764_000_000_000_000_000, end_time_unix_nano=1_764_000_000_050_000_000)
        return ExportTraceServiceRequest(resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=[span])])]).SerializeToString()

    response = post(server, gzip.compress(export(7)) + gzip.compress(export(8)), "application/x-protobuf", **{"content-encoding": "gzip"})
    assert response.status_code == 200, response.text
    assert sorted(r["id"] for r in stored(tmp_path, 2)) == [f"otel-{n:032x}-{n:016x}" for n in (7, 8)]


def test_a_gzip_body_cut_inside_a_member_is_refused_and_nothing_is_stored(server: LiveServer, tmp_path: Path) -> None:  # noqa: F811
    whole = gzip.compress(json.dumps(otlp_json(json_span(4, **GENAI))).encode())
    for body, says in ((whole[: len(whole) - 6], "member 1"), (whole + whole[:12], "member 2")):
        response = post(server, body, "application/json", **{"content-encoding": "gzip"})
        assert response.status_code == 400 and says in response.text and "cut short" in response.text, response.text
    with RunStore.for_project(tmp_path, create=False) as store:
        assert store.count() == 0
