"""View-model of ``/runs``'s charts (``templates/_runs_charts.html``): the input tokens, latency and
cost of the filtered runs, oldest left, each a small server-drawn SVG with its figures in words.

The series is ``inspector/features/runs/series.py``'s (bounded: at most ``MAX_POINTS`` points
however many runs match); this module scales it to the chart's box and writes its text.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from ...core.record.pricing import format_usd
from ...inspector.features.runs.series import Point, RunSeries
from ...review.render import plural
from .runs import fmt_ms

WIDTH, HEIGHT = 300.0, 70.0
PAD = 4.0


@dataclass(frozen=True, slots=True)
class Chart:
    key: str  # tokens, latency, cost
    title: str
    line: str  # the polyline's points ("x,y x,y ..."), empty when nothing is known
    band: str  # the min-max polygon's points (tokens of grouped runs), else empty
    dots: list[tuple[float, float]]  # a dot per point when there are few
    spread: str  # the lowest to the highest value as shown ("from 12 to 40"), or the one value when they read alike
    last: str
    note: str  # how the chart reads (each run, groups, a sample)
    summary: str  # the figures in one sentence: the chart's text equivalent
    known: int  # points with a value


@dataclass(frozen=True, slots=True)
class RunCharts:
    charts: list[Chart]
    runs: int
    first: str
    last: str


def _when(epoch: float) -> str:
    """A chart's edge in local time; a time the platform cannot show (year 0, far future) as ``?``."""
    try:
        return datetime.fromtimestamp(epoch).strftime("%Y-%m-%d %H:%M")
    except (ValueError, OverflowError, OSError):
        return "?"


def _chart(key: str, title: str, series: RunSeries, value: Callable[[Point], float | None], fmt: Callable[[float], str]) -> Chart:
    points = series.points
    values = [value(p) for p in points]
    band_points: list[tuple[float, float]] = []
    highs = [float(p.tokens_high) for p in points if p.tokens_high is not None] if key == "tokens" and series.bucketed else []
    known = [v for v in values if v is not None]
    top = max([*known, *highs], default=0.0)
    bottom = 0.0
    span = top - bottom or 1.0
    step = (WIDTH - 2 * PAD) / max(len(points) - 1, 1)

    def at(i: int, v: float) -> tuple[float, float]:
        return round(PAD + i * step if len(points) > 1 else WIDTH / 2, 1), round(HEIGHT - PAD - (v - bottom) / span * (HEIGHT - 2 * PAD), 1)

    xy = [at(i, v) for i, v in enumerate(values) if v is not None]
    if highs:
        ups = [at(i, float(p.tokens_high)) for i, p in enumerate(points) if p.tokens_high is not None]
        downs = [at(i, float(p.tokens_low)) for i, p in enumerate(points) if p.tokens_low is not None]
        band_points = ups + downs[::-1]
    note = series.note(key)
    low, high = (fmt(min(known)), fmt(max(known))) if known else ("—", "—")
    spread = low if low == high else f"from {low} to {high}"
    if known:
        summary = f"{title} of {plural(series.runs, 'run')}, oldest first: {spread}, the newest {fmt(known[-1])} ({note})"
    else:
        summary = f"{title}: not known for this run" if series.runs == 1 else f"{title}: not known for these runs ({note})"
    return Chart(
        key=key, title=title, line=" ".join(f"{x},{y}" for x, y in xy), band=" ".join(f"{x},{y}" for x, y in band_points),
        dots=xy if len(xy) <= 40 else [], spread=spread,
        last=fmt(known[-1]) if known else "—", note=note, summary=summary, known=len(known),
    )


def run_charts(series: RunSeries) -> RunCharts | None:
    """The three charts, or None when no run matched."""
    if not series.points:
        return None
    charts = [
        _chart("tokens", "input tokens", series, lambda p: p.tokens, lambda v: f"{v:,.0f}"),
        _chart("latency", "duration", series, lambda p: p.duration_ms, fmt_ms),
        _chart("cost", "cost", series, lambda p: p.cost_usd, format_usd),
    ]
    return RunCharts(charts, series.runs, _when(series.points[0].first), _when(series.points[-1].last))
