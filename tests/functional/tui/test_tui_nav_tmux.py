"""The real ``crux-devtools tui`` in a real terminal (tmux) on an 80-prompt project: ``/``, an id, Enter."""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(Path(__file__).parents[2]))
sys.path.insert(0, str(REPO / "benchmarks"))

from scale_project import make_project  # noqa: E402
from test_tui_tmux import Terminal, tui_in_tmux  # noqa: E402

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux"),
]


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Terminal]:
    project = make_project(tmp_path / "scale", modules=20)
    yield from tui_in_tmux("crux-tui-nav", project, 140, 40)


def left(screen: str) -> list[str]:
    return [line.split("▎", 1)[0].strip() for line in screen.splitlines()]


def test_slash_an_id_and_enter_in_the_real_tui_show_that_prompt(terminal: Terminal) -> None:
    terminal.wait_for(lambda s: "m000-prompt-0" in s and "1 Request" in s)
    terminal.keys("/")
    terminal.wait_for(lambda s: "80 prompts · type to search" in s)
    for char in "m013-prompt-2":  # one key at a time, as a user types
        terminal.keys(char)
        time.sleep(0.03)
    screen = terminal.wait_for(lambda s: "1 of 80 prompts" in s)
    assert [line for line in left(screen) if line.startswith("✓ ")] == ["✓ m013-prompt-2 863 tok"]
    assert " prompt  m000-prompt-0 " in screen  # typing moved nothing on the right
    terminal.keys("Enter")
    screen = terminal.wait_for(lambda s: " prompt  m013-prompt-2 " in s)
    assert "You are assistant 2 of module 13." in screen  # the Request tab
    assert "/m013-prompt-2  1/1" in screen
    assert any(line.startswith("▼ ✓ m013-prompt-2") for line in left(screen)), screen  # the whole tree, scrolled to it
    terminal.keys("3")
    terminal.wait_for(lambda s: "Source" in s and "Status" in s and "Reason" in s)  # the Contributors tab
    terminal.keys("q")
    terminal.wait_for(lambda s: "m013-prompt-2" not in s)
