"""View-model of a run at a glance (``/runs/{id}``, ``templates/_run_glance.html``): a timeline of
its steps and a bar per step of what its input tokens went to, laid out for server-rendered SVG.

The figures are ``inspector/features/runs/glance.py``'s; this module only places them. Sizes stay
bounded whatever the number of steps: the timeline is one strip of at most ``TIMELINE_PIECES``
slots (consecutive steps share one past that), its table groups steps past ``TABLE_ROWS``; the
bars are one short row per step in a box that scrolls.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...inspector.features.runs.glance import OTHER, OVERLAP, RunGlance, StepGlance
from .runs import fmt_ms

TIMELINE_WIDTH = 1000.0  # the strip's viewBox width; the page scales it to the card
BAR_ROW = 20.0  # the height of a step's row in the bars' SVG
BAR_LEFT = 32.0  # room for the step number left of each bar
BAR_WIDTH = 1020.0  # the widest bar; the bars' viewBox is BAR_LEFT + BAR_WIDTH + 8 wide
TABLE_ROWS = 50  # past this many steps the timeline's table groups consecutive steps
LABEL_MIN = 22.0  # a model piece at least this wide carries its step number
BARS_TABLE_MAX = 100  # past this many steps the bars' figures are in their titles only (and in the steps)
TIMELINE_PIECES = 120  # past this many steps, consecutive steps share a slot of the strip


@dataclass(frozen=True, slots=True)
class Piece:
    """One rectangle of the timeline: ``kind`` is ``model``, ``tools`` or ``gap``."""

    kind: str
    x: float
    width: float
    step: int | None  # the step a model piece opens (the first of a group)
    title: str


@dataclass(frozen=True, slots=True)
class TimeRow:
    """A line of the timeline's table: one step, or a group of consecutive steps."""

    steps: str
    start: str
    model: str
    tools: str
    gap: str


@dataclass(frozen=True, slots=True)
class BarPiece:
    css: str
    x: float
    width: float


@dataclass(frozen=True, slots=True)
class StepBar:
    index: int
    anchor: str
    pieces: list[BarPiece]
    total: str  # the recorded input tokens, as the step card writes them
    spent: str  # the segments in words, the bar's text equivalent
    y: float


@dataclass(frozen=True, slots=True)
class LegendEntry:
    label: str
    css: str


@dataclass
class GlanceView:
    pieces: list[Piece]
    labels: list[tuple[float, int]]  # (x, step) of the model pieces wide enough to carry a number
    span: str
    summary: str  # the timeline's text in one sentence (its aria-label)
    time_rows: list[TimeRow]
    grouped: int  # steps per row of the time table (1: one row per step)
    bars: list[StepBar]
    bars_height: float
    legend: list[LegendEntry]
    tokens_summary: str
    timed: bool
    bars_table_max: int = BARS_TABLE_MAX


def _css(kind: str, label: str, colours: dict[str, int]) -> str:
    if kind == "messages":
        return "c-msg"
    if kind == "tools":
        return "c-tools"
    if kind == "other":
        return "c-other"
    return f"c-{colours.get(label, 0)}"


def _timeline(glance: RunGlance) -> tuple[list[Piece], list[tuple[float, int]]]:
    """The strip's rectangles: a step's gap, model and tool time each; past ``TIMELINE_PIECES`` steps,
    consecutive steps share one slot of the strip, split in the same three by their summed times."""
    scale = TIMELINE_WIDTH / glance.span_ms if glance.span_ms > 0 else 0.0
    steps = glance.steps
    size = max(1, -(-len(steps) // TIMELINE_PIECES))
    pieces: list[Piece] = []
    for at in range(0, len(steps), size):
        group = steps[at:at + size]
        first, last = group[0], group[-1]
        gap = sum(s.gap_ms or 0.0 for s in group)
        model = sum(s.model_ms or 0.0 for s in group)
        tools = sum(s.tool_ms or 0.0 for s in group)
        name = f"step {first.index}" if size == 1 else f"steps {first.index}–{last.index}"
        start = (first.start_ms or 0.0) - (first.gap_ms or 0.0)
        end = (last.start_ms or 0.0) + (last.model_ms or 0.0) + (last.tool_ms or 0.0)
        busy = gap + model + tools
        stretch = (end - start) / busy if size > 1 and busy > 0 else 1.0  # a group's slot is its whole span
        x = start * scale
        for kind, ms, what in (("gap", gap, "planning and between calls"), ("model", model, "model"), ("tools", tools, "tools")):
            if ms <= 0 and kind != "model":
                continue
            width = ms * stretch * scale
            pieces.append(Piece(kind, round(x, 1), round(max(width, 0.6), 1), first.index if kind == "model" else None, f"{name}: {what} {fmt_ms(ms)}"))
            x += width
    labels = [(round(p.x + p.width / 2, 1), p.step) for p in pieces if p.kind == "model" and p.step is not None and p.width >= LABEL_MIN and size == 1]
    return pieces, labels


def _time_rows(steps: tuple[StepGlance, ...]) -> tuple[list[TimeRow], int]:
    size = max(1, -(-len(steps) // TABLE_ROWS))
    rows = []
    for at in range(0, len(steps), size):
        group = steps[at:at + size]
        def total(values: list[float | None]) -> str:
            known = [v for v in values if v is not None]
            return fmt_ms(sum(known)) if known else "—"
        name = str(group[0].index) if len(group) == 1 else f"{group[0].index}–{group[-1].index}"
        rows.append(TimeRow(name, fmt_ms(group[0].start_ms), total([s.model_ms for s in group]), total([s.tool_ms for s in group]),
                            total([s.gap_ms for s in group])))
    return rows, size


def _spent_text(s: StepGlance) -> str:
    if s.input_tokens is None and not s.spends:
        return "not planned here"
    return " · ".join(f"{p.label} {p.tokens:,}" for p in s.spends) or "no tokens itemised"


def glance_view(glance: RunGlance, colours: dict[str, int]) -> GlanceView:
    """Place ``glance``'s figures (see the module's docstring)."""
    pieces, labels = _timeline(glance)
    rows, grouped = _time_rows(glance.steps)
    model = sum(s.model_ms or 0.0 for s in glance.steps)
    tools = sum(s.tool_ms or 0.0 for s in glance.steps)
    gaps = sum(s.gap_ms or 0.0 for s in glance.steps)
    n = len(glance.steps)
    summary = (f"{n} step{'s' if n != 1 else ''} over {fmt_ms(glance.span_ms)}: model {fmt_ms(model)}, tools {fmt_ms(tools)}"
               + (f", planning and between calls {fmt_ms(gaps)}" if glance.timed else "; when each step started was not recorded, so the steps are drawn end to end"))
    most = glance.most_tokens
    scale = BAR_WIDTH / most if most > 0 else 0.0
    bars: list[StepBar] = []
    legend: dict[str, LegendEntry] = {}
    for row, s in enumerate(glance.steps):
        x = 0.0
        pieces_ = []
        for p in s.spends:
            css = _css(p.kind, p.label, colours)
            if p.tokens <= 0:
                continue
            legend.setdefault(p.label, LegendEntry(p.label, css))
            width = p.tokens * scale
            pieces_.append(BarPiece(css, round(BAR_LEFT + x, 1), round(width, 1)))
            x += width
        total = f"{s.input_tokens:,}" if s.input_tokens is not None else "not planned here"
        bars.append(StepBar(s.index, f"step-{s.index}", pieces_, total, _spent_text(s), row * BAR_ROW))
    ordered = sorted(legend.values(), key=lambda e: (e.css in ("c-msg", "c-tools", "c-other"), e.label in (OTHER, OVERLAP), e.label))
    known = [s.input_tokens for s in glance.steps if s.input_tokens is not None]
    tokens_summary = (f"input tokens of {n} step{'s' if n != 1 else ''}, largest {most:,}" if known else "no step of this run was planned here")
    return GlanceView(pieces, labels, fmt_ms(glance.span_ms), summary, rows, grouped, bars, len(bars) * BAR_ROW, ordered, tokens_summary,
                      glance.timed)
