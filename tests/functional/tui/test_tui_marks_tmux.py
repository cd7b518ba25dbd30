"""The real ``crux-devtools tui`` in tmux at 80 columns over a git project: the footer's entries are
whole, and an edit marks the prompt it changes until it is undone."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from diff_helpers import make_project
from test_tui_tmux import Terminal, tui_in_tmux

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None or shutil.which("git") is None, reason="needs tmux and git"),
]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path)


@pytest.fixture
def terminal(project: Path) -> Iterator[Terminal]:
    yield from tui_in_tmux("crux-marks-test", project, 80, 30)


def tree_line(screen: str, prompt_id: str) -> str:
    return next((line.split("▎", 1)[0] for line in screen.splitlines() if f" {prompt_id} " in line.split("▎", 1)[0]), "")


def test_at_80_columns_the_footer_is_whole_and_an_edit_is_marked_until_undone(terminal: Terminal, project: Path) -> None:
    screen = terminal.wait_for(lambda s: "triage" in s and "Req" in s and "^p palette" in s)
    footer = screen.rstrip("\n").splitlines()[-1]
    assert footer.rstrip().endswith("▏^p palette"), footer
    for label in ("q Quit", "/ Search", "1-7 Tabs", "e Example"):
        assert label in footer, footer

    other = project / "other.py"
    original = other.read_text()
    other.write_text(original.replace("Sort the ticket.", "Sort the ticket by urgency."))
    terminal.keys("C-r")  # reload now (the file watcher may not be up yet)
    screen = terminal.wait_for(lambda s: "Δ" in tree_line(s, "triage"))
    assert "Δ 1 prompt differs from HEAD" in screen.splitlines()[0]
    assert "Δ" not in tree_line(screen, "notes") and "Δ" not in tree_line(screen, "reply")

    other.write_text(original)
    terminal.keys("C-r")
    terminal.wait_for(lambda s: bool(tree_line(s, "triage")) and "Δ" not in s)
    terminal.keys("q")
    terminal.wait_for(lambda s: "triage" not in s)
