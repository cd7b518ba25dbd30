"""Runs over time: the tokens, latency and cost of the runs a filter matches, oldest first, as the
``/runs`` page charts them.

One query (``RunStore.buckets``) cuts the matching runs into at most ``MAX_POINTS`` buckets of
consecutive runs; with fewer runs than that, each run is its own bucket and every figure is the
run's. Past that, the input tokens are each bucket's mean with its min and max (every run
counted), and latency and cost are those of one run of each bucket (a sample): ``note`` says which,
so a chart never passes a sample off as a total.
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

    @property
    def per_point(self) -> int:
        """Runs per bucket (the largest bucket): 1 when every run is drawn."""
        return max((p.runs for p in self.points), default=1)

    @property
    def bucketed(self) -> bool:
        return self.per_point > 1

    def note(self, metric: str) -> str:
        """How the chart of ``metric`` (``tokens``, ``latency`` or ``cost``) reads, in words."""
        if not self.bucketed:
            return f"each of the {self.runs:,} runs, oldest left"
        groups = f"{len(self.points)} groups of about {self.per_point:,} consecutive runs"
        if metric == "tokens":
            return f"{self.runs:,} runs in {groups}: the line is each group's mean, the band its min to max"
        return f"{self.runs:,} runs in {groups}: one run of each group is drawn (a sample)"


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def run_series(store: RunStore, prices: Prices, *, target: str | None = None, status: str | None = None, origin: str | None = None,
               text: str | None = None, max_points: int = MAX_POINTS) -> RunSeries:
    """The series of the runs matching the filters (those of ``RunStore.list``)."""
    rows = store.buckets(max_points, target=target, status=status, origin=origin, text=text)
    points = tuple(
        Point(
            runs=int(r["runs"]), first=float(r["first"]), last=float(r["last"]), tokens=_number(r["mean_input_tokens"]),
            tokens_low=r["min_input_tokens"], tokens_high=r["max_input_tokens"], duration_ms=_number(r["duration_ms"]),
            cost_usd=prices.run_cost({"usage": r["usage"], "model": r["model"]}) if r["usage"] else None,
        )
        for r in rows
    )
    return RunSeries(points, sum(p.runs for p in points))
