"""A recorded run at a glance: where its time went (a timeline of model time, tool time and the gaps
between) and what each step's input tokens were spent on (each context, the messages, the tools).

Both are read from what the run recorded, never re-counted: a step's segments are its receipt's
``contributions`` (the figures the run page lists as text), grouped by who they belong to; when
they do not add up to the receipt's ``input_tokens``, the difference is a segment of its own
(``OTHER``), so the bar always sums to the recorded total. The web run page draws these as SVG, the
TUI's run detail as one line per step; both read the same values from here.

A run is the JSON the store holds, maybe written by an older version: a missing figure is ``None``
and shows as unknown, never as 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..shown.colours import assign_colours
from ..shown.sent import MESSAGE_KINDS, TOOLS_KIND

MESSAGES = "messages"  # the user prompt and the conversation, one segment
TOOLS = "tools"  # the tool schemas, one segment
OTHER = "not itemised"  # recorded input tokens no contribution accounts for
OVERLAP = "parts over the total"  # the parts, each counted alone, add up to more than the request (a negative segment)


@dataclass(frozen=True, slots=True)
class Spend:
    """One segment of a step's input tokens: ``kind`` is ``context``, ``messages``, ``tools`` or ``other``."""

    label: str
    kind: str
    tokens: int


@dataclass(frozen=True, slots=True)
class StepGlance:
    """One step's bar and its place on the timeline (milliseconds after the run started)."""

    index: int
    input_tokens: int | None  # the receipt's count; None: the step was not planned here
    spends: tuple[Spend, ...]
    start_ms: float | None  # when its model call began; None when not recorded (laid out end to end)
    model_ms: float | None
    tool_ms: float | None
    gap_ms: float | None  # the time before its model call since the previous step ended (planning, waiting)
    error: bool

    @property
    def itemised(self) -> int:
        return sum(s.tokens for s in self.spends if s.kind != "other")


@dataclass(frozen=True, slots=True)
class RunGlance:
    steps: tuple[StepGlance, ...]
    duration_ms: float | None  # the run's recorded wall time
    timed: bool  # every step recorded when it started (else the timeline is laid out end to end)

    @property
    def span_ms(self) -> float:
        """The timeline's length: the run's duration, or the end of its last step if that is later."""
        end = 0.0
        for s in self.steps:
            end = max(end, (s.start_ms or 0.0) + (s.model_ms or 0.0) + (s.tool_ms or 0.0))
        return max(end, self.duration_ms or 0.0)

    @property
    def most_tokens(self) -> int:
        return max((max(s.input_tokens or 0, sum(p.tokens for p in s.spends)) for s in self.steps), default=0)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _ms(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 else None


def step_spends(receipt: Mapping[str, Any]) -> tuple[Spend, ...]:
    """A receipt's input tokens by who spent them, in the request's order (a contributor once), with
    the difference to the recorded ``input_tokens`` as an ``OTHER`` segment when there is one."""
    totals: dict[tuple[str, str], int] = {}
    for c in receipt.get("contributions") or []:
        if not isinstance(c, Mapping):
            continue
        kind = str(c.get("kind", ""))
        key = (MESSAGES, "messages") if kind in MESSAGE_KINDS else (TOOLS, "tools") if kind == TOOLS_KIND else (str(c.get("contributor", "?")), "context")
        totals[key] = totals.get(key, 0) + (_int(c.get("tokens")) or 0)
    spends = [Spend(label, kind, tokens) for (label, kind), tokens in totals.items() if tokens > 0]
    recorded = _int(receipt.get("input_tokens"))
    if recorded is not None:
        rest = recorded - sum(s.tokens for s in spends)
        if rest != 0:
            spends.append(Spend(OTHER if rest > 0 else OVERLAP, "other", rest))
    return tuple(spends)


def run_glance(run: Mapping[str, Any]) -> RunGlance:
    """The run's steps as bars and a timeline (see the module's docstring)."""
    raw = [s for s in run.get("steps") or [] if isinstance(s, Mapping)]
    timed = bool(raw) and all(_ms(s.get("started_ms")) is not None for s in raw)
    steps: list[StepGlance] = []
    cursor = 0.0  # where the previous step ended
    for position, step in enumerate(raw):
        receipt = _mapping(step.get("request"))
        model_ms, tool_ms = _ms(step.get("latency_ms")), _ms(step.get("tool_ms"))
        start = _ms(step.get("started_ms")) if timed else cursor
        gap = max(0.0, start - cursor) if timed and start is not None else None
        index = _int(step.get("index"))
        steps.append(StepGlance(
            index=position if index is None else index,
            input_tokens=_int(receipt.get("input_tokens")),
            spends=step_spends(receipt),
            start_ms=start,
            model_ms=model_ms,
            tool_ms=tool_ms,
            gap_ms=gap,
            error=isinstance(step.get("error"), Mapping),
        ))
        cursor = (start or 0.0) + (model_ms or 0.0) + (tool_ms or 0.0)
    return RunGlance(tuple(steps), _ms(run.get("duration_ms")), timed)


def run_colours(steps: Iterable[Mapping[str, Any]], names: Iterable[str] = ()) -> dict[str, int]:
    """One colour slot per contributor of a run, by name (``shown/colours.py``): every context its
    steps planned, sent, dropped or had candidates for, and ``names`` (the target prompt's contexts,
    so a context has the colour the prompt's own views give it)."""
    seen: list[str] = list(names)
    for step in steps:
        receipt = _mapping(step.get("request"))
        seen += [str(c.get("contributor")) for c in receipt.get("contributions") or []
                 if isinstance(c, Mapping) and c.get("kind") not in (*MESSAGE_KINDS, TOOLS_KIND)]
        seen += [str(c.get("contributor")) for c in receipt.get("candidates") or [] if isinstance(c, Mapping)]
        seen += [str(d.get("id")) for d in receipt.get("dropped") or [] if isinstance(d, Mapping)]
    return assign_colours(seen)
