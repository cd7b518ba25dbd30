"""View-model of a step's Replay panel on ``/runs/{id}``: the recorded request beside up to three variants.

Each variant is a set of overrides (budget, model profile, forced rungs, contexts left out) and what
it is planned from (the step's recording, or today's source), which the worker replays
(``inspector/features/replay/source.replay_variant``, as the CLI's ``replay`` does); the panel lays out each
replay document as one column: tokens, status, rungs, what was left out, the cache prefix, the changes against the recorded
request, the replayed system text with the changed parts marked, and after a send the answer, usage
and latency. Variants travel in the query string (``v``), so the panel holds no server state.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode

from ...core.record.replay_overrides import Overrides, form_name, wire_fields
from ...inspector.features.replay.source import SOURCES, Replayed
from ...inspector.features.shown.sent import system_parts
from ...review.render import describe, prefix_line

MAX_VARIANTS = 3


@dataclass(frozen=True, slots=True)
class Variant:
    """One replay the panel shows: its overrides (without a profile: the worker finds it by name) and
    what it is planned from: ``recorded`` (the step's recording) or ``current`` (today's source)."""

    overrides: Overrides
    source: str = "recorded"

    @property
    def query(self) -> str:
        """The variant as a query string (one ``v`` value of the panel)."""
        return "&".join(q for q in (overrides_query(self.overrides), "source=current" if self.source == "current" else "") if q)

    @property
    def label(self) -> str:
        """Its column title: a replay from today's source says so before its overrides."""
        if self.source != "current":
            return overrides_label(self.overrides)
        return "today's source" + (f", {overrides_label(self.overrides)}" if not self.overrides.empty else "")


def overrides_query(o: Overrides) -> str:
    """The overrides as a query string (one ``v`` value of the panel): each value under its form name,
    a pair as ``C=R``."""
    return urlencode([(form_name(f), "=".join(str(a) for a in args)) for f, args in o.shown()])


def overrides_label(o: Overrides) -> str:
    """A variant's column title: its overrides in words (each value in its field's ``label``)."""
    return ", ".join(f.metadata["label"].format(*args) for f, args in o.shown()) or "as recorded"


def _number(f: dataclasses.Field[Any], found: dict[str, Any], key: str, inner: str | None, value: str) -> str | None:
    if inner is not None:
        return None
    least = f.metadata.get("min", 0)
    if not value.isdigit() or int(value) < least:
        return f"{key.replace('_', ' ')} must be {f.metadata['words']}{f', at least {least}' if 'min' in f.metadata else ''}; got {value!r}"
    found[f.name] = int(value)
    return None


def _text(f: dataclasses.Field[Any], found: dict[str, Any], key: str, inner: str | None, value: str) -> str | None:
    if inner is None:
        found[f.name] = value
    return None


def _pair(f: dataclasses.Field[Any], found: dict[str, Any], key: str, inner: str | None, value: str) -> str | None:
    pairs = found.setdefault(f.name, {})
    if inner is not None:
        pairs[inner] = value
    elif "=" in value:
        first, _sep, second = value.partition("=")
        pairs[first.strip()] = second.strip()
    return None


def _name(f: dataclasses.Field[Any], found: dict[str, Any], key: str, inner: str | None, value: str) -> str | None:
    names = found.setdefault(f.name, [])
    if inner is None and value not in names:
        names.append(value)
    return None


# How a form field of each kind of override is read (``replay_overrides._KINDS``): ``NAME`` with the
# value, or for a pair also ``NAME:FIRST`` with the second; the reader puts the value in ``found`` or
# returns the problem in words. A pair's or a list's values are collected, and made a tuple at the end.
_READERS: dict[str, Any] = {"int | None": _number, "str | None": _text, "tuple[tuple[str, str], ...]": _pair, "tuple[str, ...]": _name}


def parse_overrides(pairs: Iterable[tuple[str, str]]) -> tuple[Overrides, list[str]]:
    """Overrides from form fields, each named by its override's form name (``max``, ``optimize_at``,
    ``model``, ``rung`` as ``C=R`` or ``rung:C`` = ``R``, ``drop``); blank fields and unknown names
    are ignored. Returns the problems found, in words."""
    fields = {form_name(f): f for f in wire_fields()}
    problems: list[str] = []
    found: dict[str, Any] = {}
    for key, raw in pairs:
        value = raw.strip()
        name, sep, inner = key.partition(":")
        f = fields.get(name)
        if not value or f is None:
            continue
        problem = _READERS[str(f.type)](f, found, key, inner if sep else None, value)
        if problem:
            problems.append(problem)
    values: dict[str, Any] = {name: tuple(v.items()) if isinstance(v, dict) else tuple(v) if isinstance(v, list) else v for name, v in found.items()}
    return Overrides(**values), problems


def parse_variant(pairs: Iterable[tuple[str, str]]) -> tuple[Variant, list[str]]:
    """A variant from form fields: the overrides (``parse_overrides``) and ``source`` (``recorded``,
    the default, or ``current``). Returns the problems found, in words."""
    pairs = list(pairs)
    overrides, problems = parse_overrides(pairs)
    source = next((v.strip() for k, v in reversed(pairs) if k == "source" and v.strip()), "recorded")
    if source not in SOURCES:
        problems.append(f"plan from must be one of {', '.join(SOURCES)}; got {source!r}")
        source = "recorded"
    return Variant(overrides, source), problems


def variant_list(previous: Iterable[str], new: Variant | None) -> list[Variant]:
    """The variants shown: the previous ones (query strings) then the new one, the newest three."""
    out = [parse_variant(parse_qsl(q, keep_blank_values=False))[0] for q in previous]
    if new is not None:
        out.append(new)
    seen: dict[str, Variant] = {}
    for v in out:
        seen.pop(v.query, None)
        seen[v.query] = v
    return list(seen.values())[-MAX_VARIANTS:]


@dataclass(frozen=True, slots=True)
class PartView:
    contributor: str
    rung: str
    tokens: int | None
    text: str
    changed: bool


@dataclass(slots=True)
class VariantColumn:
    """One replayed variant: what the page shows in its column."""

    variant: Variant
    error: str | None = None
    no_plan_inputs: bool = False  # the step cannot be planned from its recording: the column offers today's source
    identical: bool = False
    status: str = ""
    input_tokens: int | None = None
    delta: int | None = None
    max_input_tokens: int | None = None
    optimize_at: int | None = None
    rungs: list[tuple[str, str, bool]] = field(default_factory=list)  # contributor, rung, differs from recorded
    left_out: list[str] = field(default_factory=list)
    cache_line: str = ""
    changes: list[tuple[str, str]] = field(default_factory=list)  # kind, sentence
    parts: list[PartView] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    error_code: str | None = None
    diagnostics: list[dict[str, Any]] = field(default_factory=list)  # the planner's, as the prompt page shows them
    warnings: list[str] = field(default_factory=list)
    sent: dict[str, Any] | None = None  # after a send: the child run's answer, usage, latency
    estimate: str = ""  # what a send is estimated to cost ("unpriced: ..." without a known price)

    @property
    def query(self) -> str:
        return self.variant.query

    @property
    def label(self) -> str:
        return self.variant.label

    @property
    def from_source(self) -> str:
        """The same overrides planned from today's source (the query of that variant)."""
        return Variant(self.variant.overrides, "current").query


@dataclass(frozen=True, slots=True)
class RecordedColumn:
    input_tokens: int | None
    rungs: list[tuple[str, str]]
    tools: list[str]


@dataclass(slots=True)
class ReplayPanel:
    run: str
    step: int
    recorded: RecordedColumn
    variants: list[VariantColumn]
    problems: list[str]
    example: str
    href: str
    command: str = ""  # the command line that plans this step from today's source
    model: str | None = None  # the model a send would call now (the worker's answer), priced in each column's estimate
    confirm: str = ""  # that model's token: a send goes to it only, a model changed meanwhile is asked about again

    def offer_query(self, column: VariantColumn) -> str:
        """The panel's query that replaces ``column`` with the same overrides planned from today's source."""
        kept = [("v", v.query) for v in self.variants if v is not column]
        return urlencode([*kept, *parse_qsl(column.from_source), ("add", "1")])


def _rungs_of(contributions: Iterable[Mapping[str, Any]]) -> list[tuple[str, str]]:
    return [(str(c.get("contributor")), str(c.get("representation"))) for c in contributions if c.get("kind") == "ladder"]


def recorded_column(step: Mapping[str, Any]) -> RecordedColumn:
    request = step.get("request") or {}
    sent = step.get("sent") or {}
    return RecordedColumn(request.get("input_tokens"), _rungs_of(request.get("contributions") or []), [str(t.get("name")) for t in sent.get("tools") or []])


def variant_column(variant: Variant, replayed_: Replayed, recorded: RecordedColumn) -> VariantColumn:
    """A replay document (or why there is none) laid out as one column."""
    column = VariantColumn(variant, error=replayed_.error, no_plan_inputs=replayed_.no_plan_inputs)
    document = replayed_.document
    if document is None:
        return column
    replayed = document["replayed"]
    column.identical = bool(document["identical"])
    column.status = replayed["status"]
    column.input_tokens = replayed["input_tokens"]
    if recorded.input_tokens is not None and replayed["input_tokens"] is not None:
        column.delta = replayed["input_tokens"] - recorded.input_tokens
    column.max_input_tokens, column.optimize_at = replayed["max_input_tokens"], replayed["optimize_at"]
    before = dict(recorded.rungs)
    column.rungs = [(c, r, before.get(c) != r) for c, r in _rungs_of(replayed["contributions"])]
    column.left_out = list(replayed.get("left_out") or [])
    prefix = document.get("cache_prefix")
    column.cache_line = prefix_line(prefix) or ("the whole request is cacheable (unchanged)" if prefix else "nothing sent")
    column.changes = [(str(c["kind"]), describe(c)) for c in document["changes"]]
    changed = {str(c.get("context") or c.get("contributor") or c.get("id")) for c in document["changes"]}
    if replayed["sent"] is not None:
        for part in system_parts({"sent": replayed["sent"], "contributions": replayed["contributions"]}):
            column.parts.append(PartView(part.contributor, part.representation, part.tokens, part.text or "", part.contributor in changed or part.text is None))
        column.tools = [str(t.get("name")) for t in replayed["sent"]["tools"]]
    column.error_code = replayed.get("error_code")
    column.diagnostics = [d for d in replayed.get("diagnostics") or [] if isinstance(d, dict)]
    column.warnings = list(replayed.get("warnings") or [])
    return column


def as_example(run: Mapping[str, Any]) -> str:
    """The run's input as an ``examples=`` entry to paste into the prompt's definition."""
    data = run.get("input")
    name = f"run-{str(run.get('id', ''))[-8:]}"
    return f"examples={{{json.dumps(name)}: {json.dumps(data, ensure_ascii=False, indent=4)}}}"


__all__ = ["MAX_VARIANTS", "ReplayPanel", "Variant", "VariantColumn", "overrides_label", "overrides_query", "as_example", "parse_overrides",
           "parse_variant", "recorded_column", "variant_column", "variant_list"]
