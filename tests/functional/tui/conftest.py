"""Fixtures every TUI test in this folder uses."""

from __future__ import annotations

import pytest
from textual import constants


@pytest.fixture(autouse=True)
def no_animations(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each app made in a test jumps to the end of its animations (as with ``TEXTUAL_ANIMATIONS=none``).

    A tab switch slides the bar's underline for 0.3 s: the pilot's pauses wait until the app is idle,
    and meanwhile the app draws a frame every tick, several times the CPU of the switch itself. The
    tests look at where things end, which is the same either way. (A TUI in a real terminal, as the
    tmux tests start it, keeps its animations.)
    """
    monkeypatch.setattr(constants, "TEXTUAL_ANIMATIONS", "none")
