"""A run while it is being recorded: ``/runs/{id}`` shows its streaming step (``live_page``, called
by the run page when the run is not written yet), and ``/runs/{id}/live`` is that section alone,
fetched again on every ``run`` event (its text grew) and ``runs`` event (it was written). Once the
run is written, the fragment answers ``HX-Refresh`` and the page reloads as the finished run.
``/live-runs`` is the line of ``/runs`` that links to every run being recorded."""

from __future__ import annotations

import asyncio
from html import escape

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from ...core.record.runstore import RunStore, RunStoreError
from ..runs_access import open_store
from ..views.prompt import report_header, shown_report
from ..views.run_live import LiveRunView, gone_view, live_run_view
from .pages import render

router = APIRouter()


def _view(request: Request, run: dict[str, object]) -> LiveRunView:
    from ...core.tokens import default_counter

    report = shown_report(request.app.state.session)
    known = {p["id"] for p in report["prompts"]}
    return live_run_view(report_header(report), dict(run), known, default_counter())


async def live_page(request: Request, store: RunStore, run_id: str) -> Response | None:
    """The run page of ``run_id`` while it is being recorded, or ``None`` when it is not."""
    run = await asyncio.to_thread(store.live_run, run_id)
    if run is None:
        return None
    return render(request, "run_live.html", {"view": _view(request, run)})


@router.get("/runs/{run_id}/live", response_class=HTMLResponse)
async def live_fragment(request: Request, run_id: str) -> Response:
    store, unavailable = open_store(request.app.state.session)
    if store is None:
        return HTMLResponse(f'<p class="banner banner-error" id="run-live">{escape(str(unavailable))}</p>', status_code=503)
    try:
        run = await asyncio.to_thread(store.live_run, run_id)
        written = run is None and await asyncio.to_thread(store.get, run_id) is not None
    except RunStoreError as exc:
        return HTMLResponse(f'<p class="banner banner-error" id="run-live">{escape(str(exc))}</p>', status_code=503)
    if written:
        return Response(status_code=200, headers={"HX-Refresh": "true"})  # the run is written: show it whole
    report = shown_report(request.app.state.session)
    view = _view(request, run) if run is not None else gone_view(report_header(report), run_id)
    return render(request, "_run_live.html", {"view": view})


@router.get("/live-runs", response_class=HTMLResponse)
async def live_runs_line(request: Request) -> Response:
    """The runs being recorded now, as the line ``/runs`` shows above its list (empty when none is)."""
    store, _unavailable = open_store(request.app.state.session)
    try:
        runs = await asyncio.to_thread(store.live_runs) if store is not None else []
    except RunStoreError:
        runs = []
    return render(request, "_runs_live.html", {"live": [_view(request, run) for run in runs]})
