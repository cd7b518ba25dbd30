"""Watching a project folder for changes (watchfiles, inotify), ignoring tool state and caches.

``watchfiles`` is imported lazily: ``import crux_devtools`` must not load it.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where used: the worker reads ``file_state`` and does not otherwise need asyncio at its warm-up
    import asyncio

log = logging.getLogger(__name__)
STEP_MS = 5  # quiet time (ms) after the last event before a batch is yielded
POLL_SECONDS = 0.5  # the fallback when watchfiles cannot watch the project (a name that is not UTF-8)
IGNORED_PARTS = frozenset({"__pycache__", "node_modules", "site-packages", "venv", ".venv", ".crux", ".git"})
IGNORED_NAMES = frozenset({".DS_Store", "4913"})  # an OS's folder state; vim's probe that it may write a folder
# Files user code itself may write while being imported: reacting to them would reload forever.
IGNORED_SUFFIXES = (
    ".pyc", ".pyo", ".sqlite", ".sqlite3", ".db", "-wal", "-shm", "-journal", ".log", ".tmp", ".swp", ".swx", "~",
)


def is_relevant(root: Path, path: str) -> bool:
    """True when a change to ``path`` may change the project's report.

    Not: anything in a hidden folder (``.git``, ``.crux``, ``.venv``), a cache or dependency folder,
    a virtual environment (a folder holding ``pyvenv.cfg``), compiled files, SQLite and log files,
    editor swap files. Hidden files are relevant (``.env``), hidden folders are not.
    """
    try:
        parts = Path(path).relative_to(root).parts
    except ValueError:
        return False
    if not parts:
        return False
    folder = root
    for n, part in enumerate(parts):
        if part in IGNORED_PARTS or part.endswith(".egg-info"):
            return False
        folder = folder / part
        is_folder = n < len(parts) - 1 or os.path.isdir(folder)
        if is_folder and (part.startswith(".") or os.path.exists(folder / "pyvenv.cfg")):
            return False
    name = parts[-1]
    return not (name.endswith(IGNORED_SUFFIXES) or name in IGNORED_NAMES or name.startswith(".#"))


def preload() -> None:
    """Import what ``watch`` needs (watchfiles, and the async backend it runs on: about 50 ms).

    The session calls this in a thread while its first load runs in the worker, when this process
    would otherwise wait: the first report then reaches the screen without that import in between.
    """
    import importlib

    import watchfiles  # noqa: F401

    with contextlib.suppress(ImportError):  # only a head start: ``watch`` imports what it needs itself
        importlib.import_module("anyio._backends._asyncio")


async def watch(
    root: Path,
    on_change: Callable[[list[str]], Awaitable[Any] | Any],
    stop: asyncio.Event,
    *,
    debounce: float = 0.05,
    watched: Callable[[str], bool] | None = None,
) -> None:
    """Call ``on_change(relative paths)`` for each batch of relevant changes until ``stop`` is set.

    ``watched(relative path)``: whether the project reads a file ``is_relevant`` leaves out (a SQLite
    store the worker saw user code connect to, and its ``-wal``); such a change is passed on too.

    watchfiles groups events arriving within ``debounce`` seconds into one batch; the caller
    coalesces further (one evaluation running, at most one pending). A batch is yielded once no new
    event arrived for ``STEP_MS`` (an editor's save is a burst well within that), so a save reaches
    the session within about 5-10 ms rather than a whole debounce window.
    """
    from watchfiles import awatch
    from watchfiles._rust_notify import WatchfilesRustInternalError

    def keep(_change: Any, path: str) -> bool:
        if is_relevant(root, path):
            return True
        # a file the filter leaves out (a SQLite store and its -wal) that the project reads: the session says so
        return watched is not None and _watched_file(root, path, watched)

    debounce_ms = max(1, int(debounce * 1000))
    step = min(STEP_MS, debounce_ms)
    try:
        async for changes in awatch(root, watch_filter=keep, debounce=debounce_ms, step=step, stop_event=stop, recursive=True):
            files = sorted({str(Path(path).relative_to(root)) for _, path in changes})
            if files:
                await _call(on_change, files)
    except* WatchfilesRustInternalError as group:
        # watchfiles stops at the first event under a name that is not UTF-8 (it cannot decode it),
        # and any listing of that folder makes one: poll instead, for the rest of the session.
        log.warning("watching %s by polling every %g s: %s", root, POLL_SECONDS, group.exceptions[0])
        await poll(root, on_change, stop)


def file_state(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    """A file's (mtime in ns, size), or None when it is missing or empty. For a SQLite store: a
    reader creates an empty ``-wal``, and opens and closes it for writing without changing it (an
    inotify "modified" event); only a commit changes this state."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size) if info.st_size else None


def _watched_file(root: Path, path: str, watched: Callable[[str], bool]) -> bool:
    try:
        return watched(str(Path(path).relative_to(root)))
    except ValueError:
        return False


async def poll(root: Path, on_change: Callable[[list[str]], Awaitable[Any] | Any], stop: asyncio.Event, interval: float = POLL_SECONDS) -> None:
    """The fallback watcher: compare each relevant file's size and modification time every ``interval``."""
    import asyncio

    before = await asyncio.to_thread(snapshot, root)
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), interval)
            return
        after = await asyncio.to_thread(snapshot, root)
        files = sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))
        before = after
        if files:
            await _call(on_change, files)


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """``relative path -> (mtime_ns, size)`` of every relevant file under ``root``."""
    found: dict[str, tuple[int, int]] = {}
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = [d for d in subfolders if is_relevant(root, os.path.join(folder, d))]
        for name in names:
            path = os.path.join(folder, name)
            if not is_relevant(root, path):
                continue
            try:
                stat = os.stat(path)
            except OSError:  # gone since the listing
                continue
            found[os.path.relpath(path, root)] = (stat.st_mtime_ns, stat.st_size)
    return found


async def _call(on_change: Callable[[list[str]], Awaitable[Any] | Any], files: list[str]) -> None:
    import asyncio

    result = on_change(files)
    if asyncio.iscoroutine(result):
        await result


def follow(paths: list[Path], keep: Callable[[str], bool], on_batch: Callable[[], Any], stop: Any, *,
           recursive: bool, ready: Callable[[], Any] | None = None) -> None:
    """Call ``on_batch()`` for each batch of changes to a path ``keep`` accepts, until ``stop.is_set()``.

    Blocking (run it in a thread). Unlike ``watch`` the paths may be anywhere (a git folder), and
    ``ready()`` is called once the watches are in place: a change after it is never missed.
    """
    from watchfiles._rust_notify import RustNotify

    with RustNotify([str(p) for p in paths], False, False, 50, recursive, False) as notify:
        if ready is not None:
            ready()
        while True:
            changes = notify.watch(1600, STEP_MS, 0, stop)
            if changes == "stop":
                return
            if isinstance(changes, set) and any(keep(path) for _, path in changes):
                on_batch()
