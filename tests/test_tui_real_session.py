"""The TUI over the real ProjectSession and the real sample project (a Textual pilot, no fakes).

With CRUX_UPDATE_SCREENSHOT=1 it also refreshes the README's screenshot, docs/screenshot-tui.svg.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from crux_devtools.inspector.session import ProjectSession
from crux_devtools.tui.app import make_tui

REPO = Path(__file__).resolve().parent.parent


async def test_the_tui_over_the_real_session_shows_every_sample_prompt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "sample_project"
    shutil.copytree(REPO / "sample_project", project, ignore=shutil.ignore_patterns("__pycache__", ".crux*", "data"))
    session = ProjectSession(project)
    app = make_tui(session)
    async with app.run_test(size=(140, 40)) as pilot:
        for _ in range(400):
            await pilot.pause(0.05)
            if session.report is not None and app.screen.query("PromptTree"):
                break
        assert session.report is not None, "the real session never produced a report"
        ids = [p["id"] for p in session.report["prompts"]]
        assert {"support-reply", "responder", "budgeted-reply", "ladder-reply", "support-agent", "support-with-memory"} <= set(ids)
        await pilot.pause(0.3)
        svg = app.export_screenshot()
        for prompt_id in ids:
            assert prompt_id in svg
        if os.environ.get("CRUX_UPDATE_SCREENSHOT") == "1":
            (REPO / "docs" / "screenshot-tui.svg").write_text(svg)
        # "o" on a context defined at module level names its own line, not the prompt's.
        monkeypatch.delenv("EDITOR", raising=False)
        await pilot.press("down")  # the first prompt's first context: house-rules, from shared.py
        await pilot.press("o")
        await pilot.pause(0.2)
        shared = (project / "shared.py").read_text().splitlines()
        line = next(i for i, text in enumerate(shared, 1) if text.startswith("house_rules = context("))
        assert [n.message for n in app._notifications][-1] == f"shared.py:{line}"
        await pilot.press("q")
    await session.stop()
