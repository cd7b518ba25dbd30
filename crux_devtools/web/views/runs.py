"""View-models for the list of recorded runs: ``/runs`` and a prompt's recent runs.

A list row is a RunSummary (``RunStore.list``), written by another process, maybe an older or
newer version of the library, so every key is read with ``.get`` and a missing one hides a cell,
never the page. One run, step by step, is ``views_run.py``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict
from urllib.parse import quote, urlencode

from ...core.record.runstore import RUN_ORIGINS, RUN_STATUSES
from ...inspector.features.runs.costs import Prices, format_usd, format_usd_column
from ...inspector.features.runs.text import NOT_PLANNED, local_datetime, run_planned
from .prompt import Chip, ReportHeader, prompt_href
from .planning import pretty, shown_to_model

PAGE_SIZE = 50
# A text search reads at most this many of its matches, those recorded last, for its count, cost and
# charts (and as many as the page shown needs): past that the page says "more than", so a search
# costs the same however many runs it matches.
SEARCH_SCOPE = 1000
RECENT = 5
_CHIPS = {"ok": ("ok", "chip-fits"), "error": ("error", "chip-error"), "max_steps": ("max steps", "chip-over")}
STATUSES: dict[str, tuple[str, str]] = {s: _CHIPS.get(s, (s, "chip-error")) for s in RUN_STATUSES}  # the store's vocabulary
ORIGINS: tuple[str, ...] = tuple(RUN_ORIGINS)
DISPLAY_CAP = 60_000  # characters of one text block shown inline; the JSON mirror has the whole value


def run_href(run_id: str, step: int | None = None) -> str:
    base = f"/runs/{quote(str(run_id), safe='')}"
    return f"{base}#step-{step}" if step is not None else base


def status_chip(status: Any) -> Chip:
    label, css = STATUSES.get(str(status), (str(status or "unknown"), "chip-error"))
    return Chip(label, css)


def fmt_int(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else "—"


def fmt_ms(value: Any) -> str:
    """A duration people read at a glance: ``840 ms``, ``3.2 s``, ``2 min 05 s``."""
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0:
        return "—"
    if value < 1:
        return f"{value:.2f} ms"
    if value < 1000:
        return f"{value:.0f} ms"
    if value < 60_000:
        return f"{value / 1000:.1f} s"
    minutes, seconds = divmod(int(round(value / 1000)), 60)
    return f"{minutes} min {seconds:02d} s"


def fmt_started(value: Any) -> tuple[str, str]:
    """(shown, title): local time to the second, the stored ISO text as the tooltip."""
    text = str(value or "")
    when = local_datetime(text)  # None for a text that is no date, or a date with no local time
    if when is None:
        return text or "—", text
    return when.strftime("%Y-%m-%d %H:%M:%S"), text


def usage_pair(usage: Any) -> tuple[int | None, int | None]:
    if not isinstance(usage, dict):
        return None, None
    got_in, got_out = usage.get("input_tokens"), usage.get("output_tokens")
    return (got_in if isinstance(got_in, int) else None, got_out if isinstance(got_out, int) else None)


def capped(text: str) -> tuple[str, int]:
    """The text to show inline and how many characters were left out of it (0: all of it)."""
    if len(text) <= DISPLAY_CAP:
        return text, 0
    return text[:DISPLAY_CAP], len(text) - DISPLAY_CAP


# ---------------------------------------------------------------- the list


class StoreFilters(TypedDict):
    """The filters of ``RunStore.list``/``count``, as keywords."""

    target: str | None
    status: str | None
    origin: str | None
    text: str | None


@dataclass(frozen=True, slots=True)
class RunFilters:
    """The list's state, kept in the URL query so a live refresh re-renders the same page."""

    target: str = ""
    status: str = ""
    origin: str = ""
    text: str = ""
    page: int = 1

    def store_args(self) -> StoreFilters:
        return {"target": self.target or None, "status": self.status or None, "origin": self.origin or None, "text": self.text or None}

    def query(self, **change: Any) -> str:
        state = {"target": self.target, "status": self.status, "origin": self.origin, "q": self.text, "page": self.page}
        state.update(change)
        return urlencode({k: v for k, v in state.items() if v not in ("", None) and not (k == "page" and v == 1)})

    @property
    def active(self) -> bool:
        return bool(self.target or self.status or self.origin or self.text)


def parse_filters(target: str | None, status: str | None, origin: str | None, text: str | None, page: str | None) -> tuple[RunFilters, list[str]]:
    """Filters from the query string; an unknown value is dropped with a sentence saying so."""
    problems: list[str] = []
    status = (status or "").strip()
    if status and status not in STATUSES:
        problems.append(f"status {status!r} is not one of {', '.join(STATUSES)}; showing every status")
        status = ""
    origin = (origin or "").strip()
    if origin and origin not in ORIGINS:
        problems.append(f"origin {origin!r} is not one of {', '.join(ORIGINS)}; showing every origin")
        origin = ""
    number = 1
    if page not in (None, ""):
        try:
            number = int(str(page))
        except ValueError:
            problems.append(f"page {page!r} is not a whole number; showing page 1")
        number = max(number, 1)
    return RunFilters(target=(target or "").strip(), status=status, origin=origin, text=(text or "").strip(), page=number), problems


@dataclass(frozen=True, slots=True)
class RunRow:
    id: str
    href: str
    target: str
    target_href: str
    kind: str
    origin: str
    model: str
    chip: Chip
    steps: int
    input_tokens: str
    usage_in: str | None
    usage_out: str | None
    duration: str
    started: str
    started_title: str
    text: str
    parent: str | None = None  # a replay of step ``fork_step`` of run ``parent``
    fork_step: int | None = None
    cost: str = "unpriced"
    planned: bool = True  # False: a run from OpenTelemetry crux did not plan (``input_tokens`` says so)


def run_row(summary: dict[str, Any], prices: Prices | None = None, cost: str | None = None) -> RunRow:
    run_id = str(summary.get("id", ""))
    target = str(summary.get("target") or "?")
    got_in, got_out = usage_pair(summary.get("usage"))
    started, title = fmt_started(summary.get("started_at"))
    steps = summary.get("step_count")
    preview = summary.get("text") if isinstance(summary.get("text"), str) else ""
    if not preview and isinstance(summary.get("error"), dict):
        preview = f"{summary['error'].get('type', 'Error')}: {summary['error'].get('message', '')}"
    return RunRow(
        id=run_id,
        href=run_href(run_id),
        target=target,
        target_href=prompt_href(target),
        kind=str(summary.get("kind") or "prompt"),
        origin=str(summary.get("origin") or "app"),
        model=str(summary.get("model") or "—"),
        chip=status_chip(summary.get("status")),
        steps=steps if isinstance(steps, int) else len(summary.get("steps") or []),
        input_tokens=fmt_int(summary.get("input_tokens")) if run_planned(summary) else NOT_PLANNED,
        usage_in=fmt_int(got_in) if got_in is not None else None,
        usage_out=fmt_int(got_out) if got_out is not None else None,
        duration=fmt_ms(summary.get("duration_ms")),
        started=started,
        started_title=title,
        text=" ".join(str(preview or "").split())[:160],
        parent=summary["parent"] if isinstance(summary.get("parent"), str) else None,
        fork_step=summary["fork_step"] if isinstance(summary.get("fork_step"), int) else None,
        cost=cost if cost is not None else format_usd(prices.run_cost(summary)) if prices is not None else "unpriced",
        planned=run_planned(summary),
    )


def under_parents(rows: list[RunRow]) -> list[RunRow]:
    """``rows`` with each replay (a child run) moved right under its parent when both are listed."""
    listed = {r.id for r in rows}
    children: dict[str, list[RunRow]] = {}
    for r in rows:
        if r.parent is not None and r.parent in listed and r.parent != r.id:
            children.setdefault(r.parent, []).append(r)
    moved = {id(r) for kids in children.values() for r in kids}
    out: list[RunRow] = []
    for r in rows:
        if id(r) not in moved:
            out.append(r)
            out.extend(children.get(r.id, []))
    return out


@dataclass(frozen=True, slots=True)
class PageLink:
    label: str
    href: str | None  # None: the current page or a gap


@dataclass
class RunsListView:
    header: ReportHeader
    filters: RunFilters
    rows: list[RunRow]
    total: int
    pages: int
    targets: list[str]
    problems: list[str] = field(default_factory=list)
    unavailable: str | None = None  # why there is no store to read (shown instead of the table)
    links: list[PageLink] = field(default_factory=list)
    prev_href: str | None = None
    next_href: str | None = None
    cost_total: str = "unpriced"  # the cost of every run the filter matches, not only this page's
    more: bool = False  # more runs match than ``total`` (a text search counts up to its scope)
    cost_of_last: int | None = None  # the cost is of the runs recorded last of this many (a text search past its scope)

    @property
    def first(self) -> int:
        return 0 if not self.rows else (self.filters.page - 1) * PAGE_SIZE + 1

    @property
    def last(self) -> int:
        return (self.filters.page - 1) * PAGE_SIZE + len(self.rows)

    @property
    def statuses(self) -> list[tuple[str, str]]:
        return [(key, label) for key, (label, _) in STATUSES.items()]

    @property
    def origins(self) -> tuple[str, ...]:
        return ORIGINS


def page_links(filters: RunFilters, pages: int, more: bool = False) -> list[PageLink]:
    """First, last and two either side of the current page, with gaps as ``…`` (and one after the
    last page known when ``more`` runs match than were counted)."""
    current = filters.page
    wanted = sorted({1, pages, *range(max(1, current - 2), min(pages, current + 2) + 1)})
    links: list[PageLink] = []
    previous = 0
    for number in wanted:
        if number - previous > 1:
            links.append(PageLink("…", None))
        links.append(PageLink(str(number), None if number == current else f"/runs?{filters.query(page=number)}"))
        previous = number
    if more:
        links.append(PageLink("…", None))
    return links


def runs_list_view(
    header: ReportHeader, filters: RunFilters, summaries: list[dict[str, Any]], total: int, targets: list[str], problems: list[str],
    prices: Prices | None = None, more: bool = False,
) -> RunsListView:
    """``more``: more than ``total`` runs match (the pages past the last counted are reached by "older")."""
    pages = max(1, math.ceil(total / PAGE_SIZE))
    costs = format_usd_column([prices.run_cost(s) if prices is not None else None for s in summaries])  # one precision for the column
    rows = under_parents([run_row(s, prices, cost) for s, cost in zip(summaries, costs, strict=True)])
    view = RunsListView(header=header, filters=filters, rows=rows, total=total, pages=pages, targets=targets, problems=problems, more=more)
    if pages > 1 or more:
        view.links = page_links(filters, pages, more)
    if filters.page > 1:
        view.prev_href = f"/runs?{filters.query(page=min(filters.page - 1, pages))}"
    if filters.page < pages or more:
        view.next_href = f"/runs?{filters.query(page=filters.page + 1)}"
    return view


# ---------------------------------------------------------------- a prompt's recent runs


@dataclass(frozen=True, slots=True)
class RecentRuns:
    target: str
    rows: list[RunRow]
    total: int
    all_href: str
    unavailable: str | None = None
    runnable: bool = False  # the prompt page has a Run button (the target has a model to call)
