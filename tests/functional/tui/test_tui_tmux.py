"""The real ``crux-devtools tui`` in a real terminal (tmux): first screen, a live edit, a broken file, quit."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from waits import WAIT, until

REPO = Path(__file__).resolve().parents[3]
ANSI = re.compile(r"\x1b\[[0-9;]*m")
CURSOR_BACKGROUND = "48;5;32m"  # the tree cursor's background, as tmux writes its colour
BUDGET = re.compile(r"input budget (\S+)")  # the status line's budget in force: a figure or "none"
COMMAND = Path(sys.executable).parent / "crux-devtools"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux"),
]


class Terminal:
    """One tmux server of our own (its own socket), one window running the command."""

    def __init__(self, socket: str) -> None:
        self.socket = socket

    def tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=False).stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "t")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "t", "--", *keys)

    def cursor(self) -> tuple[int, str]:
        """The prompt tree's highlighted row: its line on the screen and its text. The tree's cursor
        is the one row of the left pane drawn on the highlight's background."""
        rows = []
        for number, line in enumerate(self.tmux("capture-pane", "-p", "-e", "-t", "t").splitlines()):
            tree = line.split("▎", 1)[0]  # the tree pane ends at the pane border
            if CURSOR_BACKGROUND in tree:
                rows.append((number, ANSI.sub("", tree).strip()))
        assert len(rows) == 1, f"expected one highlighted tree row, found {rows}"
        return rows[0]

    def down_to(self, wanted: Callable[[str], bool]) -> None:
        """Move the tree's cursor down, one row per key, until ``wanted`` holds for its row's text.
        Each key is awaited by the cursor moving (not by the screen holding still): on a loaded
        machine the panes on the right are drawn later than the highlight."""
        for _ in range(60):
            row = self.cursor()
            if wanted(row[1]):
                return
            self.keys("Down")
            try:
                until(lambda: self.cursor() != row, f"the cursor left {row[1]!r}")
            except AssertionError as exc:  # the app runs in tmux: its screen says more than our threads
                raise AssertionError(f"{exc}\nlast screen:\n{self.screen()}") from None
        raise AssertionError(f"no tree row matched; the cursor stopped on {self.cursor()[1]!r}")

    def alive(self) -> bool:
        return subprocess.run(["tmux", "-L", self.socket, "has-session", "-t", "t"], capture_output=True, check=False).returncode == 0

    def wait_for(self, check: Callable[[str], bool], timeout: float = WAIT) -> str:
        """Poll the screen until ``check`` passes on two captures in a row that are the same (a capture
        taken while a frame is being written holds part of it); fail with the last screen if never."""
        deadline = time.monotonic() + timeout
        screen, previous = "", None
        while time.monotonic() < deadline:
            screen = self.screen()
            if check(screen):
                if screen == previous:
                    return screen
                previous = screen
            else:
                previous = None
            time.sleep(0.05)
        raise AssertionError(f"the screen never matched; last screen:\n{screen}")


def tui_in_tmux(name: str, project: Path, width: int, height: int) -> Iterator[Terminal]:
    """``crux-devtools tui PROJECT`` in a tmux server of its own, ``width`` x ``height``; the server
    is killed after the test (a fixture's body: ``yield from tui_in_tmux(...)``)."""
    term = Terminal(f"{name}-{os.getpid()}")
    env = f"-u COLUMNS -u LINES PATH={COMMAND.parent}:{os.environ.get('PATH', '')} TERM=xterm-256color"
    # the pane gets its final size before the app starts (a fresh server begins at 80x24)
    # a fresh tmux server can exit on its first start ("server exited unexpectedly"): try again, with a
    # short pause between tries, until WAIT (a failure bound) has passed
    deadline = time.monotonic() + WAIT
    while True:
        started = subprocess.run(["tmux", "-L", term.socket, "new-session", "-d", "-s", "t", "-x", str(width), "-y", str(height), "cat"], capture_output=True, text=True, check=False)
        if started.returncode == 0:
            break
        if time.monotonic() > deadline:
            raise AssertionError(f"tmux could not start a session: {started.stderr.strip()}")
        time.sleep(0.2)
    term.tmux("respawn-pane", "-k", "-t", "t", f"env {env} {COMMAND} tui {project}; sleep 5")
    yield term
    term.tmux("kill-server")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    target = tmp_path / "sample_project"
    shutil.copytree(REPO / "sample_project", target, ignore=shutil.ignore_patterns("__pycache__", ".crux*"))
    return target


@pytest.fixture
def terminal(project: Path) -> Iterator[Terminal]:
    yield from tui_in_tmux("crux-tui-test", project, 120, 36)


def test_the_real_tui_shows_the_sample_project_updates_live_and_quits(terminal: Terminal, project: Path) -> None:
    # one screen with all of it: a capture taken while a frame is being written can hold part of it
    terminal.wait_for(
        lambda s: all(part in s for part in ("support-reply", "Request", "System text", "example signed-in", "token_budget none"))  # the status line
        and re.search(r"input \d+ of max 5,702 tokens · ✓ fits", s) is not None  # the request as sent
    )

    terminal.keys("-")
    terminal.wait_for(lambda s: "budget " in s and "budget none" not in s)

    with (project / "01_contexts.py").open("a") as f:
        f.write('\n\nlate_addition = prompt("late-addition", system="Added while the TUI ran.")\n')
    screen = terminal.wait_for(lambda s: "late-addition" in s)

    (project / "01_contexts.py").write_text((project / "01_contexts.py").read_text() + "\ndef broken(:\n")
    # the last good view stays
    terminal.wait_for(lambda s: all(part in s for part in ("STALE", "Errors (1)", "support-reply", "of max 5,702 tokens")))

    terminal.keys("q")
    terminal.wait_for(lambda s: "support-reply" not in s)


def test_the_real_tui_shows_an_authored_alternative_the_summary_generate_prepares_and_an_offload_preview(terminal: Terminal, project: Path) -> None:
    terminal.wait_for(lambda s: "support-reply" in s and "Request" in s)
    terminal.down_to(lambda row: "ladder-reply" in row)  # the prompt with ladders
    terminal.wait_for(lambda s: " prompt  ladder-reply " in s and "example quiet-day" in s)
    terminal.keys("e", "e")
    terminal.wait_for(lambda s: all(part in s for part in ("example big-catalog", "catalog · ladder · authored: catalog-index", "## Product catalog (index)")))

    terminal.keys("e")  # back to quiet-day, then busy-day, and down onto sync-log: the view scrolls to it
    terminal.wait_for(lambda s: "example quiet-day" in s)
    terminal.keys("e")
    terminal.wait_for(lambda s: "example busy-day" in s)
    terminal.down_to(lambda row: "sync-log" in row)  # past house-rules and catalog
    # generate prepares the log's extractive summary before sending (no model), and so does the TUI
    screen = terminal.wait_for(lambda s: "sync-log · ladder · summary ·" in s and "[summary of sync-log]" in s)
    assert "offload preview" not in screen
    assert not (project / ".crux" / "summaries.sqlite3").exists()  # prepared in memory, nothing written

    for _ in range(40):  # "-" lowers the request's input budget (a prompt with ladders): until the summary no longer fits
        if "sync-log · ladder · offload preview" in terminal.screen():
            break
        screen = terminal.screen()
        budget = BUDGET.search(screen)
        assert budget is not None, f"no input budget on the status line:\n{screen}"
        terminal.keys("-")
        # the next step is a share of the budget the last answer planned: await that answer (the new
        # figure with "planning" gone; both change in one frame) before the next key
        terminal.wait_for(lambda s: (now := BUDGET.search(s)) is not None and now[1] != budget[1] and "… planning" not in s)
    terminal.wait_for(
        lambda s: re.search(r"sync-log · ladder · offload preview · 270 tok · handle ofl_\d+", s) is not None
        and "[sync-log is offloaded: lines, 16762 characters." in s
    )
