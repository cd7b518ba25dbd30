"""View-model of the request as sent: ``ExampleReport["preview"]["sent"]`` laid out part by part.

The core decided everything: ``sent`` is the literal request, each ``Contribution.span`` says which
characters of ``sent["system"]`` a part is and at which rung it was sent, ``tool_tokens`` what each
tool's schema costs. The text is cut at those spans by ``inspector.sent.cut_system`` (the one cut
every surface shows); this module adds the page's colours, definition sites and notes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ...inspector.report_types import ExampleReport, InspectionDict, PlanErrorDict, PreviewDict, PromptReport, SummaryState
from ...inspector.features.shown.sent import SYSTEM_KINDS, TOOLS_KIND, cut_system
from ...shapes import ContributionDict, DiagnosticDict, DropDict, ToolSchemaDict

SUPPORT_TOOL = "read_offload"


@dataclass(frozen=True, slots=True)
class SentPart:
    """One part of the sent system text: its characters, its source and the rung it was sent at."""

    source: str
    kind: str
    rung: str  # full | authored | summary | offload
    text: str
    tokens: int
    colour: int
    variant: str | None = None  # the prefer alternative sent ("authored")
    handle: str | None = None  # the offload handle ("offload")
    tools: list[str] = field(default_factory=list)
    file: str | None = None
    line: int | None = None
    detail: str | None = None  # what the part's source said about itself (a memory: what it read)


@dataclass(frozen=True, slots=True)
class NotSent:
    """A contributor that is not in the request: a ladder at its omitted rung, or dropped by token_budget."""

    source: str
    why: str
    tokens: int | None
    tools: list[str]
    colour: int
    rung: str | None = None  # the rung that sends nothing (the page words it from the rung vocabulary)


@dataclass(frozen=True, slots=True)
class SentMessage:
    role: str
    text: str
    tokens: int | None  # known for the user prompt only (its contribution)


@dataclass(frozen=True, slots=True)
class SentTool:
    name: str
    description: str
    schema: str  # pretty JSON
    tokens: int | None
    source: str


@dataclass(frozen=True, slots=True)
class BarSegment:
    source: str
    tokens: int
    percent: float
    css: str  # a colour class: c-N for a part, c-msg for messages, c-tools for tool schemas


@dataclass(frozen=True, slots=True)
class RequestBar:
    """The sent request's input tokens against its limits (``max_input_tokens``, ``optimize_at``)."""

    segments: list[BarSegment]
    input_tokens: int
    max_input_tokens: int | None
    max_percent: float | None
    optimize_at: int | None
    optimize_percent: float | None


@dataclass
class SentView:
    """``state``: ``"sent"`` (a request), ``"over-limit"`` (nothing would be sent) or ``"unavailable"``."""

    state: str
    reason: str = ""
    parts: list[SentPart] = field(default_factory=list)
    not_sent: list[NotSent] = field(default_factory=list)
    messages: list[SentMessage] = field(default_factory=list)
    tools: list[SentTool] = field(default_factory=list)
    bar: RequestBar | None = None
    input_tokens: int | None = None
    system_tokens: int = 0
    message_tokens: int = 0
    tool_tokens: int = 0
    max_input_tokens: int | None = None
    optimize_at: int | None = None
    max_tokens: int | None = None
    error_code: str | None = None
    diagnostics: list[DiagnosticDict] = field(default_factory=list)
    message: str = ""
    truncated: bool = False
    # Summaries generate prepares with a model before sending: (contributor, model); the request shown
    # is the one sent if preparing them fails.
    model_summaries: list[tuple[str, str]] = field(default_factory=list)
    prepared_here: list[str] = field(default_factory=list)  # extractive summaries prepared for this view, as generate would

    @property
    def adapted(self) -> list[SentPart]:
        return [p for p in self.parts if p.rung != "full"]


def pretty_json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False, default=str)


def message_text(message: dict[str, Any]) -> str:
    """A message's content as text; tool traffic (calls, ids) as pretty JSON of the other fields."""
    content = message.get("content")
    rest = {k: v for k, v in message.items() if k not in ("role", "content")}
    text = content if isinstance(content, str) else ("" if content is None else pretty_json(content))
    if rest:
        text = (text + "\n" if text else "") + pretty_json(rest)
    return text


def sent_view(example_report: ExampleReport | None, colours: dict[str, int], prompt: PromptReport | None = None) -> SentView:
    """The request as sent for one example; ``prompt`` (the PromptReport) gives each context's
    definition site and the tools it owns (gone with it when it is omitted or dropped)."""
    if example_report is None:
        return SentView("unavailable", "no example evaluated")
    planned = example_report["preview"]
    if planned is None:
        return _unplanned(example_report["preview_error"])
    view = SentView(
        "sent",
        input_tokens=planned["input_tokens"],
        max_input_tokens=planned["max_input_tokens"],
        optimize_at=planned["optimize_at"],
        truncated=example_report["truncated"],
    )
    _summaries(view, example_report["summaries"])
    sent = planned["sent"]
    if planned["status"] == "over-limit" or sent is None:
        return _over_limit(view, planned)
    sites = _Sites.of(prompt, colours)
    view.max_tokens = sent["max_tokens"]
    _token_split(view, planned["contributions"], sites)
    _system_parts(view, sent["system"], planned["contributions"], example_report["inspection"], sites)
    _dropped(view, planned["dropped"], sites)
    _messages(view, sent["messages"], planned["contributions"])
    tool_sources = example_report["inspection"]["tool_sources"] if example_report["inspection"] is not None else {}
    _tools(view, sent["tools"], planned["tool_tokens"], tool_sources)
    view.bar = request_bar(planned["contributions"], view, colours)
    return view


@dataclass(frozen=True, slots=True)
class _Sites:
    """Where each context of the prompt is defined, the tools it owns, and its colour."""

    where: dict[str, tuple[str | None, int | None]]
    owned: dict[str, list[str]]
    colours: dict[str, int]

    @classmethod
    def of(cls, prompt: PromptReport | None, colours: dict[str, int]) -> _Sites:
        contexts = prompt["contexts"] if prompt is not None else []
        return cls({c["id"]: (c["file"], c["line"]) for c in contexts}, {c["id"]: list(c["tools"]) for c in contexts}, colours)

    def not_sent(self, source: str, why: str, tokens: int | None, rung: str | None = None) -> NotSent:
        return NotSent(source, why, tokens, self.owned.get(source, []), self.colours.get(source, 0), rung)


def _unplanned(failure: PlanErrorDict | None) -> SentView:
    """No plan: the planner refused (its code and message), or the example failed before planning
    (its error is shown instead)."""
    if failure is None:
        return SentView("unavailable", "the request could not be planned")
    return SentView("unavailable", "the request could not be planned", message=failure["message"], error_code=failure["code"])


def _summaries(view: SentView, summaries: list[SummaryState]) -> None:
    """The summaries generate prepares with a model before sending, and those prepared here."""
    view.model_summaries = [(s["contributor"], s["model"] or "its model") for s in summaries if s.get("state") == "generate-prepares"]
    view.prepared_here = [s["contributor"] for s in summaries if s.get("state") == "prepared-here"]


def _over_limit(view: SentView, planned: PreviewDict) -> SentView:
    view.state = "over-limit"
    view.error_code = planned["error_code"] or "REQUEST_TOO_LARGE"
    view.diagnostics = list(planned["diagnostics"])
    view.message = next(iter(planned["warnings"]), "")
    return view


def _token_split(view: SentView, contributions: list[ContributionDict], sites: _Sites) -> None:
    """System, messages and tool figures, and each omitted rung as not sent. The figures add up to
    the request's input tokens: each part is counted alone, so the parts' sum can differ from the
    whole by a token at the joins, and the system text takes that difference."""
    for c in contributions:
        if c["kind"] in SYSTEM_KINDS and c["representation"] == "omitted":
            view.not_sent.append(sites.not_sent(c["contributor"], "omitted by the planner (its ladder allows it)", None, "omitted"))
        elif c["kind"] == TOOLS_KIND:
            view.tool_tokens += c["tokens"]
        elif c["kind"] not in SYSTEM_KINDS:
            view.message_tokens += c["tokens"]
    view.system_tokens = max(0, (view.input_tokens or 0) - view.message_tokens - view.tool_tokens)


def _system_parts(view: SentView, system: str, contributions: list[ContributionDict], inspection: InspectionDict | None, sites: _Sites) -> None:
    """The sent system text cut at each contribution's span (the blank lines between parts and an
    omitted rung are not parts here: an omitted rung is listed as not sent)."""
    details = {p["source"]: p["detail"] for p in inspection["parts"]} if inspection is not None else {}
    for part in cut_system(system, [c for c in contributions if c["kind"] in SYSTEM_KINDS]):
        if part.contribution is None or part.representation == "omitted":
            continue
        file, line = sites.where.get(part.contributor, (None, None))
        view.parts.append(
            SentPart(
                part.contributor, part.kind, part.representation, part.text or "", part.tokens, sites.colours.get(part.contributor, 0),
                part.variant, part.handle, list(part.contribution["tools"]), file, line,
                details.get(part.contributor) if part.representation == "full" else None,
            )
        )


def _dropped(view: SentView, dropped: list[DropDict], sites: _Sites) -> None:
    for drop in dropped:
        reason = "dropped by the prompt's token_budget" if drop["reason"] == "budget" else "dropped with its owner (token_budget)"
        view.not_sent.append(sites.not_sent(drop["id"], reason, drop["tokens"]))


def _messages(view: SentView, messages: list[dict[str, Any]], contributions: list[ContributionDict]) -> None:
    """The chat messages as sent; the user prompt carries its tokens (its contribution's)."""
    prompt_tokens = next((c["tokens"] for c in contributions if c["kind"] == "user-prompt"), None)
    prompt_index = _user_prompt_index(messages) if prompt_tokens is not None else -1
    for index, m in enumerate(messages):
        view.messages.append(SentMessage(str(m.get("role", "?")), message_text(m), prompt_tokens if index == prompt_index else None))


def _tools(view: SentView, tools: list[ToolSchemaDict], costs: dict[str, int], sources: dict[str, str]) -> None:
    """Each offered tool with its schema, its cost and the context that offered it."""
    for t in tools:
        name = t["name"]
        source = "support tool: injected while something is offloaded" if name == SUPPORT_TOOL and name not in sources else sources.get(name, "<prompt>")
        view.tools.append(SentTool(name, t["description"], pretty_json(t["parameters"]), costs.get(name), source))


def _user_prompt_index(messages: list[dict[str, Any]]) -> int:
    """The user prompt is the last user message before this run's tool traffic (the planner puts it there)."""
    index = -1
    for i, m in enumerate(messages):
        if m.get("role") == "user":
            index = i
        elif m.get("role") in ("assistant", "tool") and index >= 0:
            break
    return index


def request_bar(contributions: list[ContributionDict], view: SentView, colours: dict[str, int]) -> RequestBar:
    """One segment per sent part, then messages and tool schemas, against max (and optimize_at)."""
    total = view.input_tokens or 0
    limit = view.max_input_tokens
    scale = max(total, limit or 0, 1)
    segments = []
    for c in contributions:
        tokens = c["tokens"]
        if tokens <= 0 or c["representation"] == "omitted":
            continue
        kind, source = c["kind"], c["contributor"]
        css = "c-tools" if kind == "tools" else "c-msg" if kind in ("user-prompt", "messages") else f"c-{colours.get(source, 0)}"
        label = {"<tools>": "tool schemas", "<user-prompt>": "user prompt", "<messages>": "messages"}.get(source, source)
        segments.append(BarSegment(label, tokens, 100.0 * tokens / scale, css))
    optimize = view.optimize_at if view.optimize_at is not None and view.optimize_at != limit else None
    return RequestBar(
        segments=segments,
        input_tokens=total,
        max_input_tokens=limit,
        max_percent=(100.0 * limit / scale) if limit else None,
        optimize_at=optimize,
        optimize_percent=(100.0 * optimize / scale) if optimize else None,
    )
