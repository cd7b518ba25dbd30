"""Runs over time: the tokens, latency and cost of the runs a filter matches, oldest first, as the
``/runs`` page charts them.

Up to ``MAX_POINTS`` matching runs, every run is a point. Past that, the points are a sample whose
cost does not grow with the store: one run at each of ``MAX_POINTS`` evenly spaced instants
(``RunStore.sampled``, an index seek an instant). A text search, whose matches are read anyway, is
cut into ``MAX_POINTS`` groups of consecutive runs instead (``RunStore.buckets``): the input tokens
are each group's mean with its min and max, latency and cost those of one run of each group. With
``at_most``, a text search reads only that many of its matches, those recorded last (``partial``
when more match). ``note`` says which, so a chart never passes a sample or a part off as a total.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ....core.record.runstore import RunStore
from .costs import Prices

MAX_POINTS = 200


@dataclass(frozen=True, slots=True)
class Point:
    """One bucket of runs: ``runs`` how many, ``first``/``last`` their start times (epoch seconds)."""

    runs: int
    first: float
    last: float
    tokens: float | None  # mean input tokens of the bucket
    tokens_low: int | None
    tokens_high: int | None
    duration_ms: float | None  # of the bucket's sampled run
    cost_usd: float | None  # of the bucket's sampled run (None: unpriced or no usage)


@dataclass(frozen=True, slots=True)
class RunSeries:
    points: tuple[Point, ...]
    runs: int  # how many runs matched
    sampled: bool = False  # one run at each of evenly spaced instants (else every run, or groups)
    partial: bool = False  # ``runs`` are those recorded last of more that match (a text search's ``at_most``)

    @property
    def per_point(self) -> int:
        """Runs per bucket (the largest bucket): 1 when every run is drawn."""
        return max((p.runs for p in self.points), default=1)

    @property
    def bucketed(self) -> bool:
        return self.per_point > 1 and not self.sampled

    def note(self, metric: str) -> str:
        """How the chart of ``metric`` (``tokens``, ``latency`` or ``cost``) reads, in words."""
        if self.sampled:
            return f"a sample of {len(self.points)} of the {self.runs:,} runs: the first at or after each of evenly spaced times"
        runs = f"the last {self.runs:,} recorded of more runs that match" if self.partial else f"{self.runs:,} runs"
        if not self.bucketed:
            if self.partial:
                return f"each of {runs}, oldest left"
            return "the one run" if self.runs == 1 else f"each of the {self.runs:,} runs, oldest left"
        groups = f"{len(self.points)} groups of about {self.per_point:,} consecutive runs"
        if metric == "tokens":
            return f"{runs} in {groups}: the line is each group's mean, the band its min to max"
        return f"{runs} in {groups}: one run of each group is drawn (a sample)"


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def run_series(store: RunStore, prices: Prices, *, target: str | None = None, status: str | None = None, origin: str | None = None,
               text: str | None = None, max_points: int = MAX_POINTS, at_most: int | None = None, matched: int | None = None) -> RunSeries:
    """The series of the runs matching the filters (those of ``RunStore.list``); a text search's of at
    most ``at_most`` of its matches, those recorded last. ``matched``: how many runs match, when the
    caller has counted them (for a text search, counting may stop once past ``at_most``)."""
    searching = bool(text and text.strip())
    scope = at_most if searching else None
    total = matched if matched is not None else store.count(
        target=target, status=status, origin=origin, text=text, at_most=None if scope is None else scope + 1
    )
    sample = total > max_points and not searching
    if sample:
        rows = store.sampled(max_points, target=target, status=status, origin=origin)
    else:
        rows = store.buckets(max_points, target=target, status=status, origin=origin, text=text, at_most=scope)
    points = tuple(
        Point(
            runs=int(r["runs"]), first=float(r["first"]), last=float(r["last"]), tokens=_number(r["mean_input_tokens"]),
            tokens_low=r["min_input_tokens"], tokens_high=r["max_input_tokens"], duration_ms=_number(r["duration_ms"]),
            cost_usd=prices.run_cost({"usage": r["usage"], "model": r["model"]}) if r["usage"] else None,
        )
        for r in rows
    )
    return RunSeries(points, total if sample else sum(p.runs for p in points), sample, partial=scope is not None and total > scope)
