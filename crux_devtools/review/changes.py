"""The change engine: what differs between two snapshots of one request, and where the prompt cache breaks.

Pure and import-light (no pydantic, no user code, no I/O). The only heavy thing, the tiktoken
counter of ``crux_devtools.core.tokens``, is loaded on first use when no ``counter`` is given.

API::

    base = snapshot_from_example(prompt_report, example_report)       # an inspector report
    head = snapshot_from_step(step)                                    # a recorded step (Step.to_dict())
    head = snapshot_from_request(sent, contributions, input_tokens=..., status="fits")  # any planned request
    changes, cache_prefix = compare(base, head)                        # counter=... optional

``RequestSnapshot`` is one request as planned: the literal ``sent`` (system text, messages, tool
schemas), its ``input_tokens`` and ``status``, which contexts are in it, which are out and why,
each contributor's rung, the errors, and the attribution of the system text (``Part``: which context,
or ``"prompt"`` for the prompt's own text, produced which characters, and where it is defined).

``compare`` returns ``(changes, cache_prefix)``. Each change is a plain dict ``{"kind", ...}``:

- ``context-joined`` / ``context-left``: ``id``, ``reason`` (why it was out before a join, or is
  out after a leave: ``when``, ``match``, ``budget``, ``parent-dropped``, ``parent-excluded``;
  ``removed`` when the other side does not use it at all, ``added`` for a context new at head);
- ``text``: ``context`` (a context id, ``"prompt"`` or ``"messages"``), ``base_tokens``,
  ``head_tokens``, ``file``, ``line`` (where that context or prompt is defined), ``diff`` (a unified
  diff of that text, base to head);
- ``rung``: ``contributor``, ``base``, ``head`` (rung names of ``core.plan.rungs``), ``cause``
  (``budget``: a budget setting changed; ``text``: the contributor's own full text changed;
  ``prepared``: which of its rungs are available changed, e.g. a summary was prepared;
  ``pressure``: the other contributors grew or shrank); never also a ``text`` change of it. A
  droppable contributor the planner now omits (or no longer omits) is also a ``context-left``
  (``context-joined``) with reason ``budget``;
- ``order``: ``base``, ``head``: the ids of the system blocks in order, when blocks moved;
- ``budget``: ``field`` (``token_budget``, ``max``, ``optimize_at``, ``max_tokens``, ``model``),
  ``base``, ``head`` (the planning settings of the two requests);
- ``request``: ``part`` (``system``, ``messages``, ``tools``, ``max_tokens``): a difference of the
  literal request that no other change explains;
- ``tool-added`` / ``tool-removed`` / ``tool-changed``: ``name`` (``tool-changed`` also says
  ``what``: ``description``, ``parameters`` or both);
- ``tokens``: ``base``, ``head``, ``delta``, ``percent`` (None when base is 0);
- ``status``: ``base``, ``head``;
- ``error``: ``message``, ``file``, ``line``, ``appeared`` (True: at head only; False: gone at head).

The changes come from the literal request first: when ``sent`` (system, messages, tools,
``max_tokens``) and the status are the same at both sides there is no change at all, whatever else
differs (a renamed variable, a priority that drops nothing); when they differ, every differing part
is explained by at least one change, else it is a ``request`` change naming the part.

``cache_prefix`` is ``{"common_tokens", "base_tokens", "head_tokens", "broken_by"}`` or None when
either side sent nothing. Providers cache the longest unchanged prefix of a request in the order
tools, system, messages; ``common_tokens`` are the tokens of that common prefix, ``base_tokens`` /
``head_tokens`` those of each whole request in that order, and ``broken_by`` what holds the first
differing character (a context id, ``"prompt"``, ``"tools"``, ``"messages"``; None when equal).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..core.plan.cache_prefix import prefix_tokens, shared_prefix

Change = dict[str, Any]

PROMPT = "prompt"
MESSAGES = "messages"
TOOLS = "tools"
_PROMPT_CONTRIBUTORS = {"<prompt>", "<system>"}
_REASONS = {"when-wrapper": "when"}  # the resolver's words -> the review's
KIND_ORDER = (
    "status", "error", "tokens", "budget", "context-left", "context-joined", "order", "rung", "text",
    "tool-removed", "tool-added", "tool-changed", "request",
)
BUDGET_FIELDS = ("token_budget", "max", "optimize_at", "max_tokens", "model")
_OMITTED = "omitted"


class Counter(Protocol):
    def count(self, text: str) -> int: ...


@dataclass(frozen=True, slots=True)
class Part:
    """Characters ``start:end`` of the system text, produced by context ``id`` (``"prompt"``: the prompt's own text)."""

    id: str
    start: int
    end: int
    tokens: int | None = None
    rung: str | None = None


@dataclass(frozen=True, slots=True)
class Problem:
    """A load or plan error of the request, with where it happened."""

    message: str
    file: str | None = None
    line: int | None = None


@dataclass(frozen=True)
class RequestSnapshot:
    """One request as planned (see the module docstring). ``sent`` False: nothing would be sent."""

    system: str = ""
    messages: tuple[Any, ...] = ()
    tools: tuple[Mapping[str, Any], ...] = ()
    input_tokens: int | None = None
    status: str | None = None
    sent: bool = True
    parts: tuple[Part, ...] = ()
    contexts_in: tuple[str, ...] = ()
    out: Mapping[str, str] = field(default_factory=dict)
    rungs: Mapping[str, str] = field(default_factory=dict)
    errors: tuple[Problem, ...] = ()
    where: Mapping[str, tuple[str | None, int | None]] = field(default_factory=dict)
    max_tokens: int | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)  # the BUDGET_FIELDS the request was planned with
    full_tokens: Mapping[str, int] = field(default_factory=dict)  # ladder contributor -> tokens of its full text
    available: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # ladder contributor -> its available rungs
    tool_tokens: tuple[int | None, ...] = ()  # the planner's count of each tool schema, in ``tools`` order (None: not counted)

    def text_of(self, part_id: str) -> str:
        """The system text produced by ``part_id`` (its parts joined)."""
        return "".join(self.system[p.start : p.end] for p in self.parts if p.id == part_id)


_default_counter: Counter | None = None


def default_counter() -> Counter:
    """The project's tiktoken counter (``core.tokens.TiktokenCounter``), loaded once."""
    global _default_counter
    if _default_counter is None:
        from ..core.tokens import TiktokenCounter

        _default_counter = TiktokenCounter()
    return _default_counter


def part_id(contributor: str) -> str:
    """The review's name for a planner contributor (``<prompt>`` -> ``prompt``)."""
    return PROMPT if contributor in _PROMPT_CONTRIBUTORS else contributor


def snapshot_from_request(
    sent: Mapping[str, Any] | None,
    contributions: Iterable[Mapping[str, Any]] = (),
    *,
    input_tokens: int | None = None,
    status: str | None = None,
    contexts_in: Iterable[str] | None = None,
    out: Mapping[str, str] | None = None,
    dropped: Iterable[Mapping[str, Any]] = (),
    errors: Iterable[Problem] = (),
    where: Mapping[str, tuple[str | None, int | None]] | None = None,
    settings: Mapping[str, Any] | None = None,
    candidates: Iterable[Mapping[str, Any]] = (),
    tool_tokens: Mapping[str, Any] | None = None,
) -> RequestSnapshot:
    """A snapshot from a planned request: ``sent`` (``{"system", "messages", "tools", "max_tokens"}``)
    and the planner's ``contributions`` (each ``{"contributor", "kind", "representation", "tokens",
    "span"}``), as in a ``RequestPreview`` or a recorded step's ``request``. ``contexts_in`` defaults
    to the contributions of kind ``context`` and the ladder contributors the planner did not omit; an
    omitted one is out for the ``budget``, as are ``dropped`` entries (``{"id", "reason"}``).
    ``settings``: the request's planning settings (``BUDGET_FIELDS``); ``candidates``: the planner's
    rungs considered per ladder contributor (``{"contributor", "representation", "available", "tokens"}``);
    ``tool_tokens``: the planner's count of each tool schema by name (a preview's or receipt's ``tool_tokens``)."""
    parts: list[Part] = []
    rungs: dict[str, str] = {}
    in_request: list[str] = []
    reasons = dict(out or {})
    for c in contributions:
        name = part_id(str(c.get("contributor")))
        kind = c.get("kind")
        if c.get("span"):
            start, end = c["span"]
            parts.append(Part(name, int(start), int(end), c.get("tokens"), c.get("representation")))
        if kind in ("context", "ladder") or name == PROMPT:
            if c.get("representation"):
                rungs.setdefault(name, str(c["representation"]))
        if kind == "ladder" and c.get("representation") == _OMITTED:
            reasons.setdefault(name, "budget")
        elif kind in ("context", "ladder") and name not in in_request:
            in_request.append(name)
    for d in dropped:
        reasons[str(d["id"])] = str(d.get("reason") or "budget")
    chosen = list(in_request if contexts_in is None else contexts_in)
    chosen += [c for c in in_request if c not in chosen]
    full: dict[str, list[int]] = {}
    available: dict[str, list[str]] = {}
    for c in candidates:
        name = str(c.get("contributor"))
        if c.get("representation") == "full" and isinstance(c.get("tokens"), int):
            full.setdefault(name, []).append(int(c["tokens"]))
        if c.get("available"):
            available.setdefault(name, []).append(str(c.get("representation")))
    max_tokens = sent.get("max_tokens") if sent else None
    tools = tuple(sent.get("tools") or ()) if sent else ()
    counted = tool_tokens or {}
    return RequestSnapshot(
        system=str(sent.get("system") or "") if sent else "",
        messages=tuple(sent.get("messages") or ()) if sent else (),
        tools=tools,
        input_tokens=input_tokens,
        status=status,
        sent=sent is not None,
        parts=tuple(sorted(parts, key=lambda p: (p.start, p.end))),
        contexts_in=tuple(c for c in chosen if c not in reasons),
        out={k: _REASONS.get(v, v) for k, v in reasons.items()},
        rungs=rungs,
        errors=tuple(errors),
        where=dict(where or {}),
        max_tokens=max_tokens if isinstance(max_tokens, int) else None,
        settings=dict(settings or {}),
        full_tokens={k: sum(v) for k, v in full.items()},
        available={k: tuple(sorted(v)) for k, v in available.items()},
        tool_tokens=tuple(_planned_count(counted, t) for t in tools),
    )


def _planned_count(counted: Mapping[str, Any], tool: Mapping[str, Any]) -> int | None:
    tokens = counted.get(str(tool.get("name")))
    return tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else None


def _problem(error: Mapping[str, Any] | None) -> Problem | None:
    if not error:
        return None
    kind = error.get("type") or error.get("code")
    message = f"{kind}: {error.get('message')}" if kind else str(error.get("message"))
    return Problem(message, error.get("file"), error.get("line"))


def snapshot_from_example(
    prompt: Mapping[str, Any], example: Mapping[str, Any], load_errors: Iterable[Mapping[str, Any]] = ()
) -> RequestSnapshot:
    """A snapshot of one example of an inspector report (``PromptReport`` and ``ExampleReport``
    dicts of ``inspector.report_types``). ``load_errors`` are the report's load errors that concern
    this prompt (its module's), counted as the example's errors."""
    where: dict[str, tuple[str | None, int | None]] = {
        str(c["id"]): (c.get("file"), c.get("line")) for c in prompt.get("contexts") or ()
    }
    own = (prompt.get("file"), prompt.get("line"))
    where.update({PROMPT: own, MESSAGES: own})
    problems = [p for p in (_problem(e) for e in load_errors) if p is not None]
    for key in ("error", "preview_error"):
        found = _problem(example.get(key))
        if found is not None:
            if found.file is None and key == "preview_error":
                found = Problem(found.message, own[0], own[1])
            problems.append(found)
    inspection = example.get("inspection") or {}
    preview = example.get("preview") or {}
    out: dict[str, str] = {str(x["id"]): str(x["reason"]) for x in inspection.get("excluded_contexts") or ()}
    dropped = list(inspection.get("dropped_contexts") or ()) + list(preview.get("dropped") or ())
    active = [
        str(p["source"]) for p in inspection.get("parts") or () if p.get("kind") == "context" and p.get("status") == "active"
    ]
    contributions = preview.get("contributions") or ()
    if contributions:  # the planner's view when there is one (it knows memory and skills too)
        planned = [part_id(str(c["contributor"])) for c in contributions if c.get("kind") == "context"]
        active = planned + [a for a in active if a not in planned]
    status = example.get("status")
    return snapshot_from_request(
        preview.get("sent"),
        contributions,
        input_tokens=preview.get("input_tokens") if preview else inspection.get("total_tokens"),
        status=str(status) if status is not None else None,
        contexts_in=active,
        out=out,
        dropped=dropped,
        errors=problems,
        where=where,
        settings=settings_of(preview, inspection) if preview else {},
        candidates=preview.get("candidates") or (),
        tool_tokens=preview.get("tool_tokens"),
    )


def settings_of(preview: Mapping[str, Any], inspection: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The ``BUDGET_FIELDS`` a planned request (a ``PreviewDict``) was planned with."""
    sent = preview.get("sent") or {}
    budget = preview.get("token_budget")
    if budget is None and inspection:
        budget = inspection.get("token_budget")
    return {"token_budget": budget, "max": preview.get("max_input_tokens"), "optimize_at": preview.get("optimize_at"),
            "max_tokens": sent.get("max_tokens"), "model": preview.get("model")}


def snapshot_from_step(
    step: Mapping[str, Any],
    *,
    status: str | None = "fits",
    where: Mapping[str, tuple[str | None, int | None]] | None = None,
) -> RequestSnapshot:
    """A snapshot of one recorded step (``Step.to_dict()``: its ``sent`` and its receipt ``request``
    with ``contributions``, ``dropped`` and ``input_tokens``), e.g. to compare a recorded step with
    its replay. A step that stopped on an error carries it as the snapshot's error."""
    receipt = step.get("request") or {}
    error = _problem(step.get("error"))
    return snapshot_from_request(
        step.get("sent"),
        receipt.get("contributions") or (),
        input_tokens=receipt.get("input_tokens"),
        status=status,
        dropped=receipt.get("dropped") or (),
        errors=[error] if error is not None else [],
        where=where,
        settings=settings_of({**receipt, "sent": step.get("sent")}),
        tool_tokens=receipt.get("tool_tokens"),
    )


def _message_text(message: Any) -> str:
    if isinstance(message, Mapping):
        content = message.get("content")
        body = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False, sort_keys=True)
        extra = {k: v for k, v in message.items() if k not in ("role", "content")}
        tail = json.dumps(extra, ensure_ascii=False, sort_keys=True) if extra else ""
        return f"{message.get('role')}: {body}{tail}\n"
    return json.dumps(message, ensure_ascii=False, sort_keys=True) + "\n"


def _tool_text(tool: Mapping[str, Any]) -> str:
    return json.dumps(tool, ensure_ascii=False) + "\n"


def segments(snapshot: RequestSnapshot) -> list[tuple[str, str]]:
    """The request as ``(owner, text)`` pieces in the provider's cache order: tools, system, messages.

    Each piece of system text belongs to the part it precedes or is (separators go to the next
    part); text outside every part belongs to ``"prompt"``."""
    pieces: list[tuple[str, str]] = [(TOOLS, _tool_text(t)) for t in snapshot.tools]
    cursor = 0
    system = snapshot.system
    for part in snapshot.parts:
        if part.start < cursor:
            continue
        pieces.append((part.id, system[cursor : part.end]))
        cursor = part.end
    if cursor < len(system):
        pieces.append((snapshot.parts[-1].id if snapshot.parts else PROMPT, system[cursor:]))
    pieces.extend((MESSAGES, _message_text(m)) for m in snapshot.messages)
    return [(owner, text) for owner, text in pieces if text]


def tokens_before(snapshot: RequestSnapshot, pieces: Sequence[tuple[str, str]], chars: int, counter: Counter | None = None) -> int:
    """Tokens of the first ``chars`` characters of ``snapshot``'s ``segments`` (``pieces``): the tools
    at the planner's count, the rest counted (``core.plan.cache_prefix.prefix_tokens``). ``diff``'s
    ``cache_prefix``, ``expect().cacheable_prefix`` and ``cache`` all count a prefix this way."""
    return prefix_tokens(pieces, chars, (counter or default_counter()).count, snapshot.tool_tokens)


def cache_prefix(base: RequestSnapshot, head: RequestSnapshot, counter: Counter | None = None) -> dict[str, Any] | None:
    """The prompt-cache lens (see the module docstring); None when either side sent nothing. The
    prefix itself is ``core.plan.cache_prefix.shared_prefix``, the one computation ``cache`` uses too."""
    if not (base.sent and head.sent):
        return None
    counter = counter or default_counter()
    base_pieces, head_pieces = segments(base), segments(head)
    head_chars = sum(len(t) for _, t in head_pieces)
    head_total = tokens_before(head, head_pieces, head_chars, counter)
    shared = shared_prefix([base_pieces, head_pieces])
    if shared.equal:
        return {"common_tokens": head_total, "base_tokens": head_total, "head_tokens": head_total, "broken_by": None}
    base_owner, head_owner = shared.owners
    # where one side still offers tools and the other does not, the tools broke it; where one side's
    # system text ends there (a trailing block left or joined), that block did; else head's owner
    broken_by: str | None
    if TOOLS in (head_owner, base_owner):
        broken_by = TOOLS
    elif head_owner in (MESSAGES, None) and base_owner not in (MESSAGES, None):
        broken_by = base_owner
    else:
        broken_by = head_owner or base_owner
    return {
        "common_tokens": tokens_before(head, head_pieces, shared.chars, counter),
        "base_tokens": tokens_before(base, base_pieces, sum(len(t) for _, t in base_pieces), counter),
        "head_tokens": head_total,
        "broken_by": broken_by,
    }


def _percent(base: int, head: int) -> float | None:
    return round((head - base) * 100.0 / base, 1) if base else None


def _context_changes(base: RequestSnapshot, head: RequestSnapshot) -> list[Change]:
    changes: list[Change] = []
    base_in, head_in = set(base.contexts_in), set(head.contexts_in)
    for cid in base.contexts_in:
        if cid not in head_in:
            changes.append({"kind": "context-left", "id": cid, "reason": head.out.get(cid, "removed")})
    for cid in head.contexts_in:
        if cid not in base_in:
            reason = base.out.get(cid) or ("removed" if cid in base.where else "added")
            changes.append({"kind": "context-joined", "id": cid, "reason": reason})
    return changes


def _text_changes(base: RequestSnapshot, head: RequestSnapshot, counter: Counter | None, rung_changed: set[str]) -> list[Change]:
    changes: list[Change] = []
    base_ids = {p.id for p in base.parts}
    seen: set[str] = set()
    for part in head.parts:
        if part.id in seen or part.id not in base_ids or part.id in rung_changed:
            continue
        seen.add(part.id)
        before, after = base.text_of(part.id), head.text_of(part.id)
        if before != after:
            changes.append(_text_change(part.id, before, after, base, head, counter))
    before_messages = "".join(_message_text(m) for m in base.messages)
    after_messages = "".join(_message_text(m) for m in head.messages)
    if base.sent and head.sent and before_messages != after_messages:
        changes.append(_text_change(MESSAGES, before_messages, after_messages, base, head, counter))
    return changes


def _tokens_of(snapshot: RequestSnapshot, pid: str, text: str, counter: Counter | None) -> int:
    counted = [p.tokens for p in snapshot.parts if p.id == pid]
    if counted and all(t is not None for t in counted):
        return sum(t for t in counted if t is not None)
    return (counter or default_counter()).count(text)


def text_diff(before: str, after: str) -> str:
    """A unified diff of ``before`` -> ``after`` (``base``/``head``), two lines of context."""
    lines = difflib.unified_diff(before.splitlines(), after.splitlines(), "base", "head", n=2, lineterm="")
    return "\n".join(lines)


def _text_change(pid: str, before: str, after: str, base: RequestSnapshot, head: RequestSnapshot, counter: Counter | None) -> Change:
    file, line = head.where.get(pid) or base.where.get(pid) or (None, None)
    return {
        "kind": "text", "context": pid,
        "base_tokens": _tokens_of(base, pid, before, counter), "head_tokens": _tokens_of(head, pid, after, counter),
        "file": file, "line": line, "diff": text_diff(before, after),
    }


def _block_ids(snapshot: RequestSnapshot) -> list[str]:
    return list(dict.fromkeys(p.id for p in snapshot.parts))


def _order_changes(base: RequestSnapshot, head: RequestSnapshot) -> list[Change]:
    """An ``order`` change when the blocks both requests hold stand in another order."""
    before, after = _block_ids(base), _block_ids(head)
    shared = set(before) & set(after)
    if [b for b in before if b in shared] == [a for a in after if a in shared]:
        return []
    return [{"kind": "order", "base": before, "head": after}]


def _budget_changes(base: RequestSnapshot, head: RequestSnapshot) -> list[Change]:
    return [
        {"kind": "budget", "field": name, "base": base.settings.get(name), "head": head.settings.get(name), "file": None, "line": None}
        for name in BUDGET_FIELDS
        if (name in base.settings or name in head.settings) and base.settings.get(name) != head.settings.get(name)
    ]


def _rung_cause(contributor: str, base: RequestSnapshot, head: RequestSnapshot, budget: list[Change]) -> str:
    if budget:
        return "budget"
    if base.full_tokens.get(contributor) != head.full_tokens.get(contributor):
        return "text"
    if base.available.get(contributor) != head.available.get(contributor):
        return "prepared"
    return "pressure"


def _rung_changes(base: RequestSnapshot, head: RequestSnapshot, budget: list[Change]) -> list[Change]:
    changes: list[Change] = []
    for contributor, rung in head.rungs.items():
        old = base.rungs.get(contributor)
        if old is None or old == rung:  # an omission is also a context leaving (or joining) for the budget
            continue
        changes.append({"kind": "rung", "contributor": contributor, "base": old, "head": rung,
                        "cause": _rung_cause(contributor, base, head, budget)})
    return changes


def _differing_parts(base: RequestSnapshot, head: RequestSnapshot) -> list[str]:
    """The parts of the literal request that differ (``request`` change parts), in request order."""
    found = []
    if base.system != head.system:
        found.append("system")
    if list(base.messages) != list(head.messages):
        found.append(MESSAGES)
    if list(base.tools) != list(head.tools):
        found.append(TOOLS)
    if base.max_tokens != head.max_tokens:
        found.append("max_tokens")
    return found


def _explained(part: str, base: RequestSnapshot, head: RequestSnapshot, changes: list[Change]) -> bool:
    """Whether ``changes`` account for the difference in ``part`` of the literal request."""
    kinds = {c["kind"] for c in changes}
    if part == MESSAGES:
        return any(c["kind"] == "text" and c["context"] == MESSAGES for c in changes)
    if part == TOOLS:
        if not kinds & {"tool-added", "tool-removed", "tool-changed"}:
            return False
        names = lambda tools: [t.get("name") for t in tools]  # noqa: E731 - the offered names, in order
        shared = set(names(base.tools)) & set(names(head.tools))
        return [n for n in names(base.tools) if n in shared] == [n for n in names(head.tools) if n in shared]
    if part == "max_tokens":
        return any(c["kind"] == "budget" and c["field"] == "max_tokens" for c in changes)
    # the system text: every block whose text differs is named, and so is a move
    named = {c.get("context") for c in changes if c["kind"] == "text"} | {c.get("contributor") for c in changes if c["kind"] == "rung"}
    named |= {c.get("id") for c in changes if c["kind"] in ("context-left", "context-joined")}
    blocks = set(_block_ids(base)) | set(_block_ids(head))
    differing = {b for b in blocks if base.text_of(b) != head.text_of(b)}
    if differing - named:
        return False
    if not differing and "order" not in kinds:
        return False  # the same blocks in the same order: the text between them changed
    return "order" in kinds or not _order_changes(base, head)


def _tool_changes(base: RequestSnapshot, head: RequestSnapshot) -> list[Change]:
    before = {str(t.get("name")): t for t in base.tools}
    after = {str(t.get("name")): t for t in head.tools}
    changes: list[Change] = [{"kind": "tool-removed", "name": n} for n in before if n not in after]
    changes += [{"kind": "tool-added", "name": n} for n in after if n not in before]
    for name, tool in after.items():
        old = before.get(name)
        if old is None:
            continue
        what = [k for k in ("description", "parameters") if old.get(k) != tool.get(k)]
        if what:
            changes.append({"kind": "tool-changed", "name": name, "what": " and ".join(what)})
    return changes


def _error_changes(base: RequestSnapshot, head: RequestSnapshot) -> list[Change]:
    before, after = set(base.errors), set(head.errors)
    gone = [p for p in base.errors if p not in after]
    new = [p for p in head.errors if p not in before]
    return [
        {"kind": "error", "message": p.message, "file": p.file, "line": p.line, "appeared": appeared}
        for appeared, group in ((True, new), (False, gone))
        for p in dict.fromkeys(group)
    ]


def compare(base: RequestSnapshot, head: RequestSnapshot, counter: Counter | None = None) -> tuple[list[Change], dict[str, Any] | None]:
    """Every change from ``base`` to ``head`` (ordered by ``KIND_ORDER``) and the ``cache_prefix``.

    The literal requests are compared first: no difference in them or in the status, no change."""
    differing = _differing_parts(base, head) if base.sent and head.sent else (["system"] if base.sent != head.sent else [])
    if not differing and base.status == head.status:
        return [], cache_prefix(base, head, counter)
    changes: list[Change] = []
    if base.status != head.status:
        changes.append({"kind": "status", "base": base.status, "head": head.status})
    changes += _error_changes(base, head)
    if base.input_tokens != head.input_tokens and base.input_tokens is not None and head.input_tokens is not None:
        delta = head.input_tokens - base.input_tokens
        changes.append({"kind": "tokens", "base": base.input_tokens, "head": head.input_tokens, "delta": delta,
                        "percent": _percent(base.input_tokens, head.input_tokens)})
    budget = _budget_changes(base, head)
    changes += budget
    both_sent = base.sent and head.sent  # a side that sends nothing has no contexts or tools to compare: the status says it
    if both_sent:
        changes += _context_changes(base, head)
        changes += _order_changes(base, head)
        rungs = _rung_changes(base, head, budget)
        changes += rungs
        changes += _text_changes(base, head, counter, {c["contributor"] for c in rungs})
        changes += _tool_changes(base, head)
        changes += [{"kind": "request", "part": part} for part in differing if not _explained(part, base, head, changes)]
    elif differing and base.status == head.status:  # one side sends nothing, and the status does not say so
        changes.append({"kind": "request", "part": "system"})
    changes.sort(key=lambda c: KIND_ORDER.index(c["kind"]))
    return changes, cache_prefix(base, head, counter)


__all__ = [
    "BUDGET_FIELDS", "KIND_ORDER", "MESSAGES", "PROMPT", "TOOLS", "Change", "Counter", "Part", "Problem", "RequestSnapshot",
    "cache_prefix", "compare", "default_counter", "tokens_before", "part_id", "segments", "snapshot_from_example", "snapshot_from_request",
    "snapshot_from_step", "settings_of", "text_diff",
]
