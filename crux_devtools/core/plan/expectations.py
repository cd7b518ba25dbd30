"""Expectations on examples: what a plan must decide, asserted without a model.

``example(input, expect=expect().includes("brand-voice").tokens(max=800))`` is an example with
expectations. Each expectation remembers the ``file:line`` where it was written, so a failure points
at the claim, not at the library. ``evaluate(expect, facts, vocabulary)`` is the one evaluator:
``check``, ``diff``, the inspector and the pytest plugin all read its results.

The evaluator reads ``PlanFacts`` (what one planned example decided, built from its inspection and
plan dicts by ``PlanFacts.from_report``) and a ``Vocabulary`` (the names the prompt has), so a
claim about a context, contributor, rung or tool the prompt does not have is an ``invalid`` result
with a did-you-mean, never a pass.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, get_args

from crux_devtools.shapes import ExpectationResultDict, ExpectationState
from crux_devtools.statuses import STATUS_KEYS

from ..compose.examples import Example
from ..compose.sites import definition_site
from .rungs import RUNGS

STATES: tuple[ExpectationState, ...] = get_args(ExpectationState)
_STATUSES = tuple(k for k in STATUS_KEYS if k != "not-checked")  # an example's states (a prompt's "not-checked" is none)
_DROP_REASONS = ("budget", "parent-dropped", "omitted")


def _ids(method: str, ids: Iterable[Any]) -> tuple[str, ...]:
    out = tuple(ids)
    if not out:
        raise TypeError(f"expect().{method}() needs at least one id")
    for value in out:
        if not isinstance(value, str) or not value:
            raise TypeError(f"expect().{method}(): ids must be non-empty strings, got {value!r}")
    return out


def _count(method: str, name: str, value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise TypeError(f"expect().{method}({name}=...) must be a non-negative int or None, got {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class Expectation:
    """One claim about a plan: ``kind`` and its arguments, ``text`` as it reads in source, and where it was written."""

    kind: str
    args: tuple[Any, ...]
    text: str
    file: str | None
    line: int | None


@dataclass(frozen=True, slots=True)
class Expect:
    """An immutable list of expectations; every method returns a new one with its claim added."""

    items: tuple[Expectation, ...] = ()

    def _add(self, kind: str, args: tuple[Any, ...], text: str) -> Expect:
        site = definition_site()
        file, line = site if site is not None else (None, None)
        return Expect(self.items + (Expectation(kind, args, text, file, line),))

    def includes(self, *ids: str) -> Expect:
        """Each context is in the request."""
        out = self
        for i in _ids("includes", ids):
            out = out._add("includes", (i,), f"includes({i!r})")
        return out

    def excludes(self, *ids: str) -> Expect:
        """Each context is not in the request: excluded (when, match) or dropped, for any reason."""
        out = self
        for i in _ids("excludes", ids):
            out = out._add("excludes", (i,), f"excludes({i!r})")
        return out

    def dropped(self, id: str, reason: str | None = None) -> Expect:
        """The context left the request under pressure (``reason``: budget, parent-dropped or omitted; None: any)."""
        (i,) = _ids("dropped", (id,))
        if reason is not None and reason not in _DROP_REASONS:
            raise ValueError(f"expect().dropped(reason={reason!r}): use one of {', '.join(_DROP_REASONS)} or None")
        text = f"dropped({i!r})" if reason is None else f"dropped({i!r}, reason={reason!r})"
        return self._add("dropped", (i, reason), text)

    def tokens(self, min: int | None = None, max: int | None = None) -> Expect:
        """The request's input tokens are within ``min`` and ``max`` (inclusive)."""
        low, high = _count("tokens", "min", min), _count("tokens", "max", max)
        if low is None and high is None:
            raise TypeError("expect().tokens() needs min=, max= or both")
        if low is not None and high is not None and low > high:
            raise ValueError(f"expect().tokens(min={low}, max={high}): min is greater than max, so nothing can hold")
        shown = ", ".join(f"{k}={v}" for k, v in (("min", low), ("max", high)) if v is not None)
        return self._add("tokens", (low, high), f"tokens({shown})")

    def rung(self, contributor: str, rung: str) -> Expect:
        """The ladder contributor is sent at this rung."""
        (c,) = _ids("rung", (contributor,))
        if rung not in RUNGS:
            raise ValueError(f"expect().rung({c!r}, {rung!r}): unknown rung; use one of {', '.join(RUNGS)}")
        return self._add("rung", (c, rung), f"rung({c!r}, {rung!r})")

    def tool(self, name: str) -> Expect:
        """The tool is offered to the model."""
        (n,) = _ids("tool", (name,))
        return self._add("tool", (n,), f"tool({n!r})")

    def no_tool(self, name: str) -> Expect:
        """The tool is not offered."""
        (n,) = _ids("no_tool", (name,))
        return self._add("no_tool", (n,), f"no_tool({n!r})")

    def cacheable_prefix(self, min: int) -> Expect:
        """At least ``min`` tokens of the request come before its first part that is not static."""
        low = _count("cacheable_prefix", "min", min)
        if low is None:
            raise TypeError("expect().cacheable_prefix(min=N) needs a number of tokens")
        return self._add("cacheable_prefix", (low,), f"cacheable_prefix(min={low})")

    def status(self, s: str) -> Expect:
        """The example's status (``fits``, ``over-limit``, ``over-budget``, ``unmatched``, ``invalid-input``, ``error``)."""
        if s not in _STATUSES:
            raise ValueError(f"expect().status({s!r}): unknown status; use one of {', '.join(_STATUSES)}")
        return self._add("status", (s,), f"status({s!r})")


def expect() -> Expect:
    """Start a list of expectations for an example: ``expect().includes("a").tokens(max=800)``."""
    return Expect()


def example(input: Mapping[str, Any], expect: Expect | None = None) -> Example:
    """An example with expectations; a plain input dict is still an example without any."""
    if not isinstance(input, Mapping):
        raise TypeError(f"example(input) must be an input dict, got {type(input).__name__}")
    if expect is not None and not isinstance(expect, Expect):
        raise TypeError(f"example(expect=...) must be built with expect(), got {type(expect).__name__}")
    return Example(dict(input), expect or Expect())


# -- what the evaluator reads --------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Vocabulary:
    """The names a prompt has: its contexts, its ladders (with the rungs each authorises), its tools."""

    contexts: frozenset[str]
    ladders: Mapping[str, tuple[str, ...]]
    tools: frozenset[str]

    @classmethod
    def of(cls, prompt: Any) -> Vocabulary:
        from .ladders import shape

        contexts: set[str] = set()
        ladders: dict[str, tuple[str, ...]] = {}
        for reach in prompt.contexts():
            contexts.add(reach.context.id)
            if reach.ladder is not None:
                sh = shape(reach.ladder)
                rungs = ["full"]
                if sh.prefer is not None:
                    rungs.append("authored")
                if sh.summary is not None:
                    rungs.append("summary")
                if sh.offload is not None:
                    rungs.append("offload")
                if sh.droppable:
                    rungs.append("omitted")
                ladders.setdefault(sh.id, tuple(rungs))
        tools = set(prompt.all_tools)
        if any("offload" in r for r in ladders.values()):
            tools.add("read_offload")
        return cls(frozenset(contexts), ladders, frozenset(tools))


@dataclass(frozen=True, slots=True)
class PlanFacts:
    """What one example's plan decided, and why (the sentences the evaluator gives as reasons)."""

    status: str
    planned: bool
    unplanned: str | None
    contexts: tuple[str, ...]
    excluded: Mapping[str, str]
    dropped: Mapping[str, str]
    rungs: Mapping[str, str]
    tools: tuple[str, ...]
    input_tokens: int | None
    max_input_tokens: int | None
    cache_prefix_tokens: int | None
    why_out: Mapping[str, str]
    why_not_rung: Mapping[tuple[str, str], str]
    tool_sources: Mapping[str, str]
    largest: tuple[tuple[str, int], ...]

    @classmethod
    def from_report(cls, example: Mapping[str, Any], cache_prefix_tokens: int | None = None) -> PlanFacts:
        """Facts of an ``ExampleReport`` dict (its ``status``, ``inspection``, ``preview``, errors)."""
        inspection = example.get("inspection") or {}
        preview = example.get("preview") or {}
        sent = preview.get("sent") if preview else None
        unplanned = None
        if sent is None:
            error = example.get("error") or example.get("preview_error")
            if error:
                unplanned = f"the example did not plan ({error.get('type') or error.get('code')}: {_one_line(error.get('message', ''))})"
            elif preview:
                unplanned = f"the example did not plan: {preview.get('input_tokens')} input tokens over the limit of {preview.get('max_input_tokens')}"
            else:
                unplanned = "the example did not plan"
        parts = [p for p in inspection.get("parts") or () if p.get("kind") != "prompt" and p.get("source") != "<prompt>"]
        excluded = {str(x["id"]): str(x["reason"]) for x in inspection.get("excluded_contexts") or ()}
        why_out = {str(x["id"]): f"`{x['id']}` excluded ({x['reason']}): {x.get('detail') or x['reason']}" for x in inspection.get("excluded_contexts") or ()}
        dropped: dict[str, str] = {}
        budget = inspection.get("token_budget") if inspection else None
        if budget is None and preview:
            budget = preview.get("token_budget")
        active = [p for p in parts if p.get("status") == "active"]
        for d in list(inspection.get("dropped_contexts") or ()) + list(preview.get("dropped") or ()):
            name = str(d["id"])
            if name in dropped:
                continue
            dropped[name] = str(d.get("reason") or "budget")
            why_out[name] = _drop_sentence(name, d, parts, active, budget)
        candidates = list(preview.get("candidates") or ())
        rungs: dict[str, str] = {}
        why_not_rung: dict[tuple[str, str], str] = {}
        for c in candidates:
            key = (str(c["contributor"]), str(c["representation"]))
            if c.get("selected"):
                rungs[key[0]] = key[1]
            elif c.get("rejection_reason"):
                tokens = c.get("input_tokens")
                limit = preview.get("max_input_tokens")
                figure = f" ({tokens} input tokens; limit {limit}, optimize at {preview.get('optimize_at')})" if tokens is not None else ""
                why_not_rung[key] = f"`{key[0]}` {key[1]} rejected: {c['rejection_reason']}{figure}"
        contexts: list[str] = []
        for c in preview.get("contributions") or ():
            if c.get("kind") == "context" and c.get("representation") != "omitted" and c["contributor"] not in contexts:
                contexts.append(str(c["contributor"]))
        for p in active:
            if p["source"] not in contexts and p["source"] not in dropped:
                contexts.append(str(p["source"]))
        for name, rung in rungs.items():
            if rung == "omitted":
                contexts = [c for c in contexts if c != name]
                dropped.setdefault(name, "omitted")
                rejected = [why for (who, _), why in why_not_rung.items() if who == name]
                why_out.setdefault(name, f"`{name}` omitted by the planner: " + ("; ".join(rejected) or "no higher rung fits"))
        largest = tuple(
            (str(b["contributor"]), int(b["tokens"])) for b in (preview.get("breakdown") or ())[:3]
        )
        return cls(
            status=str(example.get("status")),
            planned=sent is not None,
            unplanned=unplanned,
            contexts=tuple(contexts),
            excluded=excluded,
            dropped=dropped,
            rungs=rungs,
            tools=tuple(preview.get("tools") or ()),
            input_tokens=preview.get("input_tokens") if sent is not None else None,
            max_input_tokens=preview.get("max_input_tokens") if preview else None,
            cache_prefix_tokens=cache_prefix_tokens,
            why_out=why_out,
            why_not_rung=why_not_rung,
            tool_sources=dict(inspection.get("tool_sources") or {}),
            largest=largest,
        )


def _one_line(text: str) -> str:
    return " | ".join(line.strip() for line in str(text).splitlines() if line.strip())


def _drop_sentence(name: str, drop: Mapping[str, Any], parts: list[Mapping[str, Any]], active: list[Mapping[str, Any]], budget: Any) -> str:
    """``"`brand-voice` left: budget 150, priority 30 < `style-examples` 45"``: the drop, the budget,
    and the lowest-priority context that stayed (the one it lost to)."""
    if drop.get("reason") == "parent-dropped":
        owner = next((p.get("owner") for p in parts if p.get("source") == name), None)
        return f"`{name}` left with its owner `{owner}`" + (f" (budget {budget})" if budget is not None else "")
    part = next((p for p in parts if p.get("source") == name), None)
    priority = (part.get("effective_priority") if part else None) or drop.get("priority")
    kept = sorted((p for p in active if p.get("effective_priority") is not None), key=lambda p: p["effective_priority"])
    head = f"`{name}` left: budget {budget}, priority {priority}"
    if kept:
        return f"{head} < `{kept[0]['source']}` {kept[0]['effective_priority']}"
    return f"{head}; no other context stayed"


# -- the evaluator ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ExpectationResult:
    """One expectation evaluated against one plan: ``state``, what held instead, and why."""

    expect: str
    kind: str
    file: str | None
    line: int | None
    state: ExpectationState
    held: str | None
    reason: str | None

    @property
    def ok(self) -> bool:
        return self.state == "held"

    def to_dict(self) -> ExpectationResultDict:
        return {"expect": self.expect, "kind": self.kind, "file": self.file, "line": self.line, "state": self.state, "held": self.held, "reason": self.reason}


def _suggest(name: str, known: Iterable[str], what: str) -> str:
    names = sorted(known)
    close = difflib.get_close_matches(name, names, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    listed = ", ".join(names) if names else "none"
    return f"the prompt has no {what} {name!r}{hint} (it has: {listed})"


def _check_names(item: Expectation, vocabulary: Vocabulary) -> str | None:
    kind, args = item.kind, item.args
    if kind in ("includes", "excludes", "dropped") and args[0] not in vocabulary.contexts:
        return _suggest(args[0], vocabulary.contexts, "context")
    if kind == "rung":
        contributor, rung = args
        if contributor not in vocabulary.ladders:
            if contributor in vocabulary.contexts:
                return f"`{contributor}` is a plain context, always sent in full; only a ladder has rungs (ladders: {', '.join(sorted(vocabulary.ladders)) or 'none'})"
            return _suggest(contributor, vocabulary.ladders, "ladder contributor")
        allowed = vocabulary.ladders[contributor]
        if rung not in allowed:
            return f"the ladder of `{contributor}` has no rung {rung!r} (it has: {', '.join(allowed)})"
    if kind in ("tool", "no_tool") and args[0] not in vocabulary.tools:
        return _suggest(args[0], vocabulary.tools, "tool")
    return None


def _result(item: Expectation, state: ExpectationState, held: str | None = None, reason: str | None = None) -> ExpectationResult:
    return ExpectationResult(item.text, item.kind, item.file, item.line, state, held, reason)


def _where(facts: PlanFacts, name: str) -> str:
    if name in facts.contexts:
        rung = facts.rungs.get(name)
        return f"`{name}` is in the request" + (f" ({rung})" if rung and rung != "full" else "")
    if name in facts.excluded:
        return f"`{name}` excluded ({facts.excluded[name]})"
    if name in facts.dropped:
        return f"`{name}` dropped ({facts.dropped[name]})"
    return f"`{name}` is not in the request"


def _one(item: Expectation, facts: PlanFacts) -> ExpectationResult:
    kind, args = item.kind, item.args
    if kind == "status":
        ok = facts.status == args[0]
        return _result(item, "held" if ok else "failed", None if ok else f"status {facts.status}", None if ok else facts.unplanned)
    if not facts.planned:
        return _result(item, "unplanned", f"status {facts.status}", facts.unplanned)
    if kind == "includes":
        name = args[0]
        if name in facts.contexts:
            return _result(item, "held")
        return _result(item, "failed", _where(facts, name), facts.why_out.get(name))
    if kind == "excludes":
        name = args[0]
        if name not in facts.contexts:
            return _result(item, "held")
        return _result(item, "failed", _where(facts, name), None)
    if kind == "dropped":
        name, reason = args
        actual = facts.dropped.get(name)
        if actual is not None and (reason is None or reason == actual):
            return _result(item, "held")
        return _result(item, "failed", _where(facts, name), facts.why_out.get(name))
    if kind == "tokens":
        low, high = args
        tokens = facts.input_tokens or 0
        if (low is None or tokens >= low) and (high is None or tokens <= high):
            return _result(item, "held")
        largest = ", ".join(f"`{c}` {t}" for c, t in facts.largest)
        return _result(item, "failed", f"{tokens} input tokens", f"largest parts: {largest}" if largest else None)
    if kind == "rung":
        contributor, rung = args
        actual = facts.rungs.get(contributor)
        if actual == rung:
            return _result(item, "held")
        held = f"`{contributor}` sent as {actual}" if actual else _where(facts, contributor)
        return _result(item, "failed", held, facts.why_not_rung.get((contributor, rung)) or facts.why_out.get(contributor))
    if kind in ("tool", "no_tool"):
        name = args[0]
        offered = name in facts.tools
        if offered == (kind == "tool"):
            return _result(item, "held")
        held = f"tools offered: {', '.join(facts.tools) or 'none'}"
        owner = facts.tool_sources.get(name)
        why = facts.why_out.get(owner) if owner else None
        if why is None and owner:
            why = f"its context `{owner}` " + ("is in the request" if offered else "left the request")
        return _result(item, "failed", held, why)
    if kind == "cacheable_prefix":
        prefix = facts.cache_prefix_tokens
        if prefix is not None and prefix >= args[0]:
            return _result(item, "held")
        return _result(item, "failed", f"cacheable prefix {prefix if prefix is not None else 'unknown'} tokens",
                       "the prefix ends at the first part that is not static (a context whose text depends on the input, or the messages)")
    raise ValueError(f"unknown expectation kind {kind!r}")  # pragma: no cover - Expect builds only the kinds above


def evaluate(expect: Expect, facts: PlanFacts, vocabulary: Vocabulary) -> tuple[ExpectationResult, ...]:
    """Every expectation of ``expect`` against one plan, in the order they were written."""
    results = []
    for item in expect.items:
        problem = _check_names(item, vocabulary)
        results.append(_result(item, "invalid", None, problem) if problem else _one(item, facts))
    return tuple(results)


def result_line(result: Mapping[str, Any]) -> str:
    """One result as one line: ``file:line: expect(...) failed: what held; why``."""
    where = f"{result.get('file') or '?'}:{result.get('line') or 0}"
    words = {"failed": "does not hold", "invalid": "is invalid", "unplanned": "cannot be checked", "held": "holds"}
    text = f"{where}: expect().{result['expect']} {words.get(result['state'], result['state'])}"
    if result.get("held"):
        text += f": {result['held']}"
    if result.get("reason"):
        text += f"; {result['reason']}"
    return text
