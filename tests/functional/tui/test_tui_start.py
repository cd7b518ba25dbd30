"""The TUI's start: the first report is drawn once, not again when the session's start returns."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parents[2]))

from tui_fakes import FakeSession  # noqa: E402

from crux_devtools.tui import make_tui  # noqa: E402
from crux_devtools.tui.widgets import PromptTree  # noqa: E402


async def test_the_report_on_screen_is_not_drawn_again_when_the_session_has_started(monkeypatch: pytest.MonkeyPatch) -> None:
    """The session's start returns after its first report was published (and drawn): redrawing the
    same report then cost a second full frame while the spare worker was being primed."""
    session = FakeSession()
    drawn: list[Any] = []
    original = PromptTree.show_report

    def show_report(self: PromptTree, report: Any, *args: Any, **kwargs: Any) -> None:
        drawn.append(report)
        original(self, report, *args, **kwargs)

    monkeypatch.setattr(PromptTree, "show_report", show_report)
    app = make_tui(session)
    async with app.run_test(size=(110, 34)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()  # ``start_session``: it posts "the session started"
        await pilot.pause()
        assert ("start", None) in session.calls
        assert drawn == [session.report]
        assert "support-reply" in str(app.query_one(PromptTree).root.children[0].label)
