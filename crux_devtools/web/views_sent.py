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

from ..inspector.report_types import ExampleReport, PromptReport
from ..inspector.sent import cut_system

_SYSTEM_KINDS = ("prompt-system", "context", "ladder")
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
    diagnostics: list[dict[str, Any]] = field(default_factory=list)
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


def _sources(inspection: dict[str, Any] | None) -> dict[str, str]:
    return dict((inspection or {}).get("tool_sources") or {})


def sent_view(example_report: ExampleReport | None, colours: dict[str, int], prompt: PromptReport | None = None) -> SentView:
    """The request as sent for one example; ``prompt`` (the PromptReport) gives each context's
    definition site and the tools it owns (gone with it when it is omitted or dropped)."""
    if not example_report:
        return SentView("unavailable", "no example evaluated")
    planned = example_report["preview"]
    if planned is None:
        failure = example_report["preview_error"]
        if failure is None:  # the example failed before planning: its error is shown instead
            return SentView("unavailable", "the request could not be planned")
        return SentView("unavailable", "the request could not be planned", message=failure["message"], error_code=failure["code"])
    contexts = prompt["contexts"] if prompt is not None else []
    where = {c["id"]: (c["file"], c["line"]) for c in contexts}
    owned = {c["id"]: list(c["tools"]) for c in contexts}
    details = {str(p.get("source")): p.get("detail") for p in (example_report.get("inspection") or {}).get("parts") or [] if p.get("detail")}
    contributions = [c for c in planned.get("contributions") or [] if isinstance(c, dict)]
    view = SentView(
        "sent",
        input_tokens=int(planned.get("input_tokens") or 0),
        max_input_tokens=planned.get("max_input_tokens"),
        optimize_at=planned.get("optimize_at"),
        truncated=example_report["truncated"],
    )
    view.model_summaries = [
        (str(s.get("contributor")), str(s.get("model") or "its model")) for s in example_report.get("summaries") or [] if s.get("state") == "generate-prepares"
    ]
    view.prepared_here = [str(s.get("contributor")) for s in example_report.get("summaries") or [] if s.get("state") == "prepared-here"]
    sent = planned.get("sent")
    if planned.get("status") == "over-limit" or not isinstance(sent, dict):
        view.state = "over-limit"
        view.error_code = planned.get("error_code") or "REQUEST_TOO_LARGE"
        view.diagnostics = [d for d in planned.get("diagnostics") or [] if isinstance(d, dict)]
        view.message = next(iter(planned.get("warnings") or []), "")
        return view
    view.max_tokens = sent.get("max_tokens")
    in_system = [c for c in contributions if str(c.get("kind")) in _SYSTEM_KINDS]
    for c in contributions:
        source, kind, tokens = str(c.get("contributor")), str(c.get("kind")), int(c.get("tokens") or 0)
        if kind in _SYSTEM_KINDS:
            view.system_tokens += tokens
            if c.get("representation") == "omitted":
                view.not_sent.append(NotSent(source, "omitted by the planner (its ladder allows it)", None, owned.get(source, []), colours.get(source, 0), "omitted"))
        elif kind == "tools":
            view.tool_tokens += tokens
        else:
            view.message_tokens += tokens
    # The status line's system, messages and tool figures add up to the request's input tokens: each
    # part is counted alone, so the parts' sum can differ from the whole by a token at the joins.
    view.system_tokens = max(0, view.input_tokens - view.message_tokens - view.tool_tokens) if view.input_tokens is not None else view.system_tokens
    for part in cut_system(str(sent.get("system") or ""), in_system):
        if part.contribution is None or part.representation == "omitted":
            continue  # the blank lines between parts; an omitted rung is listed as not sent
        file, line = where.get(part.contributor, (None, None))
        view.parts.append(
            SentPart(
                part.contributor, part.kind, part.representation, part.text or "", part.tokens, colours.get(part.contributor, 0),
                part.variant, part.handle, list(part.contribution.get("tools") or []), file, line,
                details.get(part.contributor) if part.representation == "full" else None,
            )
        )
    for drop in planned.get("dropped") or []:
        if isinstance(drop, dict):
            reason = "dropped by the prompt's token_budget" if drop.get("reason") == "budget" else "dropped with its owner (token_budget)"
            view.not_sent.append(NotSent(str(drop.get("id")), reason, drop.get("tokens"), owned.get(str(drop.get("id")), []), colours.get(str(drop.get("id")), 0)))
    prompt_tokens = next((int(c.get("tokens") or 0) for c in contributions if c.get("kind") == "user-prompt"), None)
    messages = [m for m in sent.get("messages") or [] if isinstance(m, dict)]
    for index, m in enumerate(messages):
        is_prompt = prompt_tokens is not None and m.get("role") == "user" and index == _user_prompt_index(messages)
        view.messages.append(SentMessage(str(m.get("role", "?")), message_text(m), prompt_tokens if is_prompt else None))
    sources = _sources(example_report.get("inspection"))
    costs = planned.get("tool_tokens") or {}
    for t in sent.get("tools") or []:
        if not isinstance(t, dict):
            continue
        name = str(t.get("name"))
        source = "support tool: injected while something is offloaded" if name == SUPPORT_TOOL and name not in sources else sources.get(name, "<prompt>")
        view.tools.append(SentTool(name, str(t.get("description") or ""), pretty_json(t.get("parameters") or {}), costs.get(name), source))
    view.bar = request_bar(contributions, view, colours)
    return view


def _user_prompt_index(messages: list[dict[str, Any]]) -> int:
    """The user prompt is the last user message before this run's tool traffic (the planner puts it there)."""
    index = -1
    for i, m in enumerate(messages):
        if m.get("role") == "user":
            index = i
        elif m.get("role") in ("assistant", "tool") and index >= 0:
            break
    return index


def request_bar(contributions: list[dict[str, Any]], view: SentView, colours: dict[str, int]) -> RequestBar:
    """One segment per sent part, then messages and tool schemas, against max (and optimize_at)."""
    total = view.input_tokens or 0
    limit = view.max_input_tokens
    scale = max(total, limit or 0, 1)
    segments = []
    for c in contributions:
        tokens = int(c.get("tokens") or 0)
        if tokens <= 0 or c.get("representation") == "omitted":
            continue
        kind, source = c.get("kind"), str(c.get("contributor"))
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
