"""``serve --host 0.0.0.0`` with ``CRUX_DEVTOOLS_OTLP_TOKEN`` set: a remote exporter, which names the
server by the address it reaches it at (a ``Host`` that is not loopback), gets its spans stored with
the token, and is refused without it; the pages and /api still refuse that ``Host``. A real uvicorn
bound to 0.0.0.0, reached with a foreign ``Host`` header."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from test_otel_ingest import GENAI, json_span, otlp_json, stored
from web_conftest_helpers import LiveServer
from web_runs_fakes import RecordingSession

from crux_devtools.web.app import create_app
from crux_devtools.web.routes.otel import TOKEN_ENV

FOREIGN = "192.0.2.10"  # how a machine on the network names this one (TEST-NET-1: never a real host)


@pytest.fixture
def wide(tmp_path: Path) -> Iterator[LiveServer]:
    server = LiveServer(create_app(RecordingSession(tmp_path), bound_host="0.0.0.0", manage_session=False), host="0.0.0.0")
    server.start()
    try:
        yield server
    finally:
        server.stop()


def request(server: LiveServer, method: str, path: str, body: str | None = None, **headers: str) -> httpx.Response:
    return httpx.request(method, f"{server.url}{path}", content=body, timeout=120,
                         headers={"host": f"{FOREIGN}:{server.port}", "content-type": "application/json", **headers})


def test_with_the_token_a_remote_exporter_is_taken_and_nothing_else_opens(wide: LiveServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_ENV, "s3cret")
    body = json.dumps(otlp_json(json_span(1, **GENAI)))
    taken = request(wide, "POST", "/v1/traces", body, authorization="Bearer s3cret")
    assert taken.status_code == 200, taken.text
    assert [r["id"] for r in stored(tmp_path, 1)] == [f"otel-{1:032x}-{1:016x}"]
    assert request(wide, "POST", "/v1/traces", body).status_code == 401  # the token, not the Host, is what opens it
    assert request(wide, "POST", "/v1/traces", body, authorization="Bearer s3cret", origin=f"http://{FOREIGN}").status_code == 403  # a page cannot
    for method, path in (("GET", "/"), ("GET", "/api/report"), ("GET", "/runs"), ("GET", "/v1/traces"), ("POST", "/api/run")):
        refused = request(wide, method, path, "{}" if method == "POST" else None, authorization="Bearer s3cret")
        assert refused.status_code == 400 and "is not allowed" in refused.text, (method, path, refused.status_code)


def test_without_the_token_a_foreign_host_is_refused_everywhere(wide: LiveServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    refused = request(wide, "POST", "/v1/traces", json.dumps(otlp_json(json_span(1, **GENAI))))
    assert refused.status_code == 400 and "is not allowed" in refused.text
