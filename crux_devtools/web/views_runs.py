"""View-models for recorded runs (SPEC section 8): the ``/runs`` list and one run step by step.

A run is the JSON the store holds (``RunStore.get``); a list row is a RunSummary
(``RunStore.list``). Both come from another process, maybe an older or newer version of the
library, so every key is read with ``.get`` and a missing one hides a line, never the page. The
views only lay out what the core recorded: the system text parts are ``sent.system`` cut at each
contribution's ``span``, never re-derived.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from ..core.runstore import RUN_ORIGINS, RUN_STATUSES
from .views import Chip, ReportHeader, prompt_href
from .views_planning import pretty, shown_to_model

PAGE_SIZE = 50
RECENT = 5
_CHIPS = {"ok": ("ok", "chip-fits"), "error": ("error", "chip-error"), "max_steps": ("max steps", "chip-over")}
STATUSES: dict[str, tuple[str, str]] = {s: _CHIPS.get(s, (s, "chip-error")) for s in RUN_STATUSES}  # the store's vocabulary
ORIGINS: tuple[str, ...] = tuple(RUN_ORIGINS)
DISPLAY_CAP = 60_000  # characters of one text block shown inline; the JSON mirror has the whole value
_RUNG_ORDER = {"full": 0, "authored": 1, "summary": 2, "offload": 3, "omitted": 4}
_PALETTE = 10


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
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return text or "—", text
    if when.tzinfo is not None:
        when = when.astimezone()
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


@dataclass(frozen=True, slots=True)
class RunFilters:
    """The list's state, kept in the URL query so a live refresh re-renders the same page."""

    target: str = ""
    status: str = ""
    origin: str = ""
    text: str = ""
    page: int = 1

    def store_args(self) -> dict[str, str | None]:
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


def run_row(summary: dict[str, Any]) -> RunRow:
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
        input_tokens=fmt_int(summary.get("input_tokens")),
        usage_in=fmt_int(got_in) if got_in is not None else None,
        usage_out=fmt_int(got_out) if got_out is not None else None,
        duration=fmt_ms(summary.get("duration_ms")),
        started=started,
        started_title=title,
        text=" ".join(str(preview or "").split())[:160],
    )


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


def page_links(filters: RunFilters, pages: int) -> list[PageLink]:
    """First, last and two either side of the current page, with gaps as ``…``."""
    current = filters.page
    wanted = sorted({1, pages, *range(max(1, current - 2), min(pages, current + 2) + 1)})
    links: list[PageLink] = []
    previous = 0
    for number in wanted:
        if number - previous > 1:
            links.append(PageLink("…", None))
        links.append(PageLink(str(number), None if number == current else f"/runs?{filters.query(page=number)}"))
        previous = number
    return links


def runs_list_view(
    header: ReportHeader, filters: RunFilters, summaries: list[dict[str, Any]], total: int, targets: list[str], problems: list[str]
) -> RunsListView:
    pages = max(1, math.ceil(total / PAGE_SIZE))
    view = RunsListView(header=header, filters=filters, rows=[run_row(s) for s in summaries], total=total, pages=pages, targets=targets, problems=problems)
    if pages > 1:
        view.links = page_links(filters, pages)
    if filters.page > 1:
        view.prev_href = f"/runs?{filters.query(page=min(filters.page - 1, pages))}"
    if filters.page < pages:
        view.next_href = f"/runs?{filters.query(page=filters.page + 1)}"
    return view


# ---------------------------------------------------------------- one run


@dataclass(frozen=True, slots=True)
class SentPart:
    """One piece of the system text exactly as sent: ``sent.system[start:end]``, with its rung."""

    contributor: str
    kind: str
    representation: str
    tokens: int | None
    text: str
    hidden: int
    colour: int
    variant: str | None
    handle: str | None
    tools: list[str]


@dataclass(frozen=True, slots=True)
class NotSent:
    """A contributor that planned to nothing: an omitted rung, or a context the budget dropped."""

    contributor: str
    why: str
    tokens: int | None
    colour: int


@dataclass(frozen=True, slots=True)
class TokenRow:
    label: str
    kind: str
    representation: str
    tokens: int
    colour: int | None


@dataclass(frozen=True, slots=True)
class MessageCall:
    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class MessageView:
    role: str
    content: str | None
    hidden: int
    tool_call_id: str | None
    name: str | None
    calls: list[MessageCall]


@dataclass(frozen=True, slots=True)
class ToolSchemaView:
    name: str
    description: str
    schema: str
    tokens: int | None


@dataclass(frozen=True, slots=True)
class RungRow:
    representation: str
    variant: str | None
    tokens: int | None
    input_tokens: int | None
    selected: bool
    available: bool
    rejection_reason: str | None
    detail: str | None


@dataclass(frozen=True, slots=True)
class Ladder:
    contributor: str
    colour: int
    rows: list[RungRow]


@dataclass(frozen=True, slots=True)
class ToolExchange:
    """One tool call the model asked for, and what came of it (the app's value, the model's view)."""

    id: str
    name: str
    arguments: str
    output: str | None
    output_hidden: int
    model_output: str | None  # None: the model saw exactly ``output``
    model_hidden: int
    returned: bool


@dataclass
class StepDetail:
    index: int
    anchor: str
    receipt_id: str | None
    previous_request_id: str | None
    model: str | None
    input_tokens: int | None
    max_input_tokens: int | None
    optimize_at: int | None
    measurement: str | None
    epoch: int | None
    tier: str | None
    token_budget: int | None
    max_tokens: int | None
    usage_in: int | None
    usage_out: int | None
    latency: str
    system_tokens: int | None
    system_chars: int
    system_same_as: int | None
    parts: list[SentPart]
    not_sent: list[NotSent]
    token_rows: list[TokenRow]
    messages: list[MessageView]
    tools: list[ToolSchemaView]
    tool_tokens_total: int | None
    ladders: list[Ladder]
    adaptations: list[dict[str, Any]]
    dropped: list[dict[str, Any]]
    warnings: list[str]
    response_text: str | None
    exchanges: list[ToolExchange]
    offloads: list[dict[str, Any]]
    error: dict[str, Any] | None
    replay_href: str | None
    sent_missing: bool

    @property
    def usage_delta(self) -> int | None:
        """Provider-reported input minus ours (None when the provider reported none)."""
        if self.usage_in is None or self.input_tokens is None:
            return None
        return self.usage_in - self.input_tokens


@dataclass
class RunDetail:
    header: ReportHeader
    id: str
    target: str
    target_href: str
    target_known: bool
    kind: str
    file: str | None
    line: int | None
    source_href: str | None  # /source for a file inside the project; None for one elsewhere
    origin: str
    model: str
    chip: Chip
    started: str
    started_title: str
    duration: str
    input_json: str
    input_is_object: bool
    replay_href: str | None
    text: str | None
    error: dict[str, Any] | None
    usage_in: int | None
    usage_out: int | None
    input_tokens: int
    steps: list[StepDetail]
    json_href: str


def _colour_of(colours: dict[str, int], contributor: str) -> int:
    if contributor not in colours:
        colours[contributor] = 0 if contributor == "<prompt>" else 1 + (len([c for c in colours if c != "<prompt>"])) % (_PALETTE - 1)
    return colours[contributor]


def replay_href(target: str, value: Any) -> str | None:
    """``/prompts/{target}?input=<json>``: the prompt page with this input as its custom input."""
    if not isinstance(value, dict):
        return None
    text = json.dumps(value, indent=2, ensure_ascii=False)
    href = prompt_href(target, input=text)
    if len(href) > 6000:  # keep the request line well under the server's limit
        href = prompt_href(target, input=json.dumps(value, ensure_ascii=False, separators=(",", ":")))
    return href


def system_parts(system: str, contributions: list[dict[str, Any]], colours: dict[str, int]) -> list[SentPart]:
    """The system text cut at each contribution's span; any text no span covers is shown too."""
    spanned = []
    for c in contributions:
        span = c.get("span")
        if isinstance(span, (list, tuple)) and len(span) == 2 and all(isinstance(x, int) for x in span):
            spanned.append((int(span[0]), int(span[1]), c))
    spanned.sort(key=lambda item: item[0])
    parts: list[SentPart] = []
    cursor = 0

    def loose(start: int, end: int) -> None:
        if end > start and system[start:end].strip():
            text, hidden = capped(system[start:end])
            parts.append(SentPart("(not attributed)", "text", "full", None, text, hidden, 0, None, None, []))

    for start, end, c in spanned:
        start, end = max(start, cursor), max(min(end, len(system)), 0)
        loose(cursor, start)
        contributor = str(c.get("contributor", "?"))
        text, hidden = capped(system[start:end])
        parts.append(
            SentPart(
                contributor=contributor,
                kind=str(c.get("kind", "context")),
                representation=str(c.get("representation", "full")),
                tokens=c.get("tokens") if isinstance(c.get("tokens"), int) else None,
                text=text,
                hidden=hidden,
                colour=_colour_of(colours, contributor),
                variant=c.get("variant"),
                handle=c.get("handle"),
                tools=[str(t) for t in c.get("tools") or []],
            )
        )
        cursor = max(cursor, end)
    loose(cursor, len(system))
    if not spanned and system:
        parts = []
        text, hidden = capped(system)
        parts.append(SentPart("(system text)", "text", "full", None, text, hidden, 0, None, None, []))
    return parts


def message_views(messages: Any) -> list[MessageView]:
    views: list[MessageView] = []
    for m in messages if isinstance(messages, list) else []:
        if not isinstance(m, dict):
            views.append(MessageView("?", pretty(m), 0, None, None, []))
            continue
        content = m.get("content")
        shown, hidden = capped(pretty(content)) if content is not None else (None, 0)
        calls = []
        for call in m.get("tool_calls") or []:
            if not isinstance(call, dict):
                continue
            fn = call.get("function") if isinstance(call.get("function"), dict) else call
            args = fn.get("arguments", {})
            if isinstance(args, str):
                try:
                    args = json.loads(args)
                except json.JSONDecodeError:
                    pass
            calls.append(MessageCall(str(call.get("id", "")), str(fn.get("name", "?")), pretty(args)))
        views.append(MessageView(str(m.get("role", "?")), shown, hidden, m.get("tool_call_id"), m.get("name"), calls))
    return views


def tool_views(tools: Any, tool_tokens: dict[str, Any]) -> list[ToolSchemaView]:
    views = []
    for t in tools if isinstance(tools, list) else []:
        if not isinstance(t, dict):
            continue
        name = str(t.get("name", "?"))
        tokens = tool_tokens.get(name)
        views.append(ToolSchemaView(name, str(t.get("description") or ""), pretty(t.get("parameters", {})), tokens if isinstance(tokens, int) else None))
    return views


def ladders(candidates: Any, colours: dict[str, int]) -> list[Ladder]:
    groups: dict[str, list[RungRow]] = {}
    for c in candidates if isinstance(candidates, list) else []:
        if not isinstance(c, dict):
            continue
        groups.setdefault(str(c.get("contributor", "?")), []).append(
            RungRow(
                representation=str(c.get("representation", "?")),
                variant=c.get("variant"),
                tokens=c.get("tokens"),
                input_tokens=c.get("input_tokens"),
                selected=bool(c.get("selected")),
                available=bool(c.get("available", True)),
                rejection_reason=c.get("rejection_reason"),
                detail=c.get("detail"),
            )
        )
    return [
        Ladder(name, _colour_of(colours, name), sorted(rows, key=lambda r: _RUNG_ORDER.get(r.representation, 9)))
        for name, rows in groups.items()
    ]


def exchanges(step: dict[str, Any]) -> list[ToolExchange]:
    calls = [c for c in step.get("tool_calls") or [] if isinstance(c, dict)]
    results = [r for r in step.get("tool_results") or [] if isinstance(r, dict)]
    by_id = {r.get("call_id"): r for r in results if r.get("call_id")}
    views = []
    for j, call in enumerate(calls):
        res = by_id.get(call.get("id")) or (results[j] if j < len(results) and not results[j].get("call_id") else {})
        output, out_hidden = capped(pretty(res["output"])) if "output" in res else (None, 0)
        seen = shown_to_model(res) if res else None
        model_output, model_hidden = capped(seen) if seen is not None else (None, 0)
        views.append(
            ToolExchange(
                id=str(call.get("id") or ""),
                name=str(call.get("name", res.get("name", "?"))),
                arguments=pretty(call.get("arguments", {})),
                output=output,
                output_hidden=out_hidden,
                model_output=model_output,
                model_hidden=model_hidden,
                returned=bool(res),
            )
        )
    return views


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def step_detail(step: dict[str, Any], position: int, target: str, run_input: Any, colours: dict[str, int], previous_system: str | None) -> StepDetail:
    receipt = step.get("request") if isinstance(step.get("request"), dict) else {}
    sent = step.get("sent") if isinstance(step.get("sent"), dict) else {}
    system = sent.get("system") if isinstance(sent.get("system"), str) else ""
    contributions = [c for c in receipt.get("contributions") or [] if isinstance(c, dict)]
    parts = system_parts(system, contributions, colours)
    not_sent = [
        NotSent(str(c.get("contributor")), f"{c.get('representation')} rung", _int(c.get("tokens")), _colour_of(colours, str(c.get("contributor"))))
        for c in contributions
        if c.get("span") is None and c.get("kind") in ("context", "ladder")
    ]
    dropped = [d for d in receipt.get("dropped") or [] if isinstance(d, dict)]
    not_sent += [
        NotSent(str(d.get("id")), f"dropped by the token budget ({d.get('reason', 'budget')})", _int(d.get("tokens")), _colour_of(colours, str(d.get("id"))))
        for d in dropped
    ]
    token_rows = [
        TokenRow(
            label=str(c.get("contributor", "?")),
            kind=str(c.get("kind", "")),
            representation=str(c.get("representation", "")),
            tokens=_int(c.get("tokens")) or 0,
            colour=colours.get(str(c.get("contributor"))) if c.get("kind") in ("context", "ladder", "prompt-system") else None,
        )
        for c in contributions
    ]
    tool_tokens = receipt.get("tool_tokens") if isinstance(receipt.get("tool_tokens"), dict) else {}
    system_tokens = sum(_int(c.get("tokens")) or 0 for c in contributions if c.get("span") is not None) if contributions else None
    index = _int(step.get("index"))
    index = position if index is None else index
    got_in, got_out = usage_pair(step.get("usage"))
    error = step.get("error") if isinstance(step.get("error"), dict) else None
    response = step.get("response_text") if isinstance(step.get("response_text"), str) else None
    return StepDetail(
        index=index,
        anchor=f"step-{index}",
        receipt_id=receipt.get("id"),
        previous_request_id=receipt.get("previous_request_id"),
        model=receipt.get("model"),
        input_tokens=_int(receipt.get("input_tokens")),
        max_input_tokens=_int(receipt.get("max_input_tokens")),
        optimize_at=_int(receipt.get("optimize_at")),
        measurement=receipt.get("measurement"),
        epoch=_int(receipt.get("epoch")),
        tier=receipt.get("tier"),
        token_budget=_int(receipt.get("token_budget")),
        max_tokens=_int(sent.get("max_tokens")),
        usage_in=got_in,
        usage_out=got_out,
        latency=fmt_ms(step.get("latency_ms")),
        system_tokens=system_tokens,
        system_chars=len(system),
        system_same_as=(index - 1) if previous_system is not None and previous_system == system and system else None,
        parts=parts,
        not_sent=not_sent,
        token_rows=token_rows,
        messages=message_views(sent.get("messages")),
        tools=tool_views(sent.get("tools"), tool_tokens),
        tool_tokens_total=sum(v for v in tool_tokens.values() if isinstance(v, int)) if tool_tokens else None,
        ladders=ladders(receipt.get("candidates"), colours),
        adaptations=[a for a in receipt.get("adaptations") or [] if isinstance(a, dict)],
        dropped=dropped,
        warnings=[w if isinstance(w, str) else json.dumps(w) for w in receipt.get("warnings") or []],
        response_text=capped(response)[0] if response is not None else None,
        exchanges=exchanges(step),
        offloads=[o for o in step.get("offloads") or [] if isinstance(o, dict)],
        error=error,
        replay_href=replay_href(target, run_input),
        sent_missing=not sent,
    )


def source_href(root: Path | None, file: str | None, line: int | None) -> str | None:
    """The ``/source`` link for where the target is defined, when that file is inside the project."""
    if root is None or not file or file.startswith("<"):
        return None
    path = Path(file)
    if path.is_absolute():
        try:
            path = path.resolve().relative_to(Path(root).resolve())
        except (ValueError, OSError):
            return None
    query = {"file": path.as_posix(), **({"line": line} if line else {})}
    return f"/source?{urlencode(query)}"


def run_detail(header: ReportHeader, run: dict[str, Any], known_targets: set[str], root: Path | None = None) -> RunDetail:
    run_id = str(run.get("id", ""))
    target = str(run.get("target") or "?")
    run_input = run.get("input")
    colours: dict[str, int] = {"<prompt>": 0}
    steps: list[StepDetail] = []
    previous: str | None = None
    for position, step in enumerate(s for s in run.get("steps") or [] if isinstance(s, dict)):
        steps.append(step_detail(step, position, target, run_input, colours, previous))
        sent = step.get("sent") if isinstance(step.get("sent"), dict) else {}
        previous = sent.get("system") if isinstance(sent.get("system"), str) else None
    got_in, got_out = usage_pair(run.get("usage"))
    started, title = fmt_started(run.get("started_at"))
    line = run.get("line")
    return RunDetail(
        header=header,
        id=run_id,
        target=target,
        target_href=prompt_href(target),
        target_known=target in known_targets,
        kind=str(run.get("kind") or "prompt"),
        file=run.get("file") if isinstance(run.get("file"), str) else None,
        line=line if isinstance(line, int) else None,
        source_href=source_href(root, run.get("file") if isinstance(run.get("file"), str) else None, line if isinstance(line, int) else None),
        origin=str(run.get("origin") or "app"),
        model=str(run.get("model") or "—"),
        chip=status_chip(run.get("status")),
        started=started,
        started_title=title,
        duration=fmt_ms(run.get("duration_ms")),
        input_json=capped(pretty(run_input if run_input is not None else {}))[0],
        input_is_object=isinstance(run_input, dict),
        replay_href=replay_href(target, run_input),
        text=run.get("text") if isinstance(run.get("text"), str) else None,
        error=run.get("error") if isinstance(run.get("error"), dict) else None,
        usage_in=got_in,
        usage_out=got_out,
        input_tokens=sum(s.input_tokens or 0 for s in steps),
        steps=steps,
        json_href=f"/api/runs/{quote(run_id, safe='')}",
    )


# ---------------------------------------------------------------- a prompt's recent runs


@dataclass(frozen=True, slots=True)
class RecentRuns:
    target: str
    rows: list[RunRow]
    total: int
    all_href: str
    unavailable: str | None = None


@dataclass(frozen=True, slots=True)
class RunMissing:
    """The 404 page's view: no run with this id (or no store to look in)."""

    header: ReportHeader
    id: str
    problem: str | None


def needs_confirmation(prompt: dict[str, Any]) -> bool:
    """Whether the Run button must ask first: any model but a scripted one (``model_kind`` from the
    worker) costs money and runs real tools. An unknown kind asks too."""
    return prompt.get("model_kind") != "scripted"
