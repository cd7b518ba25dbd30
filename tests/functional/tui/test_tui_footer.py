"""The footer at the widths people use: whole entries only, the least important left out first, the
command palette's entry always there; what is predicted to fit is what the layout shows.

The fitting itself is a pure function; the rest is a real Textual app (pilot) over a fake session
holding real inspections.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from textual.binding import Binding
from textual.widget import Widget

sys.path.insert(0, str(Path(__file__).parents[2]))

from test_tui import screen_text, settle  # noqa: E402
from test_tui_runs import seed  # noqa: E402
from tui_fakes import FakeSession  # noqa: E402

from crux_devtools.tui import make_tui  # noqa: E402
from crux_devtools.tui.screens import RunDetailScreen  # noqa: E402
from crux_devtools.tui.screens.replay import ReplayScreen  # noqa: E402
from crux_devtools.tui.widgets.footer import FOCUSED, FooterEntry, KeysFooter, fitting, rank  # noqa: E402

WIDTHS = (80, 100, 120, 160)


def entry(key: str, action: str, description: str, focused: bool = False) -> FooterEntry:
    return FooterEntry(((Binding(key, action, description), True, "", key),), description, focused)


def test_the_most_important_entries_that_fit_are_shown_in_their_own_order() -> None:
    entries = [entry("a", "alpha", "Alpha"), entry("b", "beta", "Beta"), entry("c", "gamma", "Gamma"), entry("q", "quit", "Quit")]
    importance = ("quit", "alpha", "gamma", "beta")
    assert [e.width for e in entries] == [8, 7, 8, 7]  # "a Alpha" and the margin after it
    assert fitting(entries, 30, importance) == entries
    assert fitting(entries, 29, importance) == [entries[0], entries[2], entries[3]]  # Beta, the least important, goes first
    assert fitting(entries, 16, importance) == [entries[0], entries[3]]
    # a less important entry that would fit the room left is not shown while a more important one is out
    assert fitting(entries, 14, importance) == [entries[3]]
    assert fitting(entries, 0, importance) == []


def test_the_focused_widgets_keys_take_the_place_named_for_them() -> None:
    filter_runs = entry("f", "filter_runs", "Filter runs", focused=True)
    reload = entry("^r", "reload", "Reload")
    unnamed = entry("z", "zap", "Zap")
    assert rank(filter_runs, ("quit", FOCUSED, "reload")) == 1
    assert rank(reload, ("quit", FOCUSED, "reload")) == 2
    assert rank(unnamed, ("quit", FOCUSED, "reload")) == 3  # named nowhere: last
    assert fitting([reload, filter_runs], 14, ("quit", FOCUSED, "reload")) == [filter_runs]


def footer_line(app: Any) -> str:
    return screen_text(app).splitlines()[-1]


def outer_width(widget: Widget) -> int:
    return widget.region.width + widget.styles.margin.left + widget.styles.margin.right


def check_footer(app: Any, width: int) -> KeysFooter:
    """Every entry shown is whole, inside the footer and left of the palette's entry, which is there;
    each takes the columns the footer predicted; the ones left out are less important than any shown."""
    footer = app.screen.query_one(KeysFooter)
    assert footer.region.width == width
    entries, shown, palette = footer.plan()
    assert palette is not None
    line = footer_line(app)
    assert line.rstrip().endswith("▏^p palette"), line
    palette_widget = footer.query_one(".-command-palette")
    assert palette_widget.region.right <= width
    children = [child for child in footer.children if child is not palette_widget]
    for child in children:
        assert child.region.width > 0 and child.region.right + child.styles.margin.right <= palette_widget.region.x, (child, line)
    # the widgets, entry by entry: a key, or a group and its label
    widths = [outer_width(child) for child in children]
    expected: list[int] = []
    for item in shown:
        if item.grouped:
            keys_width = 1 + sum(len(display) for *_, display in item.keys) + 1
            expected += [keys_width, item.width - keys_width]
        else:
            expected.append(item.width)
    assert widths == expected, line
    for item in shown:  # each whole, on the line
        binding, *_, display = item.keys[0]
        text = item.label if item.grouped else f"{display} {binding.description}"
        assert text in line, f"{text!r} is cut from the footer: {line!r}"
    hidden = [item for item in entries if item not in shown]
    assert hidden == footer.hidden
    if hidden:
        assert max(rank(i, footer.importance) for i in shown) <= min(rank(i, footer.importance) for i in hidden)
        assert "keys not shown here" in str(palette_widget.tooltip)
    return footer


@pytest.mark.slow  # a whole Textual app
@pytest.mark.parametrize("width", WIDTHS)
async def test_the_footer_shows_whole_entries_only_at_every_width(width: int) -> None:
    app = make_tui(FakeSession())
    async with app.run_test(size=(width, 32)) as pilot:
        await settle(pilot)
        footer = check_footer(app, width)
        line = footer_line(app)
        for label in ("q Quit", "/ Search", "1-7 Tabs", "e Example"):
            assert label in line, f"{label!r} is not in the footer at {width} columns: {line!r}"
        assert bool(footer.hidden) == (width < 160), line  # at 160 columns every key is there


@pytest.mark.slow  # a whole Textual app
async def test_the_footer_fits_again_when_the_terminal_is_resized() -> None:
    app = make_tui(FakeSession())
    async with app.run_test(size=(160, 32)) as pilot:
        await settle(pilot)
        assert "p Summarize" in footer_line(app) and "d Changes" in footer_line(app)
        for width in (100, 80, 91, 120, 160):
            await pilot.resize_terminal(width, 32)
            await settle(pilot)
            check_footer(app, width)
        assert not app.query_one(KeysFooter).hidden


@pytest.mark.slow  # a whole Textual app
@pytest.mark.parametrize("width", (80, 100))
async def test_the_runs_tabs_keys_stay_in_a_narrow_footer(tmp_path: Path, width: int) -> None:
    session = FakeSession(runs_file=tmp_path / ".crux" / "runs.sqlite3")
    seed(session)
    app = make_tui(session)
    async with app.run_test(size=(width, 40)) as pilot:
        await settle(pilot)
        await pilot.press("6")
        await settle(pilot)
        check_footer(app, width)
        line = footer_line(app)
        for label in ("f Filter runs", "x All runs", "q Quit", "1-7 Tabs"):
            assert label in line, f"{label!r} is not in the footer at {width} columns: {line!r}"


@pytest.mark.slow  # a whole Textual app
async def test_a_runs_detail_and_its_replay_keep_whole_entries_at_80_columns(tmp_path: Path) -> None:
    session = FakeSession(runs_file=tmp_path / ".crux" / "runs.sqlite3")
    seed(session)
    app = make_tui(session)
    async with app.run_test(size=(80, 40)) as pilot:
        await settle(pilot)
        await pilot.press("6", "enter")
        await settle(pilot)
        assert isinstance(app.screen, RunDetailScreen)
        check_footer(app, 80)
        assert "esc Back" in footer_line(app) and "n Next step" in footer_line(app)
        await pilot.press("R")
        await settle(pilot)
        assert isinstance(app.screen, ReplayScreen)
        check_footer(app, 80)
        assert "esc Back" in footer_line(app) and "s Send to the model" in footer_line(app)  # its own action stays
