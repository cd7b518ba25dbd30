"""The real ``crux-devtools tui`` in a real terminal (tmux): first screen, a live edit, a broken file, quit."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
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

    def alive(self) -> bool:
        return subprocess.run(["tmux", "-L", self.socket, "has-session", "-t", "t"], capture_output=True, check=False).returncode == 0

    def wait_for(self, check: Callable[[str], bool], timeout: float = 20.0) -> str:
        """Poll the screen until ``check`` passes; fail with the last screen if it never does."""
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if check(screen):
                return screen
            time.sleep(0.05)
        raise AssertionError(f"the screen never matched; last screen:\n{screen}")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    target = tmp_path / "sample_project"
    shutil.copytree(REPO / "sample_project", target, ignore=shutil.ignore_patterns("__pycache__", ".crux*"))
    return target


@pytest.fixture
def terminal(project: Path) -> Iterator[Terminal]:
    term = Terminal(f"crux-tui-test-{os.getpid()}")
    env = f"-u COLUMNS -u LINES PATH={COMMAND.parent}:{os.environ.get('PATH', '')} TERM=xterm-256color"
    # the pane gets its final size before the app starts (a fresh server begins at 80x24)
    for _ in range(5):  # a fresh tmux server can exit on its first start ("server exited unexpectedly")
        if subprocess.run(["tmux", "-L", term.socket, "new-session", "-d", "-s", "t", "-x", "120", "-y", "36", "cat"], capture_output=True, check=False).returncode == 0:
            break
        time.sleep(0.2)
    term.tmux("respawn-pane", "-k", "-t", "t", f"env {env} {COMMAND} tui {project}; sleep 5")
    yield term
    term.tmux("kill-server")


def test_the_real_tui_shows_the_sample_project_updates_live_and_quits(terminal: Terminal, project: Path) -> None:
    screen = terminal.wait_for(lambda s: "support-reply" in s and "System text" in s)
    assert "example signed-in" in screen
    assert "tokens · budget none" in screen

    terminal.keys("-")
    terminal.wait_for(lambda s: "budget " in s and "budget none" not in s)

    with (project / "01_contexts.py").open("a") as f:
        f.write('\n\nlate_addition = prompt("late-addition", system="Added while the TUI ran.")\n')
    screen = terminal.wait_for(lambda s: "late-addition" in s)

    (project / "01_contexts.py").write_text((project / "01_contexts.py").read_text() + "\ndef broken(:\n")
    screen = terminal.wait_for(lambda s: "STALE" in s and "Errors (1)" in s)
    assert "support-reply" in screen  # the last good view stays
    assert "tokens · budget" in screen

    terminal.keys("q")
    terminal.wait_for(lambda s: "support-reply" not in s, timeout=10)
