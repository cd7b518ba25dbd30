"""Recorded runs (the run shape: ``core/record/runstore.py``): ``/runs``, ``/runs/{id}``, a prompt's recent runs, and the JSON mirrors.

The store is read through ``runs_access`` (in a thread; a store that cannot be opened is a banner,
never a 500).
"""

from __future__ import annotations

import asyncio
import html
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from ...core.record.runstore import RunStore, RunStoreError, json_text
from ...inspector.api import find_prompt
from ...inspector.report_types import Report
from ...inspector.features.runs.costs import Prices, prices_for
from ...inspector.features.runs.series import run_series
from .pages import render, wants_block
from .run_live import live_page
from ..runs_access import open_store, recent_runs
from ..views.prompt import report_header, shown_report
from ..views.charts import RunCharts, run_charts
from ..views.run import RunDetail, RunMissing, run_detail, step_indexes, step_window, with_costs
from ..views.runs import ORIGINS, PAGE_SIZE, SEARCH_SCOPE, STATUSES, RunFilters, StoreFilters, parse_filters, runs_list_view

router = APIRouter()
T = TypeVar("T")
API_MAX_LIMIT = 1000
API_MAX_OFFSET = 10**12  # past any store; a bigger number is a mistake, answered 400


class RunJSONResponse(JSONResponse):
    """JSON of recorded runs: a lone surrogate the store kept (a reply with broken bytes) is sent as
    its ``\\udcXX`` escape, which is valid JSON, instead of failing to encode (a 500)."""

    def render(self, content: Any) -> bytes:
        return json_text(content).encode("utf-8")


async def read(store: RunStore, call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    return await asyncio.to_thread(call, *args, **kwargs)


def known_targets(request: Request) -> list[str]:
    report = shown_report(request.app.state.session)
    return [p["id"] for p in report["prompts"]]


@dataclass(frozen=True, slots=True)
class Matching:
    """What the list reads once per request, whatever its page: the usage of the runs the filters
    match (per model), how many they match, and every stored target."""

    usage: list[dict[str, Any]]
    total: int
    more: bool  # more than ``total`` match (a text search counts up to its scope)
    cost_of_last: int | None  # the usage is of the runs recorded last of this many (else of every match)
    targets: list[str]


def matching(store: RunStore, filters: RunFilters) -> Matching:
    """The filters' matches as the list reads them. A text search reads at most ``SEARCH_SCOPE`` of
    its matches (those recorded last) for the usage, and counts up to that or the page shown,
    whichever is further, so it costs the same whether 1,000 runs match or 100,000."""
    args = filters.store_args()
    if not filters.text:
        return Matching(store.usage_by_model(**args), store.count(**args), False, None, store.targets())
    scope = max(SEARCH_SCOPE, filters.page * PAGE_SIZE)
    found = store.count(**args, at_most=scope + 1)  # one more than counted: are there more?
    usage = store.usage_by_model(**args, at_most=SEARCH_SCOPE)
    return Matching(usage, min(found, scope), found > scope, SEARCH_SCOPE if found > SEARCH_SCOPE else None, store.targets())


@router.get("/runs", response_class=HTMLResponse)
async def runs_page(
    request: Request,
    target: str | None = Query(None),
    status: str | None = Query(None),
    origin: str | None = Query(None),
    q: str | None = Query(None),
    text: str | None = Query(None, description="the same as q"),
    page: str | None = Query(None),
) -> Response:
    report = shown_report(request.app.state.session)
    header = report_header(report)
    filters, problems = parse_filters(target, status, origin, q or text, page)
    store, unavailable = open_store(request.app.state.session)
    summaries: list[dict[str, Any]] = []
    found = Matching([], 0, False, None, [])
    targets = known_targets(request)
    if store is not None:
        try:
            found = await asyncio.to_thread(matching, store, filters)
            last_page = max(1, -(-found.total // PAGE_SIZE))
            if filters.page > last_page and not found.more:
                problems.append(f"page {filters.page} is past the last page ({last_page}); showing page {last_page}")
                filters = parse_filters(filters.target, filters.status, filters.origin, filters.text, str(last_page))[0]
            summaries = await read(store, store.list, limit=PAGE_SIZE, offset=(filters.page - 1) * PAGE_SIZE, **filters.store_args())
            targets += [t for t in found.targets if t not in targets]
        except RunStoreError as exc:
            unavailable = str(exc)
    prices = prices_for(getattr(request.app.state.session, "root", None))
    view = runs_list_view(header, filters, summaries, found.total, targets, problems, prices, more=found.more)
    view.unavailable = unavailable
    view.cost_total, view.cost_of_last = prices.total(found.usage).label, found.cost_of_last
    matched = found.total + (1 if found.more else 0)  # past the count when more match: all the charts ask
    charts = await runs_charts(store, prices, filters.store_args(), matched) if store is not None and unavailable is None and found.total else None
    return render(request, "runs.html", {"view": view, "charts": charts}, block="runs_list" if wants_block(request) else None)


async def runs_charts(store: RunStore, prices: Prices, filters: StoreFilters, matched: int) -> RunCharts | None:
    """The charts of the filtered runs over time (``views/charts.py``) of the ``matched`` runs the
    list counted; a store that fails to read them leaves the list as it is, without charts."""
    try:
        series = await asyncio.to_thread(run_series, store, prices, **filters, at_most=SEARCH_SCOPE, matched=matched)
    except RunStoreError:
        return None
    return run_charts(series)


@router.get("/runs/recent", response_class=HTMLResponse)
async def recent_runs_panel(request: Request, target: str = Query(...)) -> Response:
    """The prompt page's "Recent runs" line (an htmx fragment, refetched on every ``runs`` event)."""
    recent = await recent_runs(request.app.state.session, target)
    return render(request, "_recent_runs.html", {"recent": recent})


@router.get("/runs/{run_id}", response_class=HTMLResponse)
async def run_page(request: Request, run_id: str, step: str | None = Query(None, description="a step to show whole on a long run's page")) -> Response:
    report = shown_report(request.app.state.session)
    header = report_header(report)
    store, unavailable = open_store(request.app.state.session)
    run = None
    if store is not None:
        try:
            run = await read(store, store.get, run_id)
        except RunStoreError as exc:
            unavailable = str(exc)
    if run is None and store is not None and unavailable is None:
        try:
            live = await live_page(request, store, run_id)  # not written yet: being recorded right now?
        except RunStoreError as exc:
            live, unavailable = None, str(exc)
        if live is not None:
            return live
    if run is None:
        context = {"view": RunMissing(header, run_id, unavailable), "missing": run_id}
        return render(request, "run.html", context, status=404 if unavailable is None else 503)
    window = step_window(step_indexes(run), step)
    view = run_view(request, report, run, window.whole)
    view.step_problem, view.window_note = window.problem, window.note
    return render(request, "run.html", {"view": view, "missing": None})


def run_view(request: Request, report: Report, run: dict[str, Any], whole: frozenset[int] | None = None, glance: bool = True) -> RunDetail:
    """The run page's view of ``run``, the same for the page and ``run_step``; ``whole``: the steps
    whose whole card is made (None: every step)."""
    root = getattr(request.app.state.session, "root", None)
    shown = find_prompt(report, str(run.get("target") or ""))
    names = [c["id"] for c in shown["contexts"]] if shown is not None else []
    return with_costs(run_detail(report_header(report), run, set(known_targets(request)), root, names, whole, glance), run, prices_for(root))


@router.get("/runs/{run_id}/steps/{index}", response_class=HTMLResponse)
async def run_step(request: Request, run_id: str, index: int) -> Response:
    """One step's whole card, the same HTML the run page shows for it (a long run's page loads the
    steps it shows as compact rows from here)."""
    store, unavailable = open_store(request.app.state.session)
    run = None
    if store is not None:
        try:
            run = await read(store, store.get, run_id)
        except RunStoreError as exc:
            unavailable = str(exc)
    problem = unavailable or f"no recorded run with id {run_id!r}: it may have been pruned"
    if run is not None:
        view = run_view(request, shown_report(request.app.state.session), run, frozenset({index}), glance=False)
        for detail in view.steps:
            if detail.index == index:
                response = render(request, "_run_step.html", {"step": detail, "r": view})
                response.headers["HX-Retarget"] = f"#{detail.anchor}"  # an htmx fetch (a row's link, a bar) replaces the step's row
                response.headers["HX-Reswap"] = "outerHTML"
                return response
        problem = f"run {run_id!r} has no step {index}: its steps are {view.steps[0].index} to {view.steps[-1].index}" if view.steps else f"run {run_id!r} has no steps"
    return HTMLResponse(f'<p class="banner banner-error step-missing">{html.escape(problem)}</p>', status_code=404 if unavailable is None else 503)


# ---------------------------------------------------------------- JSON


def bad_request(message: str) -> JSONResponse:
    return JSONResponse({"detail": message}, status_code=400)


def parse_count(raw: str | None, name: str, default: int, low: int, high: int | None) -> tuple[int, str | None]:
    if raw is None or raw.strip() == "":
        return default, None
    try:
        value = int(raw)
    except ValueError:
        value = low - 1
    if value < low or (high is not None and value > high):
        span = f"from {low} to {high}" if high is not None else f"of at least {low}"
        return default, f"{name} must be a whole number {span}, got {raw!r}"
    return value, None


@router.get("/api/runs")
async def api_runs(
    request: Request,
    target: str | None = Query(None),
    status: str | None = Query(None),
    origin: str | None = Query(None),
    q: str | None = Query(None),
    text: str | None = Query(None, description="the same as q"),
    limit: str | None = Query(None),
    offset: str | None = Query(None),
) -> Response:
    """Run summaries, newest first (no ``steps``); ``X-Total-Count`` says how many match."""
    if status and status not in STATUSES:
        return bad_request(f"status must be one of {', '.join(STATUSES)}, got {status!r}")
    if origin and origin not in ORIGINS:
        return bad_request(f"origin must be one of {', '.join(ORIGINS)}, got {origin!r}")
    how_many, problem = parse_count(limit, "limit", PAGE_SIZE, 1, API_MAX_LIMIT)
    if problem:
        return bad_request(problem)
    skip, problem = parse_count(offset, "offset", 0, 0, API_MAX_OFFSET)
    if problem:
        return bad_request(problem)
    store, unavailable = open_store(request.app.state.session)
    if store is None:
        return JSONResponse({"detail": unavailable}, status_code=503)
    filters: StoreFilters = {"target": target or None, "status": status or None, "origin": origin or None, "text": q or text or None}
    try:
        runs, total = await asyncio.to_thread(lambda: (store.list(limit=how_many, offset=skip, **filters), store.count(**filters)))
    except RunStoreError as exc:
        return JSONResponse({"detail": str(exc)}, status_code=503)
    return RunJSONResponse(runs, headers={"X-Total-Count": str(total)})


@router.get("/api/runs/{run_id}")
async def api_run(request: Request, run_id: str) -> Response:
    store, unavailable = open_store(request.app.state.session)
    if store is None:
        return JSONResponse({"detail": unavailable}, status_code=503)
    try:
        run = await read(store, store.get, run_id)
    except RunStoreError as exc:
        return JSONResponse({"detail": str(exc)}, status_code=503)
    if run is None:
        return RunJSONResponse({"detail": f"no recorded run with id {run_id!r}; GET /api/runs lists them"}, status_code=404)
    return RunJSONResponse(run)
