"""Following the commit git ``HEAD`` names, for the change marks of the web list and the TUI.

A commit, a checkout or a reset moves ``HEAD`` without touching the working tree, and the session's
watcher leaves ``.git`` out, so it never sees one. ``HeadWatcher`` watches the git folder's ``HEAD``
(without its subfolders) and the common folder's ``refs`` and ``packed-refs`` with the same file
watcher, resolves ``HEAD`` after each batch of changes there, and calls every subscriber with the new
sha when it moved. One per session (``head_watcher(session)``), started by its first subscriber and
stopped with its last; outside a git work tree it watches nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..review.revisions import RevisionError, git_dirs, resolve, work_tree
from .watcher import follow

Subscriber = Callable[[str], Any]


class HeadWatcher:
    """``subscribe(callback)``: ``callback(sha)`` on the event loop each time ``HEAD`` moves."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.sha: str | None = None  # the commit HEAD named at the last look
        self.ready = asyncio.Event()  # the watches are in place (or there is nothing to watch)
        self._subscribers: list[Subscriber] = []
        self._stop: threading.Event | None = None
        self._task: asyncio.Task[None] | None = None

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Start calling ``callback``; the returned function stops it (and the watch, with the last)."""
        self._subscribers.append(callback)
        if self._task is None:
            self.ready.clear()
            self._stop = threading.Event()
            self._task = asyncio.get_running_loop().create_task(self._run(self._stop))

        def unsubscribe() -> None:
            with contextlib.suppress(ValueError):
                self._subscribers.remove(callback)
            if not self._subscribers:
                self.close()

        return unsubscribe

    def close(self) -> None:
        if self._stop is not None:
            self._stop.set()
        self._stop = None
        self._task = None

    async def _run(self, stop: threading.Event) -> None:
        loop = asyncio.get_running_loop()
        try:
            tree = await asyncio.to_thread(work_tree, self.root)
            git_dir, common = await asyncio.to_thread(git_dirs, tree)
        except RevisionError:
            self.ready.set()
            return
        refs = common / "refs"

        def keep_top(path: str) -> bool:
            return Path(path).name in ("HEAD", "packed-refs")

        def keep_ref(path: str) -> bool:
            return not path.endswith(".lock")

        def moved() -> None:
            loop.call_soon_threadsafe(lambda: loop.create_task(self._look(tree)))

        started = threading.Barrier(3)

        def ready() -> None:
            started.wait()

        def on_ready() -> None:
            # both watches are in place: the sha read now is the one every later move is compared with
            loop.create_task(self._first_look(tree))

        def waiter() -> None:
            started.wait()
            loop.call_soon_threadsafe(on_ready)

        tops = sorted({git_dir, common})
        threads = [
            asyncio.to_thread(follow, tops, keep_top, moved, stop, recursive=False, ready=ready),
            asyncio.to_thread(follow, [refs], keep_ref, moved, stop, recursive=True, ready=ready),
            asyncio.to_thread(waiter),
        ]
        try:
            await asyncio.gather(*threads)
        except Exception:  # the folder went away: no more marks follow HEAD, the rest keeps working
            started.abort()
            stop.set()
            self.ready.set()

    async def _first_look(self, tree: Any) -> None:
        self.sha = await self._resolve(tree)
        self.ready.set()

    async def _look(self, tree: Any) -> None:
        sha = await self._resolve(tree)
        if sha is None or sha == self.sha:
            return
        self.sha = sha
        for callback in list(self._subscribers):
            callback(sha)

    @staticmethod
    async def _resolve(tree: Any) -> str | None:
        try:
            return await asyncio.to_thread(resolve, tree, "HEAD")
        except RevisionError:
            return None


_WATCHERS: weakref.WeakKeyDictionary[Any, HeadWatcher] = weakref.WeakKeyDictionary()


def head_watcher(session: Any) -> HeadWatcher:
    """The session's one ``HeadWatcher`` (both front ends subscribe to the same)."""
    watcher = _WATCHERS.get(session)
    if watcher is None:
        watcher = _WATCHERS[session] = HeadWatcher(Path(session.root))
    return watcher
