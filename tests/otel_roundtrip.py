"""Comparing a recorded run with the run ``/v1/traces`` made of its spans, field by field (the
OpenTelemetry round-trip tests and ``benchmarks/bench_otel_roundtrip.py`` share it)."""

from __future__ import annotations

from typing import Any

RUN_FIELDS = ("target", "kind", "file", "line", "status", "error", "model", "input", "text", "usage", "started_at", "duration_ms")
STEP_FIELDS = ("index", "request", "sent", "response_text", "tool_calls", "tool_results", "offloads", "usage", "latency_ms", "error")
CONTENT_FIELDS = frozenset({"input", "text", "sent", "response_text", "tool_calls", "tool_results"})


def differences(recorded: dict[str, Any], ingested: dict[str, Any], *, content: bool = True) -> list[str]:
    """Every field where ``ingested`` is not ``recorded`` (empty: the round trip is exact). Without
    ``content``, the fields that carry prompt text are left out (the spans do not have them)."""
    out = []
    for key in RUN_FIELDS:
        if (content or key not in CONTENT_FIELDS) and recorded.get(key) != ingested.get(key):
            out.append(f"run.{key}: {recorded.get(key)!r:.200} != {ingested.get(key)!r:.200}")
    steps, back = recorded.get("steps") or [], ingested.get("steps") or []
    if len(steps) != len(back):
        out.append(f"steps: {len(steps)} != {len(back)}")
    for a, b in zip(steps, back, strict=False):
        for key in STEP_FIELDS:
            if (content or key not in CONTENT_FIELDS) and a.get(key) != b.get(key):
                out.append(f"step {a.get('index')}.{key}: {a.get(key)!r:.300} != {b.get(key)!r:.300}")
    return out
