"""The TUI at 80x24 over the real session and the sample project (a Textual pilot, no fakes): the
tab bar keeps the Errors tab, with its count, in sight when there are load errors, and the status
line keeps the budget set with ``-`` in sight (both were cut off the right edge of the prompt pane)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

from waits import pilot_until

from crux_devtools.inspector.session.service import ProjectSession
from crux_devtools.inspector.transport.inprocess import in_process
from crux_devtools.tui.app import make_tui

REPO = Path(__file__).resolve().parents[3]


def screen_text(app: Any) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def test_at_80_by_24_the_errors_tab_and_the_budget_set_stay_on_screen(tmp_path: Path) -> None:
    project = tmp_path / "sample_project"
    shutil.copytree(REPO / "sample_project", project, ignore=shutil.ignore_patterns("__pycache__", ".crux*", "data"))
    (project / "zz_broken.py").write_text("import crux_devtools\n\ndef broken(:\n    pass\n", encoding="utf-8")
    session = ProjectSession(project, transport=in_process)
    app = make_tui(session)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot_until(pilot, lambda: session.report is not None and app.prompt_id is not None and app.busy is None, "a prompt is shown")
        assert session.report is not None and len(session.report["errors"]) == 1
        await pilot_until(pilot, lambda: re.search(r"▎ .*\bErr 1\s*$", screen_text(app), re.M), "the Errors tab with its count is on the bar")
        await pilot.press("minus")
        await pilot_until(pilot, lambda: app.busy is None and app.detail.choices[app.prompt_id].budget is not None, "the budget is lowered")
        budget = app.detail.choices[app.prompt_id].budget
        await pilot_until(pilot, lambda: f"budget {budget:,} (set)" in screen_text(app), "the budget set is in the status line")
        assert re.search(r"\bErr 1\s*$", screen_text(app), re.M)


async def test_at_80_by_24_the_run_details_facts_are_whole_never_wrapped_mid_word(tmp_path: Path) -> None:
    from tui_fakes import FakeSession, recorded_run

    from crux_devtools import tool_call
    from crux_devtools.tui.screens import RunDetailScreen

    session = FakeSession(runs_file=tmp_path / ".crux" / "runs.sqlite3")
    support = session.prompts["support-reply"]
    run = recorded_run(support, {"message": "hi"}, [[tool_call("lookup_order", {"order_id": "A-1"})], "Refund soon"], run_id="run-with-a-long-id-0042")
    run["usage"] = {"input_tokens": 123_456, "output_tokens": 7_890}
    app = make_tui(session)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.open_run(run)
        await pilot_until(pilot, lambda: isinstance(app.screen, RunDetailScreen) and "provider usage" in screen_text(app), "the run detail is shown")
        text = screen_text(app)
        for fact in ("run run-with-a-long-id-0042", "origin app", "model scripted", "input tokens (ours)", "provider usage in/out 123,456/7,890"):
            assert fact in text, f"{fact!r} is not whole on one line:\n{text}"
