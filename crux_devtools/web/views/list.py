"""The prompt list's navigation: a search over id, module and file, status filters with counts, and
one group per file (``inspector.features.shown.groups``).

The page state lives in the URL query (``/?q=refund&status=over``), so a search can be shared or
reloaded, and a live update (the htmx list block, refetched on every report) renders the same view.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from markupsafe import Markup, escape

from ...inspector.features.shown.groups import group_name, group_prompts
from ...inspector.report_types import Report
from ...statuses import SEVERITY, STATUS_KEYS, word
from ..display import displayable
from .prompt import IndexView, PromptRow, ReportHeader, index_view

# The statuses a row shows (views.status_chips): the prompt's own status, and "stale" beside it; the
# keys and words are crux_devtools/statuses.py's, best first. A facet is listed when a row has its status.
STATUSES: tuple[tuple[str, str], ...] = tuple((key, word(key)) for key in sorted(STATUS_KEYS, key=SEVERITY.__getitem__, reverse=True)) + (
    ("stale", word("stale")),
)
MAX_QUERY = 200  # characters of search kept; a longer one is cut (and said so)


@dataclass(frozen=True, slots=True)
class ListFilters:
    """What the list is narrowed to: ``q`` (words, all must match) and one ``status`` ("" for any)."""

    q: str = ""
    status: str = ""

    @property
    def active(self) -> bool:
        return bool(self.q or self.status)

    @property
    def status_word(self) -> str:
        """The chosen status as the chips write it."""
        return word(self.status) if self.status else ""

    def href(self, **change: str) -> str:
        """The list's URL with this state (and ``change`` applied); ``/`` when nothing is filtered."""
        state = {"q": self.q, "status": self.status, **change}
        query = urlencode({k: v for k, v in state.items() if v})
        return f"/?{query}" if query else "/"


@dataclass(frozen=True, slots=True)
class StatusFacet:
    key: str  # "" is "all"
    label: str
    count: int
    href: str
    current: bool


@dataclass(frozen=True, slots=True)
class FileGroup:
    name: str  # the file's path in the project (``groups.group_name``)
    rows: list[PromptRow]
    total: int  # the file's rows before filtering


@dataclass(frozen=True, slots=True)
class ListView:
    header: ReportHeader
    filters: ListFilters
    groups: list[FileGroup]
    facets: list[StatusFacet]
    shown: int
    total: int
    problems: list[str]

    @property
    def clear_href(self) -> str:
        return "/"

    @property
    def words(self) -> list[str]:
        """The search's words, as ``matches`` compares them (for ``marked``)."""
        return self.filters.q.casefold().split()


def parse_list_filters(q: str | None, status: str | None) -> tuple[ListFilters, list[str]]:
    """The filters from the query string; a bad value is dropped with a sentence saying why."""
    problems: list[str] = []
    text = " ".join((q or "").split())
    if len(text) > MAX_QUERY:
        problems.append(f"the search was cut to its first {MAX_QUERY} characters")
        text = text[:MAX_QUERY]
    keys = [key for key, _ in STATUSES]
    chosen = (status or "").strip().lower()
    if chosen and chosen not in keys:
        problems.append(f"status must be one of {', '.join(keys)}, got {status!r}; showing every status")
        chosen = ""
    return ListFilters(text, chosen), problems


def row_statuses(row: PromptRow) -> set[str]:
    """The filter keys a row answers to: its status (an unknown one shows as an error chip, so it
    counts as "error"), and "stale" when it is shown from an earlier load."""
    own = row.status if row.status in STATUS_KEYS else "error"
    return {own, "stale"} if row.stale else {own}


def matches(row: PromptRow, words: list[str]) -> bool:
    """Every word (case-insensitive) is in the row's id, module or file."""
    haystack = f"{row.id}\n{row.module}\n{row.file}".casefold()
    return all(word in haystack for word in words)


def marked(text: str, words: list[str]) -> Markup:
    """``text`` escaped, with each stretch a search word matched in ``<mark>`` (no marks when case
    folding changes the text's length, as with "ß": the positions would not line up)."""
    shown = displayable(text)
    folded = shown.casefold()
    if not words or len(folded) != len(shown):
        return escape(shown)
    hits = [False] * len(shown)
    for word in words:
        start = folded.find(word)
        while word and start != -1:
            hits[start:start + len(word)] = [True] * len(word)
            start = folded.find(word, start + 1)
    out, i = [], 0
    while i < len(shown):
        j = i
        while j < len(shown) and hits[j] == hits[i]:
            j += 1
        piece = escape(shown[i:j])
        out.append(Markup("<mark>%s</mark>") % piece if hits[i] else piece)
        i = j
    return Markup("").join(out)


def row_group(row: PromptRow) -> str:
    """The group a row is listed under: its file's path."""
    return group_name(row.module, row.file)


def list_view(report: Report, filters: ListFilters, problems: list[str] | None = None) -> ListView:
    """The list narrowed by ``filters``: the status counts are of the rows the search matches, so a
    count says what clicking its filter would show."""
    base: IndexView = index_view(report)
    words = filters.q.casefold().split()
    searched = [row for row in base.rows if matches(row, words)] if words else list(base.rows)
    counts = {key: 0 for key, _ in STATUSES}
    for row in searched:
        for key in row_statuses(row) & counts.keys():
            counts[key] += 1
    facets = [StatusFacet("", "all", len(searched), filters.href(status=""), filters.status == "")]
    facets += [
        StatusFacet(key, label, counts[key], filters.href(status=key), filters.status == key)
        for key, label in STATUSES if counts[key] or key in ("fits", "stale") or filters.status == key
    ]
    shown = [row for row in searched if not filters.status or filters.status in row_statuses(row)]
    totals = {name: len(rows) for name, rows in group_prompts(base.rows, row_group)}
    groups = [FileGroup(name, rows, totals[name]) for name, rows in group_prompts(shown, row_group)]
    return ListView(
        header=base.header, filters=filters, groups=groups, facets=facets,
        shown=len(shown), total=len(base.rows), problems=list(problems or []),
    )
