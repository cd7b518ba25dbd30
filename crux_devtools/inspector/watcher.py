"""Watching a project folder for changes (watchfiles, inotify), ignoring tool state and caches.

``watchfiles`` is imported lazily: ``import crux_devtools`` must not load it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

STEP_MS = 5  # quiet time (ms) after the last event before a batch is yielded
IGNORED_PARTS = frozenset({"__pycache__", "node_modules", "site-packages", "venv", "env", ".venv", ".crux", ".git"})
# Files user code itself may write while being imported: reacting to them would reload forever.
IGNORED_SUFFIXES = (
    ".pyc", ".pyo", ".sqlite", ".sqlite3", ".db", "-wal", "-shm", "-journal", ".log", ".tmp", ".swp", ".swx", "~",
)


def is_relevant(root: Path, path: str) -> bool:
    """True when a change to ``path`` may change the project's report."""
    try:
        parts = Path(path).relative_to(root).parts
    except ValueError:
        return False
    if not parts:
        return False
    if any(part in IGNORED_PARTS or part.startswith(".") or part.endswith(".egg-info") for part in parts):
        return False
    return not parts[-1].endswith(IGNORED_SUFFIXES)


async def watch(
    root: Path,
    on_change: Callable[[list[str]], Awaitable[Any] | Any],
    stop: asyncio.Event,
    *,
    debounce: float = 0.05,
) -> None:
    """Call ``on_change(relative paths)`` for each batch of relevant changes until ``stop`` is set.

    watchfiles groups events arriving within ``debounce`` seconds into one batch; the caller
    coalesces further (one evaluation running, at most one pending). A batch is yielded once no new
    event arrived for ``STEP_MS`` (an editor's save is a burst well within that), so a save reaches
    the session within about 5-10 ms rather than a whole debounce window.
    """
    from watchfiles import awatch

    def keep(_change: Any, path: str) -> bool:
        return is_relevant(root, path)

    debounce_ms = max(1, int(debounce * 1000))
    step = min(STEP_MS, debounce_ms)
    async for changes in awatch(root, watch_filter=keep, debounce=debounce_ms, step=step, stop_event=stop, recursive=True):
        files = sorted({str(Path(path).relative_to(root)) for _, path in changes})
        if files:
            result = on_change(files)
            if asyncio.iscoroutine(result):
                await result
