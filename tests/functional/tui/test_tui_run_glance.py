"""The TUI run detail's glance: a line per step, its bar coloured by context name, readable at 80 columns."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from rich.console import Console

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from test_tui import screen_text, settle  # noqa: E402
from test_tui_runs import open_runs_tab, seed  # noqa: E402
from tui_fakes import FakeSession  # noqa: E402

from crux_devtools.inspector.features.runs.glance import run_glance  # noqa: E402
from crux_devtools.inspector.features.shown.colours import assign_colours, swatch  # noqa: E402
from crux_devtools.tui import make_tui  # noqa: E402
from crux_devtools.tui.glance_render import BAR_CELLS, render_glance  # noqa: E402
from crux_devtools.tui.screens import RunDetailScreen  # noqa: E402


def styled(renderable: Any, width: int) -> list[tuple[str, str]]:
    """(text, colour) of every segment the renderable prints."""
    console = Console(width=width, color_system="truecolor", record=True)
    segments = list(console.render(renderable, console.options.update(width=width)))
    return [(s.text, s.style.color.triplet.hex if s.style and s.style.color and s.style.color.triplet else "") for s in segments]


async def test_the_run_detail_shows_a_line_per_step_with_its_recorded_tokens_at_80_columns(tmp_path: Path) -> None:
    session = FakeSession(runs_file=tmp_path / ".crux" / "runs.sqlite3")
    runs = seed(session)
    app = make_tui(session)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_runs_tab(pilot)
        await pilot.press("down", "down", "enter")  # the answered run: a tool-call step, then the answer
        await settle(pilot)
        assert isinstance(app.screen, RunDetailScreen)
        text = screen_text(app)
        steps = runs["answered"]["steps"]
        assert "input tokens per step" in text
        for step in steps:
            assert f"{step['request']['input_tokens']:>7,}" in text
        lines = [line for line in text.splitlines() if "█" in line]
        assert len(lines) == len(steps) and all(len(line) <= 80 for line in lines)
        assert "▸  0 " in lines[0]  # the step on screen is marked
        await pilot.press("n")
        await settle(pilot)
        app.screen.query_one("#run-body").scroll_home(animate=False)  # "n" scrolled to the step's outcome
        await settle(pilot)
        assert "▸  1 " in [line for line in screen_text(app).splitlines() if "█" in line][1]


def test_each_context_keeps_its_colour_in_the_tui_when_the_use_is_reordered(tmp_path: Path) -> None:
    session = FakeSession(runs_file=tmp_path / ".crux" / "runs.sqlite3")
    run = seed(session)["answered"]
    names = [c["contributor"] for c in run["steps"][0]["request"]["contributions"] if c["kind"] == "context"]
    assert len(names) >= 2
    colours = assign_colours(names)
    # the bar of one step: each context's cells in its own colour, whatever order the prompt lists them in
    for order in (names, list(reversed(names))):
        painted = styled(render_glance(run, 0, order), 80)
        for name in names:
            assert ("■ ", swatch(colours[name]).hex) in painted
    glance = run_glance(run)
    assert max(len(s.spends) for s in glance.steps) <= BAR_CELLS


def test_five_hundred_steps_draw_a_window_around_the_step_on_screen(tmp_path: Path) -> None:
    session = FakeSession(runs_file=tmp_path / ".crux" / "runs.sqlite3")
    run = seed(session)["answered"]
    step = run["steps"][0]
    long = {**run, "steps": [{**step, "index": n} for n in range(500)]}
    console = Console(width=80, record=True, color_system=None)
    console.print(render_glance(long, 250))
    text = console.export_text()
    assert "steps 244–255 of 500 (n/p move)" in text
    assert len([line for line in text.splitlines() if "█" in line]) == 12
    assert "▸250 " in text
