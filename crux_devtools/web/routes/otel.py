"""``POST /v1/traces``: an OTLP/HTTP trace receiver, so spans an application already emits become runs.

Point any OpenTelemetry exporter at ``http://127.0.0.1:4400/v1/traces`` (``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``);
its GenAI spans appear on ``/runs`` (origin ``otel``) like any recorded run. Conversion is
``inspector/features/runs/otel_ingest.py``; this module is the HTTP edge:

- Who may send: by default only this machine (a loopback client address). With the environment
  variable ``CRUX_DEVTOOLS_OTLP_TOKEN`` set when ``serve`` starts, every sender must present it as
  ``Authorization: Bearer <token>`` (and then any address may send, under any ``Host`` it names the
  server by: ``security.remote_ingest`` lets this one route past the Host check).
- Bad input is a 4xx with a reason, never a 500: 415 for another content type (or protobuf without
  ``opentelemetry-proto``), 413 past ``MAX_BODY`` bytes (after gzip too), 400 for a body that is not
  an export (truncated protobuf, broken JSON, a gzip body cut short). A gzip body of several members
  (concatenated, as RFC 1952 allows) is read member by member, each an export of its own; spans that cannot become runs are a partial success
  (OTLP's ``partial_success``) and the rest are stored.
- Runs are written in a worker thread, ``BATCH`` to a transaction, never pruning: a stored run is
  never lost to an export. Exports are merged one at a time: the spans of a trace that come in several
  exports (an agent's span ends, and is exported, after its steps') end up in the one run of the trace.
"""

from __future__ import annotations

import asyncio
import hmac
import itertools
import logging
import threading
import zlib
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from ...core.record.runstore import RunStore, RunStoreError
from ...inspector.features.runs.otel_ingest import OtlpError, decode, export_response, ingest
from ..security import LOCAL_HOSTS, OTLP_MAX_BODY_BYTES, TOKEN_ENV, otlp_token

router = APIRouter()
log = logging.getLogger(__name__)

MAX_BODY = OTLP_MAX_BODY_BYTES  # bytes of one export, after decompression
MAX_RUNS = 20_000  # GenAI spans taken from one export; the rest are rejected (partial success)
BATCH = 200  # runs written per transaction
LOOPBACK = frozenset(LOCAL_HOSTS)


def _refuse(status: int, message: str) -> Response:
    return Response(message + "\n", status_code=status, media_type="text/plain; charset=utf-8")


def _allowed(request: Request) -> Response | None:
    token = otlp_token()
    if token:
        sent = request.headers.get("authorization", "")
        if not hmac.compare_digest(sent.encode(), f"Bearer {token}".encode()):
            return _refuse(401, f"a token is required: send Authorization: Bearer <the value of {TOKEN_ENV}>")
        return None
    client = request.client.host if request.client else ""
    if client not in LOOPBACK and not client.startswith("127."):
        return _refuse(403, f"spans are taken from this machine only; to take them from {client or 'elsewhere'}, start serve with {TOKEN_ENV} set and send it as a Bearer token")
    return None


async def _body(request: Request) -> list[bytes]:
    """The export's body, one entry per gzip member (a gzip body may be several members one after
    the other, each a whole export: every one is read), or the plain body as the one entry."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > MAX_BODY:
        raise OtlpError(413, f"the export is {int(declared):,} bytes; at most {MAX_BODY:,} are taken: send smaller batches")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise OtlpError(413, f"the export is over {MAX_BODY:,} bytes: send smaller batches")
        chunks.append(chunk)
    body = b"".join(chunks)
    encoding = request.headers.get("content-encoding", "identity").strip().lower()
    if encoding == "gzip":
        return gzip_members(body)
    if encoding not in ("identity", ""):
        raise OtlpError(415, f"content encoding {encoding!r} is not supported: send gzip or none")
    return [body]


def gzip_members(body: bytes) -> list[bytes]:
    """Every member of a gzip body, decompressed (``MAX_BODY`` bytes in all at most): ``OtlpError``
    400 for a body that is not gzip or ends inside a member, 413 past the limit."""
    members: list[bytes] = []
    total, rest = 0, body
    while True:
        inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            member = inflate.decompress(rest, MAX_BODY + 1 - total)
        except zlib.error as exc:
            where = f" (member {len(members) + 1})" if members else ""
            raise OtlpError(400, f"the gzip body cannot be decompressed{where}: {exc}") from None
        total += len(member)
        if total > MAX_BODY or inflate.unconsumed_tail:
            raise OtlpError(413, f"the export is over {MAX_BODY:,} bytes once decompressed: send smaller batches")
        if not inflate.eof:
            raise OtlpError(400, f"the gzip body ends inside member {len(members) + 1}: it was cut short; send the whole body")
        members.append(member)
        rest = inflate.unused_data
        if not rest:
            return members


def _writer(request: Request) -> RunStore:
    """The project's run store, opened for writing on the first export (one per app)."""
    store: RunStore | None = getattr(request.app.state, "otel_store", None)
    if store is None:
        root = getattr(request.app.state.session, "root", None)
        if root is None:
            raise OtlpError(503, "this inspector session has no project folder to record runs in")
        store = request.app.state.otel_store = RunStore.for_project(root)
    return store


def _write(store: RunStore, runs: list[dict[str, Any]], gone: list[str] | None = None) -> None:
    """Store ``runs``, ``BATCH`` to a transaction: fast, and short enough that an application
    recording into the same file meanwhile waits milliseconds, not seconds. ``gone`` (one-step runs
    folded into their trace's run) are deleted in the first transaction."""
    for start in range(0, max(len(runs), 1), BATCH):
        with store.batch():
            if start == 0 and gone:
                store.delete(gone)
            for run in runs[start : start + BATCH]:
                store.write(run)


def _lock(request: Request) -> threading.Lock:
    """One export at a time is merged into the store: two exports of the same trace never both read
    its run before either writes it."""
    lock: threading.Lock | None = getattr(request.app.state, "otel_lock", None)
    if lock is None:
        lock = request.app.state.otel_lock = threading.Lock()
    return lock


def _ingest_and_write(request: Request, spans: Any) -> Any:
    with _lock(request):
        store = _writer(request) if getattr(request.app.state.session, "root", None) is not None else None
        result = ingest(spans, max_runs=MAX_RUNS, store=store)
        if result.runs or result.gone:
            _write(store or _writer(request), result.runs, result.gone)
        return result


@router.post("/v1/traces")
async def receive_traces(request: Request) -> Response:
    refused = _allowed(request)
    if refused is not None:
        return refused
    content_type = request.headers.get("content-type", "")
    try:
        spans = itertools.chain.from_iterable([decode(body, content_type) for body in await _body(request)])
        result = await asyncio.to_thread(_ingest_and_write, request, spans)
        payload, media = export_response(result, content_type)
    except OtlpError as exc:
        return _refuse(exc.status, str(exc))
    except RunStoreError as exc:
        log.warning("OTLP export not stored: %s", exc)
        return _refuse(503, f"the runs could not be stored ({exc}); retry later")
    except Exception as exc:  # noqa: BLE001 - a body no check above foresaw is the sender's fault, said as a 400
        log.warning("OTLP export refused: %s: %s", type(exc).__name__, exc)
        return _refuse(400, f"the export could not be read: {type(exc).__name__}: {exc}")
    return Response(payload, media_type=media)
