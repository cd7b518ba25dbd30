"""The real ``crux-devtools tui`` in tmux: a run recorded by a separate process appears in the Runs tab
with no key pressed, and opens step by step."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[2]))

from test_tui_tmux import REPO, Terminal, tui_in_tmux  # noqa: E402
from waits import WAIT  # noqa: E402

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux"),
]

WRITER = """
import importlib, sys
sys.path.insert(0, sys.argv[1])
from crux_devtools import generate, record_runs
agent = importlib.import_module("05_agent")
with record_runs(sys.argv[1]):
    generate(agent.support_agent, input={"question": "Why did sync [/] stop?", "log_hours": 24})
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    target = tmp_path / "sample_project"
    shutil.copytree(REPO / "sample_project", target, ignore=shutil.ignore_patterns("__pycache__", ".crux*"))
    return target


@pytest.fixture
def terminal(project: Path) -> Iterator[Terminal]:
    yield from tui_in_tmux("crux-tui-runs", project, 140, 40)


def test_a_run_recorded_by_another_process_appears_in_the_runs_tab_without_a_key_press(terminal: Terminal, project: Path) -> None:
    terminal.wait_for(lambda s: "support-agent" in s and "System text" in s)
    terminal.keys("6")  # the Runs tab, all runs: still empty
    terminal.wait_for(lambda s: "All runs · 0" in s)

    subprocess.run([sys.executable, "-c", WRITER, str(project)], cwd=project, check=True, timeout=WAIT)
    # no key pressed from here on: the session sees the store change and the tab refreshes
    screen = terminal.wait_for(lambda s: "All runs · 1" in s and "support-agent" in s.split("All runs · 1", 1)[1])
    row = next(line for line in screen.splitlines() if "support-agent agent" in line and "✓ ok" in line)
    assert " app " in row

    terminal.keys("Enter")  # the run, step by step
    # the detail is drawn in more than one frame: wait for its last line, the step's tool call
    screen = terminal.wait_for(lambda s: "Step 0" in s and "Planner" in s and "→ tool call" in s)
    assert "support-agent agent  ✓ ok" in screen
    assert 'input { "question": "Why did sync [/] stop?", "log_hours": 24 }' in screen  # literally
    assert "→ tool call fetch_sync_history" in screen
    terminal.keys("s")  # what was sent
    screen = terminal.wait_for(lambda s: "Sent in step 0" in s and "<prompt> · prompt-system · full" in s)
    terminal.keys("Escape")  # alone: Escape then q in one burst reads as alt+q
    terminal.wait_for(lambda s: "All runs · 1" in s)
    terminal.keys("q")
    terminal.wait_for(lambda s: "support-agent" not in s)
