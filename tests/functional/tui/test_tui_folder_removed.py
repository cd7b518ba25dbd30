"""The project folder removed while the TUI runs (a temporary checkout cleaned up, a branch switch
that removes it for a moment): the TUI says so once, waits, and loads the project again when the
folder is back. A real ``ProjectSession`` (worker processes, the file watcher) under a Textual pilot.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from waits import pilot_until

from crux_devtools.inspector.session.service import ProjectSession, SessionEvent
from crux_devtools.tui.app import make_tui
from crux_devtools.inspector.transport.inprocess import in_process

PROMPT = "from crux_devtools import prompt\n\nhello = prompt('hello', system={text!r}, examples={{'one': {{}}}})\n"


def write_project(root: Path, text: str) -> None:
    root.mkdir()
    (root / "prompts.py").write_text(PROMPT.format(text=text), encoding="utf-8")
    # A file no module reads: its removal is a change to verify, which a missing folder cannot be.
    (root / "notes.txt").write_text("notes\n", encoding="utf-8")


def system(session: ProjectSession) -> str | None:
    report = session.report
    if report is None or report["errors"] or not report["prompts"]:
        return None
    inspection = report["prompts"][0]["examples"][0]["inspection"]
    return inspection["system"] if inspection is not None else None


async def test_a_removed_project_folder_is_said_once_and_loaded_again_when_it_is_back(tmp_path: Path) -> None:
    root = tmp_path / "checkout"
    write_project(root, "Before.")
    session = ProjectSession(root, transport=in_process, history=False, verify_after=0.05)
    errors: list[SessionEvent] = []
    app = make_tui(session)
    async with app.run_test(size=(120, 35)) as pilot:
        await pilot_until(pilot, lambda: system(session) == "Before." and app.screen.query("PromptTree"), "the project is shown")
        session.subscribe(lambda event: errors.append(event) if event.kind == "error" else None)
        shutil.rmtree(root)
        await pilot_until(pilot, lambda: errors, "the TUI is told the folder is gone")
        evaluations = session.evaluations
        await pilot_until(pilot, lambda: session.missing_checks >= 4, "the session has looked for the folder four times")
        assert [e.summary for e in errors] == [errors[0].summary] and "waiting for it to come back" in errors[0].summary, errors
        assert session.evaluations == evaluations  # no load was tried meanwhile
        assert [n.title for n in app._notifications].count("Load failed") == 1
        write_project(root, "After.")
        await pilot_until(pilot, lambda: system(session) == "After.", "the new folder is loaded")
        assert len(errors) == 1
        await pilot_until(pilot, lambda: "Project updated" in [n.title for n in app._notifications], "the TUI says it is loaded")
