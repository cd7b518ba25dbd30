"""How long a test waits for something to happen, and the helpers that wait.

A test awaits the event it needs (a line printed, a file written, a process gone, a screen drawn).
``WAIT`` only bounds a failure: on a loaded machine a step that takes 50 ms alone can take seconds,
so the bound is generous, and a test that works never waits for it.
"""

from __future__ import annotations

import asyncio
import queue
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import IO, Any

WAIT = 120.0  # seconds: the failure bound of every wait in the suite
POLL = 0.02  # seconds between two looks at something that gives no signal


def timed_out(what: str, timeout: float) -> AssertionError:
    """The failure of a wait: what never happened, and where every thread of this process stood then
    (a hang in a worker thread or a lock shows there, not in the test's own frame)."""
    stacks = []
    names = {thread.ident: thread.name for thread in threading.enumerate()}
    for ident, frame in sys._current_frames().items():
        if ident == threading.get_ident():
            continue
        stacks.append(f"--- thread {names.get(ident, ident)}\n" + "".join(traceback.format_stack(frame)[-12:]))
    return AssertionError(f"timed out after {timeout:.0f} s waiting until {what}\n" + "\n".join(stacks))


def until(predicate: Callable[[], object], what: str = "the condition holds", timeout: float = WAIT) -> None:
    """Poll ``predicate`` until it is true; fail after ``timeout`` seconds saying ``what`` never happened."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise timed_out(what, timeout)
        time.sleep(POLL)


async def until_async(predicate: Callable[[], object], what: str = "the condition holds", timeout: float = WAIT) -> None:
    """``until`` for a test running in the event loop (the loop keeps running while it waits)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise timed_out(what, timeout)
        await asyncio.sleep(POLL)


class Lines:
    """The lines a child process writes to a pipe, read in a thread so that a wait can be bounded."""

    def __init__(self, stream: IO[str]) -> None:
        self._lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self._lines.put(line)
        self._lines.put("")  # end of file

    def next(self, timeout: float = WAIT) -> str:
        """The next line ("" at end of file); fails if none comes within ``timeout`` seconds."""
        try:
            return self._lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no line within {timeout:.0f} s") from None


async def pilot_until(pilot: Any, predicate: Callable[[], object], what: str = "the screen shows it", timeout: float = WAIT) -> None:
    """``until`` for a Textual app under a pilot: the app runs (and redraws) between two looks."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise timed_out(what, timeout)
        await pilot.pause(0.05)


async def watcher_caught_up(session: Any, mark: str) -> None:
    """Wait until a session's watcher has passed on every change made before this call, and the
    session has finished what they caused (``settled``).

    ``mark`` is a file the project's ``watch_ignore`` names: it is written now, and once the watcher
    hands it to the session (``on_batch``), every earlier change has reached the session too (the
    watcher keeps their order), while the mark itself changes nothing. A test that says a change
    caused nothing awaits this instead of a pause.
    """
    seen: set[str] = set()
    session.on_batch = seen.update
    (session.root / mark).write_text(f"written after every change before it ({time.monotonic_ns()})\n", encoding="utf-8")
    await until_async(lambda: mark in seen, f"the watcher passed on {mark}, written after every change before it")
    session.on_batch = None
    await asyncio.wait_for(session.settled(), WAIT)  # a reload loop never settles
