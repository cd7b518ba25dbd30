"""View-models: small objects the templates read, built from the session's report dicts.

Templates only lay these out; every decision (what dropped, why, which rung) was made by the core
and arrives in the report. The report's own keys are read as ``inspector/report_types.py`` types
them (always there, so no defaults); the core's values inside it (an inspection, a plan) and
recorded runs are read defensively.
"""

from __future__ import annotations

import difflib
import json
import math
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode

from ...inspector.features.shown.colours import assign_colours
from ...inspector.features.shown.expectation_view import ExpectationRow, expectation_count, expectation_rows
from ...inspector.api import default_budget_target, find_prompt, is_stale
from ...inspector.report_types import ExampleReport, InspectionDict, LoadErrorDict, PromptReport, Report
from ...statuses import term
from ..display import displayable
from ..input_check import FieldError
from .sent import SentTool, SentView



@dataclass(frozen=True, slots=True)
class Chip:
    """A status badge: ``css`` picks the colour, ``label`` is what people read."""

    label: str
    css: str
    title: str = ""  # what the state means, on hover


def report_chip(status: str) -> Chip:
    """A status key (``crux_devtools/statuses.py``) as a chip: its word, the colour of its tone."""
    found = term(status)
    return Chip(found.word, f"chip-{found.tone}", found.means)


def status_chips(status: str, stale: bool) -> list[Chip]:
    chips = [report_chip(status)]
    if stale:
        chips.append(report_chip("stale"))
    return chips


@dataclass(frozen=True, slots=True)
class PromptRow:
    id: str
    kind: str
    module: str
    file: str
    line: int | None
    chips: list[Chip]
    total_tokens: int
    examples: int
    has_model: bool
    href: str
    status: str = "error"  # the report's status key (crux_devtools/statuses.py), what the list filters on
    stale: bool = False


@dataclass(frozen=True, slots=True)
class ReportHeader:
    """What every page shows about the report itself: version, age, load errors."""

    project: str
    version: int
    generated_at: str
    duration_ms: float
    stale: bool
    errors: list[LoadErrorDict]
    load: str = "full"  # "incremental": only ``reevaluated`` were evaluated again, the rest kept
    reevaluated: int = 0
    verified: bool = True  # False: a fresh load of the whole project is still to confirm it
    imported_note: str | None = None  # which files the worker imports (runs) and why


@dataclass(frozen=True, slots=True)
class IndexView:
    header: ReportHeader
    rows: list[PromptRow]


def shown_report(session: Any) -> Report:
    """The session's report, or an empty one while the first load runs."""
    report: Report | None = session.report
    if report is not None:
        return report
    return {
        "version": 0, "project": "", "generated_at": "", "duration_ms": 0.0, "stale": False, "errors": [], "prompts": [],
        "hash": "", "notice": None, "modules_found": False, "load": "full", "reevaluated": [],
        "verified": False, "disagreements": 0,
    }


def report_header(report: Report) -> ReportHeader:
    return ReportHeader(
        project=report["project"],
        version=report["version"],
        generated_at=report["generated_at"],
        duration_ms=report["duration_ms"],
        stale=report["stale"],
        errors=list(report["errors"]),
        load=report["load"],
        reevaluated=len(report["reevaluated"]),
        verified=report["verified"],
        imported_note=report.get("imported_note"),
    )


# A browser resolves these path segments away, even percent-encoded (``/prompts/%2e%2e`` is ``/``).
DOT_SEGMENTS = frozenset({".", ".."})


def prompt_href(prompt_id: str, suffix: str = "", **query: Any) -> str:
    """The page of a prompt (``suffix="/run"``: its run endpoint); any id round-trips.

    The id is one path segment with every reserved character encoded (``a/b`` is ``a%2Fb``; the
    routes take ``{id:path}``). ``.`` and ``..`` cannot be a path segment at all, so they go in the
    query: ``/prompt?id=..``. Surrogates (never in a URL) are U+FFFD, which ``lookup_prompt`` accepts.
    """
    shown = displayable(prompt_id)
    params = {k: v for k, v in query.items() if v not in (None, "")}
    if shown in DOT_SEGMENTS:
        return f"/prompt{suffix}?{urlencode({'id': shown, **params})}"
    base = f"/prompts/{quote(shown, safe='')}{suffix}"
    return f"{base}?{urlencode(params)}" if params else base


def lookup_prompt(report: Report | None, prompt_id: str) -> PromptReport | None:
    """The prompt a URL names: by its id, else by the id as ``prompt_href`` showed it."""
    found = find_prompt(report, prompt_id)
    if found is None and report is not None:
        found = next((p for p in report["prompts"] if displayable(p["id"]) == prompt_id), None)
    return found


def index_view(report: Report) -> IndexView:
    header = report_header(report)
    rows = [
        PromptRow(
            id=p["id"],
            kind=p["kind"],
            module=p["module"],
            file=p["file"],
            line=p["line"],
            chips=status_chips(p["status"], is_stale(report, p)),
            total_tokens=p["total_tokens"],
            examples=len(p["examples"]),
            has_model=p["has_model"],
            href=prompt_href(p["id"]),
            status=p["status"],
            stale=is_stale(report, p),
        )
        for p in report["prompts"]
    ]
    return IndexView(header=header, rows=rows)


# ---------------------------------------------------------------- one prompt


@dataclass(frozen=True, slots=True)
class PartView:
    source: str
    kind: str
    text: str
    tokens: int
    status: str
    reason: str | None
    detail: str | None
    priority: int | None
    colour: int
    owner: str | None
    tools: list[str]
    file: str | None = None  # where the context is defined, when it is assigned at module level
    line: int | None = None


@dataclass(frozen=True, slots=True)
class Segment:
    source: str
    tokens: int
    percent: float
    colour: int
    status: str


@dataclass(frozen=True, slots=True)
class TokenBar:
    segments: list[Segment]
    used: int
    budget: int | None
    budget_percent: float | None
    prompt_tokens: int
    fits: bool


@dataclass(frozen=True, slots=True)
class Controls:
    """The page state kept in the URL query, so live updates re-render the same view."""

    example: str | None
    budget: int | None
    input_text: str
    examples: list[str]
    example_inputs: dict[str, str]
    budget_max: int
    default_budget: int | None
    budget_for: str  # "system": the resolver drops whole contexts; "request": the planner picks rungs
    query: str
    view: str = "sent"  # "sent": the request as sent; "resolved": the resolver's view
    tab_hrefs: dict[str, str] = field(default_factory=dict)  # each view's URL with the same state
    at_step: str | None = None  # "RUN:K": plan with the messages of step K of that recorded run


@dataclass(frozen=True, slots=True)
class DiffLine:
    kind: str  # "add" | "del" | "same" | "hunk"
    text: str


@dataclass(frozen=True, slots=True)
class DiffView:
    available: bool
    changed: bool
    lines: list[DiffLine]


@dataclass
class PromptView:
    prompt: PromptReport
    header: ReportHeader
    chips: list[Chip]
    controls: Controls
    input_errors: list[FieldError]
    example_report: ExampleReport | None
    inspection: InspectionDict | None
    parts: list[PartView] = field(default_factory=list)
    bar: TokenBar | None = None
    tools: list[SentTool] = field(default_factory=list)
    unsent_tools: list[tuple[str, str]] = field(default_factory=list)  # resolved, but not in the request
    planning: Any = None
    diff: DiffView | None = None
    colours: dict[str, int] = field(default_factory=dict)
    sent: SentView | None = None
    status: str = "error"
    at_step: str | None = None  # "the messages of run X step K ..." when the page plans as at that step (or why it cannot)

    @property
    def href(self) -> str:
        """This prompt's page, its id quoted whole (an id may hold "/" or "?")."""
        return prompt_href(self.prompt["id"])

    @property
    def expectations(self) -> list[ExpectationRow]:
        """The example's expectations, one row each (``inspector/features/shown/expectation_view.py``)."""
        return expectation_rows(self.example_report)

    @property
    def expectation_count(self) -> str | None:
        return expectation_count(self.example_report)

    @property
    def active(self) -> list[PartView]:
        return [p for p in self.parts if p.status == "active"]

    @property
    def excluded(self) -> list[PartView]:
        return [p for p in self.parts if p.status == "excluded"]

    @property
    def dropped(self) -> list[PartView]:
        return [p for p in self.parts if p.status == "dropped"]


def colour_map(prompt: PromptReport, inspection: InspectionDict | None) -> dict[str, int]:
    """One colour per contributor, a function of its name (``inspector/features/shown/colours.py``):
    the same whatever the order of ``use``, the example or the budget."""
    names = [c["id"] for c in prompt["contexts"]]
    names += [p["source"] for p in inspection["parts"]] if inspection is not None else []
    return assign_colours(names)


def part_views(inspection: InspectionDict, colours: dict[str, int], prompt: PromptReport | None = None) -> list[PartView]:
    """One view per part; ``prompt`` (the PromptReport) supplies each context's definition site."""
    contexts = prompt["contexts"] if prompt is not None else []
    where = {c["id"]: (c["file"], c["line"]) for c in contexts if c["file"]}
    return [
        PartView(
            source=p["source"],
            kind=p["kind"],
            text=p["text"],
            tokens=p["tokens"],
            status=p["status"],
            reason=p["reason"],
            detail=p["detail"],
            priority=p["effective_priority"],
            colour=colours.get(p["source"], 0),
            owner=p["owner"],
            tools=list(p["tools"]),
            file=where.get(p["source"], (None, None))[0],
            line=where.get(p["source"], (None, None))[1],
        )
        for p in inspection["parts"]
    ]


def token_bar(inspection: InspectionDict, parts: list[PartView]) -> TokenBar:
    """Active parts then dropped ones (hatched), against the budget when there is one."""
    shown = [p for p in parts if p.status == "active"] + [p for p in parts if p.status == "dropped"]
    budget = inspection["token_budget"]
    used = sum(p.tokens for p in parts if p.status == "active")
    scale = max(sum(p.tokens for p in shown), budget or 0, 1)
    segments = [Segment(p.source, p.tokens, 100.0 * p.tokens / scale, p.colour, p.status) for p in shown if p.tokens > 0]
    return TokenBar(
        segments=segments,
        used=used,
        budget=budget,
        budget_percent=(100.0 * budget / scale) if budget is not None else None,
        prompt_tokens=inspection["prompt_tokens"],
        fits=inspection["fits"],
    )


def full_system_tokens(prompt: PromptReport) -> int:
    """What every part would cost with no budget: the slider's natural range."""
    best = 0
    for ex in prompt["examples"]:
        parts = ex["inspection"]["parts"] if ex["inspection"] is not None else []
        best = max(best, sum(p["tokens"] for p in parts if p["status"] != "excluded"))
    return best


def request_tokens(prompt: PromptReport) -> int:
    """The largest planned request of any example (0 when planning is not available)."""
    return max([ex["preview"]["input_tokens"] for ex in prompt["examples"] if ex["preview"] is not None] or [0])


BUDGET_MODES = {"system": "system text", "request": "whole request"}


def budget_ceiling(prompt: PromptReport, budget: int | None, budget_for: str) -> int:
    natural = request_tokens(prompt) if budget_for == "request" else full_system_tokens(prompt)
    top = max(natural, prompt["default_budget"] or 0, budget or 0, 10)
    return int(math.ceil(top * 1.2 / 10.0) * 10)


VIEWS = ("sent", "resolved")


def controls(
    prompt: PromptReport, example: str | None, budget: int | None, input_text: str, budget_for: str | None = None, view: str | None = None,
    at_step: str | None = None,
) -> Controls:
    """The page state; ``budget_for`` defaults to the planner for agents and prompts with ladders,
    ``view`` to the request as sent."""
    examples = [e["name"] for e in prompt["examples"]]
    if example not in examples:
        example = examples[0] if examples else None
    if budget_for not in BUDGET_MODES:
        budget_for = default_budget_target(prompt)
    inputs = {e["name"]: json.dumps(e["input"], indent=2, ensure_ascii=False) for e in prompt["examples"]}
    cached = next((e for e in prompt["examples"] if e["name"] == example), None)
    default_budget = _default_budget(prompt, cached, budget_for)
    if view not in VIEWS:
        view = "sent"
    state: dict[str, Any] = {"example": example, "budget": budget, "budget_for": budget_for, "input": input_text or None, "at_step": at_step or None}
    query = urlencode({k: v for k, v in {**state, "view": None if view == "sent" else view}.items() if v is not None})
    tab_hrefs = {v: prompt_href(prompt["id"], **state, view=None if v == "sent" else v) for v in VIEWS}
    return Controls(
        example=example,
        budget=budget,
        input_text=input_text,
        examples=examples,
        example_inputs=inputs,
        budget_max=budget_ceiling(prompt, budget, budget_for),
        default_budget=default_budget,
        budget_for=budget_for,
        query=query,
        view=view,
        tab_hrefs=tab_hrefs,
        at_step=at_step or None,
    )


def _default_budget(prompt: PromptReport, cached: ExampleReport | None, budget_for: str) -> int | None:
    """The budget the slider starts at: the request's limit (the agent's ``input_budget``, else the
    plan's ``max_input_tokens``), or the system text's ``token_budget``."""
    if budget_for == "request":
        planned = cached["preview"] if cached is not None else None
        return prompt["default_budget"] or (planned["max_input_tokens"] if planned is not None else None)
    inspection = cached["inspection"] if cached is not None else None
    return inspection["token_budget"] if inspection is not None else None


def tool_sources(inspection: InspectionDict) -> list[tuple[str, str]]:
    sources = inspection["tool_sources"]
    return [(name, sources.get(name, "<prompt>")) for name in inspection["tools"]]


def offered_tools(inspection: InspectionDict, sent: SentView | None) -> tuple[list[SentTool], list[tuple[str, str]]]:
    """The tools of the sent request (with schema and cost), and those resolved but not sent (a
    ladder omitted their context). Without a sent request, the resolved names alone."""
    resolved = tool_sources(inspection)
    if sent is None or sent.state != "sent":
        return [SentTool(name, "", "", None, source) for name, source in resolved], []
    names = {t.name for t in sent.tools}
    return list(sent.tools), [(name, source) for name, source in resolved if name not in names]


def diff_view(previous: str | None, current: str | None) -> DiffView:
    if previous is None or current is None:
        return DiffView(available=False, changed=False, lines=[])
    if previous == current:
        return DiffView(available=True, changed=False, lines=[])
    lines: list[DiffLine] = []
    for raw in difflib.unified_diff(previous.splitlines(), current.splitlines(), "previous", "current", n=2, lineterm=""):
        if raw.startswith(("---", "+++")):
            continue
        kind = {"@": "hunk", "+": "add", "-": "del"}.get(raw[:1], "same")
        lines.append(DiffLine(kind, raw[1:] if kind != "hunk" else raw))
    return DiffView(available=True, changed=True, lines=lines)
