"""The TUI over the real ProjectSession and the real sample project (a Textual pilot, no fakes).

With CRUX_UPDATE_SCREENSHOT=1 it also refreshes the README's screenshot, docs/screenshot-tui.svg, and
the text capture docs/tui-screen.txt: ladder-reply's busy-day request as sent, with the log's summary.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from waits import pilot_until
from rich.console import Console

from crux_devtools.inspector.session.service import ProjectSession
from crux_devtools.tui.app import make_tui
from crux_devtools.tui.widgets import PromptTree, StatusLine
from crux_devtools.tui.widgets.prompt_tree import NodeRef
from crux_devtools.tui.widgets.system_text import render_system

REPO = Path(__file__).resolve().parents[3]


def screen_text(app: Any) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def test_the_tui_over_the_real_session_shows_every_sample_prompt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "sample_project"
    shutil.copytree(REPO / "sample_project", project, ignore=shutil.ignore_patterns("__pycache__", ".crux*", "data"))
    session = ProjectSession(project)
    app = make_tui(session)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot_until(pilot, lambda: session.report is not None and app.screen.query("PromptTree"), "the first report is shown")
        assert session.report is not None, "the real session never produced a report"
        ids = [p["id"] for p in session.report["prompts"]]
        assert {"support-reply", "responder", "budgeted-reply", "ladder-reply", "support-agent", "support-with-memory"} <= set(ids)
        await pilot_until(pilot, lambda: all(prompt_id in app.export_screenshot() for prompt_id in ids), "every prompt is drawn")
        # "o" on a context defined at module level names its own line, not the prompt's.
        monkeypatch.delenv("EDITOR", raising=False)
        await pilot.press("down")  # the first prompt's first context: house-rules, from shared.py
        await pilot.press("o")
        shared = (project / "shared.py").read_text().splitlines()
        line = next(i for i, text in enumerate(shared, 1) if text.startswith("house_rules = context("))
        await pilot_until(pilot, lambda: [n.message for n in app._notifications][-1:] == [f"shared.py:{line}"], "o names the line")
        # A prompt with ladders: "-" lowers the request's input budget and the real planner re-plans.
        app.query_one(PromptTree).select_prompt("ladder-reply")
        await pilot_until(pilot, lambda: app.prompt_id == "ladder-reply" and app.busy is None, "ladder-reply is shown")
        for _ in range(12):
            await pilot.press("minus")
            await pilot_until(pilot, lambda: app.busy is None, "the plan is shown")
        budget = app.detail.choices["ladder-reply"].budget
        shown = app.shown or {}
        assert shown["preview"]["max_input_tokens"] == budget
        assert shown["preview"]["adaptations"], "twelve steps down, the planner adapted nothing"
        status = app.query_one(StatusLine).data or {}
        assert (status["budget"], status["target"]) == (budget, "request")
        console = Console(width=140, record=True, color_system=None)
        console.print(render_system(shown, None))
        assert f"of max {budget:,} tokens" in console.export_text()
        # The request as sent, at the default limit: busy-day sends the log's extractive summary, which
        # generate prepares before sending (so the inspector did); the cursor on sync-log scrolls the
        # Request tab to it (the README's screenshot).
        await pilot.press("0")
        await pilot.press("e")
        tree = app.query_one(PromptTree)
        tree.move_cursor(next(n for n in tree._shown_nodes if n.data == NodeRef("ladder-reply", "sync-log")))
        await pilot_until(pilot, lambda: app.busy is None and "sync-log · ladder · summary" in screen_text(app), "the summary generate prepares is shown")
        text = screen_text(app)
        assert app.detail.choices["ladder-reply"].example == "busy-day"
        assert re.search(r"sync-log · ladder · summary · 2,064 tok", text) and "[summary of sync-log]" in text
        if os.environ.get("CRUX_UPDATE_SCREENSHOT") == "1":
            app.sub_title = "sample_project"  # not this test's temporary folder
            await pilot.pause(0.1)
            (REPO / "docs" / "screenshot-tui.svg").write_text(app.export_screenshot())
            (REPO / "docs" / "tui-screen.txt").write_text("\n".join(line.rstrip() for line in screen_text(app).splitlines()) + "\n")
        await pilot.press("q")
    await session.stop()
