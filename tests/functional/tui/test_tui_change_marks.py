"""The tree's "changed" marks: a Textual pilot over a real ProjectSession of a git project built here
(in-process workers; the base revision is evaluated in real worker processes; real git), and the same
screen outside a git work tree.

An edit to a prompt's text marks that prompt (``Δ`` after its id, a count in the header); undoing the
edit takes the mark away. The marks come from the review the Diff screen shows.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parents[2]))

from diff_helpers import make_project  # noqa: E402
from test_tui import settle  # noqa: E402
from tui_fakes import FakeSession  # noqa: E402
from waits import pilot_until  # noqa: E402

from crux_devtools.inspector.session.service import ProjectSession  # noqa: E402
from crux_devtools.tui.app import make_tui  # noqa: E402
from crux_devtools.tui.change_marks import ChangeMarks, ChangeMarksComputed  # noqa: E402
from crux_devtools.tui.screens.diff import live_diff  # noqa: E402
from crux_devtools.tui.widgets import PromptTree  # noqa: E402
from crux_devtools.inspector.transport.inprocess import in_process  # noqa: E402

pytestmark = pytest.mark.slow  # a whole Textual app; the base revision is evaluated in real worker processes

SIZE = (120, 36)


def screen_lines(app: Any) -> list[str]:
    return [strip.text for strip in app.screen._compositor.render_strips()]


def marked(app: Any) -> set[str]:
    """The prompt ids shown with the mark, read off the screen (the tree is the left pane)."""
    ids = set()
    for line in screen_lines(app)[1:-1]:
        left = line.split("▎", 1)[0]
        words = left.replace("▼", " ").replace("▶", " ").split()
        if "Δ" in words and words.index("Δ") >= 2:
            ids.add(words[words.index("Δ") - 1])
    return ids


def started(app: Any) -> bool:
    """The session's ``start`` returned: it watches the project's files (a save is seen)."""
    return not any(worker.group == "session" for worker in app.workers)


def answered(app: Any, session: ProjectSession) -> bool:
    """The marks on screen are the answer for the session's latest report."""
    return app.change_marks is not None and app._report_compared is session.report and app._marks_shown == app._marks_asked


async def test_an_edit_marks_the_prompts_it_changes_and_undoing_it_removes_the_marks(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    session = ProjectSession(root, transport=in_process, history=False)
    app = make_tui(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot_until(pilot, lambda: started(app) and answered(app, session), "the first marks are worked out")
        assert app.change_marks.changed == frozenset() and app.change_marks.note is None
        assert marked(app) == set() and "differ from HEAD" not in screen_lines(app)[0]
        tree = app.query_one(PromptTree)
        assert "differ from HEAD" in str(tree.tooltip)

        other = root / "other.py"
        original = other.read_text()
        other.write_text(original.replace("Sort the ticket.", "Sort the ticket by urgency."))
        await pilot_until(pilot, lambda: marked(app) == {"triage"}, "triage is marked")
        assert app.change_marks.changed == frozenset({"triage"})
        assert "Δ 1 prompt differs from HEAD" in screen_lines(app)[0]
        # the same review as the Diff screen's: its changed prompts are the ones marked
        from crux_devtools.review.view import review_view

        assert review_view(await live_diff(session).document("HEAD")).changed_ids == ["triage"]

        other.write_text(original)
        await pilot_until(pilot, lambda: answered(app, session) and not app.change_marks.changed, "the edit is undone")
        await pilot.pause()
        assert marked(app) == set() and "differ from HEAD" not in screen_lines(app)[0]
        assert live_diff(session).base_evaluations == 1  # HEAD was evaluated once, for every report
        assert not [n for n in app._notifications if n.severity == "error"]


async def test_outside_a_git_work_tree_there_are_no_marks_and_one_quiet_note(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    shutil.rmtree(root / ".git")
    session = ProjectSession(root, transport=in_process, history=False)
    app = make_tui(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot_until(pilot, lambda: started(app) and answered(app, session), "the marks are worked out")
        (root / "other.py").write_text((root / "other.py").read_text().replace("Sort the ticket.", "Sort it."))
        await pilot_until(pilot, lambda: session.report is not None and "Sort it." in str(session.report) and answered(app, session), "the edit is loaded")
        marks = app.change_marks
        assert marks.changed == frozenset() and marks.note is not None and "not inside a git work tree" in marks.note
        assert marked(app) == set()
        assert str(app.query_one(PromptTree).tooltip).startswith("No change marks: ")
        assert not any("git" in n.message for n in app._notifications)  # said in the tooltip only


async def test_an_older_reports_answer_never_replaces_a_newer_ones() -> None:
    app = make_tui(FakeSession())
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        ids = [p["id"] for p in app.session.report["prompts"]]
        newer, older = ChangeMarks("HEAD", frozenset(ids[:1])), ChangeMarks("HEAD", frozenset(ids[1:2]))
        base = app._marks_asked
        app.post_message(ChangeMarksComputed(base + 2, newer))  # answered first, asked last
        app.post_message(ChangeMarksComputed(base + 1, older))
        await settle(pilot)
        assert app.change_marks == newer and marked(app) == {ids[0]}
        assert "Δ 1 prompt differs from HEAD" in screen_lines(app)[0]


async def test_the_reason_for_no_marks_is_shown_literally() -> None:
    from textual.visual import visualize

    app = make_tui(FakeSession())
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        note = "fatal: not a git repository: '/srv/[bold]x[/bold]' [oops"
        app.post_message(ChangeMarksComputed(app._marks_asked + 1, ChangeMarks("HEAD", frozenset(), note)))
        await settle(pilot)
        tree = app.query_one(PromptTree)
        assert visualize(tree, tree.tooltip).plain == f"No change marks: {note}"


async def test_a_commit_moves_the_base_and_the_marks_follow_it(tmp_path: Path) -> None:
    from diff_helpers import commit_all

    root = make_project(tmp_path)
    session = ProjectSession(root, transport=in_process, history=False)
    app = make_tui(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot_until(pilot, lambda: started(app) and answered(app, session), "the first marks are worked out")
        other = root / "other.py"
        other.write_text(other.read_text().replace("Sort the ticket.", "Sort the ticket by urgency."))
        await pilot_until(pilot, lambda: marked(app) == {"triage"}, "triage is marked")
        first = app.change_marks.sha
        commit_all(root, "the edit, committed")  # HEAD moves; no file of the working tree changes
        await pilot_until(pilot, lambda: app.change_marks.sha != first and marked(app) == set(), "the marks follow the commit")
        assert app.change_marks.changed == frozenset() and "differ from HEAD" not in screen_lines(app)[0]
        assert live_diff(session).base_evaluations == 2  # each commit HEAD named, once
