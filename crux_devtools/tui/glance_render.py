"""A run at a glance in the terminal: one line per step, a bar of what its input tokens went to (each
context in its colour, ``inspector/features/shown/colours.py``; messages, tools, and what the receipt
does not itemise), its recorded total, and its model and tool time. The figures are
``inspector/features/runs/glance.py``'s, the same the web run page draws.

At most ``WINDOW`` steps are drawn, those around the step on screen, so a run of hundreds of steps
keeps its detail in sight; the lines say which steps they are.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.columns import Columns
from rich.console import Group, RenderableType
from rich.text import Text

from ..inspector.features.runs.glance import RunGlance, Spend, StepGlance, run_colours, run_glance
from ..inspector.features.shown.colours import MESSAGES_COLOUR, OTHER_COLOUR, TOOLS_COLOUR, swatch
from ..inspector.features.shown.visible import visible
from .runs_render import fmt_duration

BAR_CELLS = 20  # the widest step's bar; with its figures it fits beside the step list at 80 columns
WINDOW = 12


def spend_style(spend: Spend, colours: dict[str, int]) -> str:
    """The Rich colour of a segment: its context's colour, or the messages', tools' or the rest's."""
    if spend.kind == "messages":
        return MESSAGES_COLOUR.hex
    if spend.kind == "tools":
        return TOOLS_COLOUR.hex
    if spend.kind == "other":
        return OTHER_COLOUR.hex
    return swatch(colours.get(spend.label, 0)).hex


def _cells(spends: Iterable[Spend], scale: float) -> list[tuple[Spend, int]]:
    """Each segment's width in cells: cut at the rounded running total (so the bar is as long as its
    total), a segment that rounds to nothing given one cell taken from the widest."""
    out: list[tuple[Spend, int]] = []
    running, edge = 0, 0
    for s in spends:
        if s.tokens <= 0:
            continue
        running += s.tokens
        end = round(running * scale)
        out.append((s, end - edge))
        edge = end
    for n, (spend, width) in enumerate(out):
        if width == 0:
            widest = max(range(len(out)), key=lambda k: out[k][1])
            if out[widest][1] > 1:
                out[widest] = (out[widest][0], out[widest][1] - 1)
                out[n] = (spend, 1)
    return [(spend, width) for spend, width in out if width > 0]


def step_line(step: StepGlance, most: int, colours: dict[str, int], current: bool) -> Text:
    """``▸  2 ██████████ 1,204  0.8 s, tools 12 ms`` (the model's time, then the tools'): one line,
    cut (never wrapped) when narrow."""
    line = Text("▸" if current else " ", style="bold" if current else "", no_wrap=True, overflow="ellipsis")
    line.append(f"{step.index:>3} ", "bold" if current else "dim")
    scale = BAR_CELLS / most if most > 0 else 0.0
    used = 0
    for spend, width in _cells(step.spends, scale):
        line.append("█" * width, spend_style(spend, colours))
        used += width
    line.append(" " * max(0, BAR_CELLS - used) + " ")
    if step.input_tokens is None:
        line.append("not planned here", "dim italic")
    else:
        line.append(f"{step.input_tokens:>7,}", "bold" if current else "")
    times = [f"model {fmt_duration(step.model_ms)}" if not step.tool_ms else fmt_duration(step.model_ms)] if step.model_ms is not None else []
    if step.tool_ms:
        times.append(f"tools {fmt_duration(step.tool_ms)}")
    if step.error:
        times.append("failed")
    if times:
        line.append("  " + ", ".join(times), "red" if step.error else "dim")
    return line


def legend(glance: RunGlance, colours: dict[str, int]) -> Columns:
    """``■ catalog  ■ house-rules  ■ messages  ■ tools``: what the colours of the bars are (an entry
    is never split over two lines)."""
    seen: dict[str, Spend] = {}
    for s in glance.steps:
        for spend in s.spends:
            if spend.tokens > 0:
                seen.setdefault(spend.label, spend)
    order = sorted(seen.values(), key=lambda s: (s.kind != "context", s.kind == "other", s.label))
    return Columns([Text.assemble(("■ ", spend_style(s, colours)), (visible(s.label), "dim")) for s in order], padding=(0, 2))


def render_glance(run: dict[str, Any], current: int | None, names: Iterable[str] = ()) -> RenderableType:
    """The run's steps, a line each (a window of ``WINDOW`` around ``current`` past that many)."""
    steps = [s for s in run.get("steps") or [] if isinstance(s, dict)]
    glance = run_glance(run)
    if not glance.steps:
        return Text("")
    colours = run_colours(steps, names)
    most = glance.most_tokens
    at = current if current is not None else 0
    first = max(0, min(at - WINDOW // 2, len(glance.steps) - WINDOW))
    shown = glance.steps[first:first + WINDOW]
    head = Text("input tokens per step", style="bold")
    if len(glance.steps) > WINDOW:
        head.append(f"  steps {shown[0].index}–{shown[-1].index} of {len(glance.steps)} (n/p move)", "dim")
    lines: list[RenderableType] = [head]
    lines += [step_line(s, most, colours, first + n == current) for n, s in enumerate(shown)]
    lines.append(legend(glance, colours))
    return Group(*lines)
