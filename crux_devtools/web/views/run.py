"""View-model of one recorded run, step by step: ``/runs/{id}``.

A run is the JSON the store holds (``RunStore.get``), written by another process, so every key is
read with ``.get`` and a missing one hides a line, never the page. The view only lays out what the
core recorded: the system text parts are ``sent.system`` cut at each contribution's ``span``, the
rungs and reasons are the receipt's, never re-derived here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from ...core.plan.rungs import rung_rank
from ...core.record.pricing import cache_usage_text
from ...inspector.features.runs.text import NOT_PLANNED, located, run_planned, step_planned
from ...inspector.features.runs.costs import Prices, format_usd, format_usd_column
from ...inspector.features.runs.glance import run_colours, run_glance
from ...inspector.features.shown.colours import hashed_slot
from ...inspector.features.shown.sent import SYSTEM_KINDS, cut_system
from .glance import GlanceView, glance_view
from .prompt import Chip, ReportHeader, prompt_href
from .planning import pretty, shown_to_model
from .runs import capped, fmt_ms, fmt_started, status_chip, usage_pair
from .run_live import step_stream_text



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
    failure: str | None = None  # why a call that did not return failed (the step's error), else None
    skipped: str = "not executed"  # what a call that neither returned nor failed is, in words


@dataclass(frozen=True, slots=True)
class OtelMarks:
    """A step (or a run) that came as OpenTelemetry spans: its span, and what never arrived."""

    span_name: str
    span_id: str
    parent_missing: str | None  # the parent span's id when it never arrived, else None


@dataclass(frozen=True, slots=True)
class LooseTool:
    """A tool span of an OpenTelemetry run that belongs to no step that arrived."""

    name: str
    call_id: str
    span_id: str
    parent_missing: str | None


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
    cost: str = "unpriced"  # the provider's usage at the model's price (``with_costs``)
    cache_usage: str | None = None  # the provider's cache reads and writes (``cache_usage_text``)
    not_planned: str | None = None  # ``NOT_PLANNED`` for a step crux did not plan (a span from elsewhere)
    otel: OtelMarks | None = None  # where a step from OpenTelemetry came from, and what did not arrive
    stream: str | None = None  # a streamed step's time to first token and tokens per second (``run_live.step_stream_text``)

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
    cost: str = "unpriced"
    parent: str | None = None  # a replay of step ``fork_step`` of run ``parent``
    fork_step: int | None = None
    not_planned: str | None = None  # ``NOT_PLANNED`` for a run crux did not plan (spans from elsewhere)
    run_span_missing: bool = False  # a run from OpenTelemetry whose agent span has not arrived
    loose_tools: list[LooseTool] = field(default_factory=list)
    glance: GlanceView | None = None  # the timeline and the bars per step (``views/glance.py``)
    full: frozenset[int] | None = None  # the steps (by index) shown as whole cards; None: every step (``step_window``)
    step_problem: str | None = None  # a ``?step=`` that names no step, said on the page
    window_note: str | None = None  # what a long run's page shows whole, and how to see the rest

    def in_full(self, step: StepDetail) -> bool:
        """Whether the page shows ``step`` as its whole card (else as one compact row that loads it)."""
        return self.full is None or step.index in self.full


def otel_marks(step: dict[str, Any]) -> OtelMarks | None:
    record = _dict(step.get("otel"))
    if not record:
        return None
    parent = record.get("parent_span_id")
    return OtelMarks(str(record.get("name") or ""), str(record.get("span_id") or ""), str(parent) if record.get("parent_missing") and parent else None)


def loose_tools(run: dict[str, Any]) -> list[LooseTool]:
    tools = _dict(run.get("otel")).get("loose_tools")
    out = []
    for t in tools if isinstance(tools, list) else []:
        if isinstance(t, dict):
            result = _dict(t.get("result"))
            parent = t.get("parent_span_id")
            out.append(LooseTool(str(result.get("name") or t.get("name") or "?"), str(result.get("call_id") or ""), str(t.get("span_id") or ""),
                                 str(parent) if t.get("parent_missing") and parent else None))
    return out


def _colour_of(colours: dict[str, int], contributor: str) -> int:
    """The run's colour of a contributor (``run_colours``); a name it did not list gets its hash's."""
    if contributor not in colours:
        colours[contributor] = hashed_slot(contributor)
    return colours[contributor]


def replay_href(target: str, value: Any, at_step: str | None = None) -> str | None:
    """``/prompts/{target}?input=<json>``: the prompt page with this input as its custom input;
    ``at_step`` (``RUN:K``) adds that step's messages, so the page plans the request as step K sent it."""
    if not isinstance(value, dict):
        return None
    text = json.dumps(value, indent=2, ensure_ascii=False)
    href = prompt_href(target, input=text, at_step=at_step)
    if len(href) > 6000:  # keep the request line well under the server's limit
        href = prompt_href(target, input=json.dumps(value, ensure_ascii=False, separators=(",", ":")), at_step=at_step)
    return href


def system_parts(system: str, contributions: list[dict[str, Any]], colours: dict[str, int]) -> list[SentPart]:
    """The system text cut at each contribution's span (``inspector.sent.cut_system``), with the
    page's colours; any text no span covers is shown too."""
    cut = cut_system(system, contributions)
    parts: list[SentPart] = []
    for piece in cut:
        text, hidden = capped(piece.text or "")
        c = piece.contribution
        if c is None:
            if (piece.text or "").strip():
                parts.append(SentPart("(not attributed)", "text", "full", None, text, hidden, 0, None, None, []))
            continue
        parts.append(
            SentPart(
                contributor=piece.contributor,
                kind=str(c.get("kind", "context")),
                representation=str(c.get("representation", "full")),
                tokens=c.get("tokens") if isinstance(c.get("tokens"), int) else None,
                text=text,
                hidden=hidden,
                colour=_colour_of(colours, piece.contributor),
                variant=piece.variant,
                handle=piece.handle,
                tools=[str(t) for t in c.get("tools") or []],
            )
        )
    if system and not any(piece.attributed for piece in cut):
        text, hidden = capped(system)
        parts = [SentPart("(system text)", "text", "full", None, text, hidden, 0, None, None, [])]
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
            fn = _dict(call.get("function")) or call
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
        Ladder(name, _colour_of(colours, name), sorted(rows, key=lambda r: rung_rank(r.representation)))
        for name, rows in groups.items()
    ]


def exchanges(step: dict[str, Any]) -> list[ToolExchange]:
    calls = [c for c in step.get("tool_calls") or [] if isinstance(c, dict)]
    results = [r for r in step.get("tool_results") or [] if isinstance(r, dict)]
    by_id = {r.get("call_id"): r for r in results if r.get("call_id")}
    views = []
    error = _dict(step.get("error"))
    blamed = False  # the step's error is the first call that did not return: the calls after it never ran
    for j, call in enumerate(calls):
        res = by_id.get(call.get("id")) or (results[j] if j < len(results) and not results[j].get("call_id") else {})
        output, out_hidden = capped(pretty(res["output"])) if "output" in res else (None, 0)
        seen = shown_to_model(res) if res else None
        model_output, model_hidden = capped(seen) if seen is not None else (None, 0)
        failure = None
        if not res and error and not blamed:
            blamed = True
            failure = f"{error.get('type') or 'Error'}: {error.get('message') or ''}".strip()
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
                failure=failure,
                skipped="not executed: an earlier call of this step failed" if blamed and failure is None else "not executed",
            )
        )
    return views


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any, default: str | None = None) -> Any:
    return value if isinstance(value, str) else default


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def step_detail(step: dict[str, Any], position: int, target: str, run_input: Any, colours: dict[str, int], previous_system: str | None,
                run_id: str = "") -> StepDetail:
    receipt = _dict(step.get("request"))
    sent = _dict(step.get("sent"))
    system = _text(sent.get("system"), "")
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
            colour=colours.get(str(c.get("contributor"))) if c.get("kind") in SYSTEM_KINDS else None,
        )
        for c in contributions
    ]
    tool_tokens = _dict(receipt.get("tool_tokens"))
    system_tokens = sum(_int(c.get("tokens")) or 0 for c in contributions if c.get("span") is not None) if contributions else None
    index = _int(step.get("index"))
    index = position if index is None else index
    got_in, got_out = usage_pair(step.get("usage"))
    error = _dict(step.get("error"))
    response = _text(step.get("response_text"), None)
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
        cache_usage=cache_usage_text(step.get("usage")),
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
        replay_href=replay_href(target, run_input, f"{run_id}:{step['index']}" if run_id and isinstance(step.get("index"), int) else None),
        sent_missing=not sent,
        not_planned=None if step_planned(step) else NOT_PLANNED,
        otel=otel_marks(step),
        stream=step_stream_text(step),
    )


def step_row(step: dict[str, Any], position: int) -> StepDetail:
    """A step its page shows as one compact row (``_run_step_row.html``): the figures the row reads,
    as ``step_detail`` computes them; what only the whole card shows is left empty (its tool calls
    are there to be counted, without their arguments or results), and the card itself comes from
    ``step_detail`` when asked for."""
    receipt = _dict(step.get("request"))
    index = _int(step.get("index"))
    index = position if index is None else index
    got_in, got_out = usage_pair(step.get("usage"))
    response = _text(step.get("response_text"), None)
    return StepDetail(
        index=index, anchor=f"step-{index}", receipt_id=receipt.get("id"), previous_request_id=None, model=receipt.get("model"),
        input_tokens=_int(receipt.get("input_tokens")), max_input_tokens=None, optimize_at=None, measurement=None, epoch=None,
        tier=None, token_budget=None, max_tokens=None, usage_in=got_in, usage_out=got_out, latency=fmt_ms(step.get("latency_ms")),
        system_tokens=None, system_chars=0, system_same_as=None, parts=[], not_sent=[], token_rows=[], messages=[], tools=[],
        tool_tokens_total=None, ladders=[], adaptations=[], dropped=[], warnings=[],
        response_text=capped(response)[0] if response is not None else None, offloads=[],
        exchanges=[ToolExchange(str(c.get("id") or ""), str(c.get("name", "?")), "", None, 0, None, 0, False)  # the row counts them
                   for c in step.get("tool_calls") or [] if isinstance(c, dict)],
        error=_dict(step.get("error")), replay_href=None, sent_missing=not _dict(step.get("sent")),
        not_planned=None if step_planned(step) else NOT_PLANNED,
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


def run_detail(header: ReportHeader, run: dict[str, Any], known_targets: set[str], root: Path | None = None,
               context_names: Iterable[str] = (), whole: frozenset[int] | None = None, glance: bool = True) -> RunDetail:
    """The page's view of ``run``; ``context_names`` (the target's contexts, when it is known) make a
    context's colour the one the prompt page shows. ``whole`` (step indexes; None: every step) names
    the steps whose whole card is made; the others get the figures of their compact row (``step_row``).
    ``glance=False`` leaves out the timeline and bars (one step's card does not show them)."""
    run_id = str(run.get("id", ""))
    target = str(run.get("target") or "?")
    run_input = run.get("input")
    raw_steps = [s for s in run.get("steps") or [] if isinstance(s, dict)]
    colours = run_colours(raw_steps, context_names)
    steps: list[StepDetail] = []
    previous: str | None = None
    for position, step in enumerate(raw_steps):
        index = _int(step.get("index"))
        if whole is None or (position if index is None else index) in whole:
            steps.append(step_detail(step, position, target, run_input, colours, previous, run_id))
        else:
            steps.append(step_row(step, position))
        sent = _dict(step.get("sent"))
        previous = _text(sent.get("system"), None)
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
        file=_text(run.get("file"), None),
        line=line if isinstance(line, int) else None,
        source_href=source_href(root, _text(run.get("file"), None), line if isinstance(line, int) else None),
        origin=str(run.get("origin") or "app"),
        model=str(run.get("model") or "—"),
        chip=status_chip(run.get("status")),
        started=started,
        started_title=title,
        duration=fmt_ms(run.get("duration_ms")),
        input_json=capped(pretty(run_input if run_input is not None else {}))[0],
        input_is_object=isinstance(run_input, dict),
        replay_href=replay_href(target, run_input),
        text=_text(run.get("text"), None),
        error=located(_dict(run.get("error")), root),  # the project's line up front, as ``run`` prints it
        usage_in=got_in,
        usage_out=got_out,
        input_tokens=sum(s.input_tokens or 0 for s in steps),
        steps=steps,
        json_href=f"/api/runs/{quote(run_id, safe='')}",
        parent=run["parent"] if isinstance(run.get("parent"), str) and run["parent"] else None,
        fork_step=run["fork_step"] if isinstance(run.get("fork_step"), int) else None,
        not_planned=None if run_planned(run) else NOT_PLANNED,
        run_span_missing=bool(_dict(run.get("otel")).get("run_span_missing")),
        loose_tools=loose_tools(run),
        glance=glance_view(run_glance(run), colours) if raw_steps and glance else None,
        full=whole,
    )


WINDOW_HEAD = 10  # a long run's page shows its first steps whole, ...
WINDOW_TAIL = 10  # ... and its last ones (how it ended); every other step is a compact row
FULL_RUN_STEPS = WINDOW_HEAD + WINDOW_TAIL  # a run of at most this many steps shows every step whole


@dataclass(frozen=True, slots=True)
class StepWindow:
    """The steps a run's page shows whole (None: every step), the one ``?step=`` asked for, and what
    the page says about them."""

    whole: frozenset[int] | None
    asked: int | None
    problem: str | None
    note: str | None


def step_indexes(run: dict[str, Any]) -> list[int]:
    """Each step's index as the page shows it (its position when it recorded none)."""
    raw = [s for s in run.get("steps") or [] if isinstance(s, dict)]
    return [position if _int(s.get("index")) is None else int(s["index"]) for position, s in enumerate(raw)]


def step_window(indexes: list[int], asked: str | None) -> StepWindow:
    """The steps a page shows whole: all of a short run's; of a longer one the first ``WINDOW_HEAD``,
    the last ``WINDOW_TAIL`` and the step ``asked`` (``?step=N``) names. The others are compact rows,
    each loading its card on demand (``GET /runs/{id}/steps/{index}``)."""
    wanted: int | None = None
    problem = None
    if asked is not None and asked.strip() != "":
        try:
            wanted = int(asked.strip())
        except ValueError:
            wanted = None
        if wanted is None or wanted not in indexes:
            wanted = None
            known = f"steps {indexes[0]} to {indexes[-1]}" if indexes else "no steps"
            problem = f"?step={asked} names no step of this run (it has {known}): pass one of its step numbers"
    if len(indexes) <= FULL_RUN_STEPS:
        return StepWindow(None, wanted, problem, None)
    ends = indexes[:WINDOW_HEAD] + indexes[-WINDOW_TAIL:]
    extra = f" and step {wanted}" if wanted is not None and wanted not in ends else ""
    note = (f"{len(indexes):,} steps: the first {WINDOW_HEAD}, the last {WINDOW_TAIL}{extra} are shown whole; "
            "every other step is one row, and its link (or its bar above) shows it whole.")
    return StepWindow(frozenset(ends + ([wanted] if wanted is not None else [])), wanted, problem, note)


def with_costs(view: RunDetail, run: dict[str, Any], prices: Prices) -> RunDetail:
    """``view`` with the run's cost and each step's, from the provider's usage and the model prices."""
    view.cost = format_usd(prices.run_cost(run))
    steps = [s for s in run.get("steps") or [] if isinstance(s, dict)]
    costs = format_usd_column([prices.step_cost(s, run.get("model")) if isinstance(s.get("usage"), dict) else None for s in steps])
    for detail, cost in zip(view.steps, costs, strict=False):  # the steps' costs: one precision for all
        detail.cost = cost
    return view


@dataclass(frozen=True, slots=True)
class RunMissing:
    """The 404 page's view: no run with this id (or no store to look in)."""

    header: ReportHeader
    id: str
    problem: str | None
