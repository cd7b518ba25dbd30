"""The Runs tab at the widths people use: Enter opens a run, the footer and every tab stay in sight.

A real Textual app (pilot) over a fake session whose runs are real ``generate`` runs in a real
``RunStore``; sizes are a wide terminal (160 columns) and a narrow one (100 columns).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typing import Any

from textual.widgets import TabbedContent, Tabs

sys.path.insert(0, str(Path(__file__).parents[2]))

from test_tui import screen_text, settle  # noqa: E402
from test_tui_runs import seed  # noqa: E402
from tui_fakes import FakeSession  # noqa: E402

from crux_devtools.tui import make_tui  # noqa: E402
from crux_devtools.tui.screens import RunDetailScreen  # noqa: E402
from crux_devtools.tui.widgets import PromptTree  # noqa: E402
from crux_devtools.tui.widgets.runs import RunsTable  # noqa: E402

WIDE, NARROW = (160, 45), (100, 40)


@pytest.fixture
def session(tmp_path: Path) -> FakeSession:
    return FakeSession(runs_file=tmp_path / ".crux" / "runs.sqlite3")


def footer_line(app: Any) -> str:
    return screen_text(app).splitlines()[-1]


def tab_line(app: Any) -> str:
    """The tab bar's row, right of the tree."""
    row = app.query_one(Tabs).region.y
    return screen_text(app).splitlines()[row].split("▎", 1)[1]


@pytest.mark.parametrize("size", [WIDE, NARROW], ids=["160", "100"])
async def test_the_runs_tab_key_then_enter_opens_the_highlighted_run_and_leaves_the_tree_as_it_was(session: FakeSession, size: tuple[int, int]) -> None:
    seed(session)
    app = make_tui(session)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        tree = app.query_one(PromptTree)
        expanded = [node.is_expanded for node in tree.root.children]
        await pilot.press("6")
        await settle(pilot)
        assert app.query_one(TabbedContent).active == "tab-runs"
        assert isinstance(app.focused, RunsTable), "the Runs tab's keys go to its table"
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, RunDetailScreen), "Enter should open the highlighted run"
        assert app.screen.run["id"] == "run-agent"  # the newest
        assert [node.is_expanded for node in tree.root.children] == expanded
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.focused, RunsTable), "back from the detail, the list keeps the keys"
        await pilot.press("down", "enter")
        await settle(pilot)
        assert isinstance(app.screen, RunDetailScreen) and app.screen.run["id"] == "run-failed"
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("1")  # back to a prompt tab: the keys go to the tree again
        await settle(pilot)
        assert isinstance(app.focused, PromptTree)


@pytest.mark.parametrize("size", [WIDE, NARROW], ids=["160", "100"])
async def test_every_tab_is_in_sight_with_its_count(session: FakeSession, size: tuple[int, int]) -> None:
    seed(session)
    app = make_tui(session)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        for key in ("6", "7", "1"):  # whichever tab is active, the others stay in sight
            await pilot.press(key)
            await settle(pilot)
            line = tab_line(app)
            for title in ("Request", "Tools", "Runs (3)", "Errors"):
                assert title in line, f"{title!r} is not in sight at {size[0]} columns: {line!r}"


FOOTERS = [
    # at 160 columns the footer of the prompt tabs holds every key it offers (the Runs keys are the Runs tab's)
    (WIDE, "1", ("Search", "Tabs", "Example", "Budget", "Run agent", "Open source", "Reload", "Changes", "Quit", "Summarize", "palette")),
    # at 100 columns the Runs tab's footer keeps the Runs keys (the prompt view's keys are off there)
    (NARROW, "6", ("Tabs", "Filter runs", "All runs", "Run agent", "Quit")),
]


@pytest.mark.parametrize(("size", "tab_key", "shown"), FOOTERS, ids=["160-prompt-tabs", "100-runs-tab"])
async def test_the_footer_shows_every_key_it_offers(session: FakeSession, size: tuple[int, int], tab_key: str, shown: tuple[str, ...]) -> None:
    seed(session)
    app = make_tui(session)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press(tab_key)
        await settle(pilot)
        footer = footer_line(app)
        for label in shown:
            assert label in footer, f"{label!r} is cut from the footer: {footer!r}"


async def test_the_runs_keys_belong_to_the_runs_tab_and_are_in_the_footer_only_there(session: FakeSession) -> None:
    """``f`` / ``x`` are the Runs panel's keys: the prompt tabs' footer has room for their own."""
    seed(session)
    app = make_tui(session)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        footer = footer_line(app)
        assert "Filter runs" not in footer and "All runs" not in footer
        await pilot.press("f")  # from the tree: not this view's key
        await settle(pilot)
        assert app.query_one(TabbedContent).active == "tab-request"
        await pilot.press("6")
        await settle(pilot)
        footer = footer_line(app)
        assert "Filter runs" in footer and "All runs" in footer
