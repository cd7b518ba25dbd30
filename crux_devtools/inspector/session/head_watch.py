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

from ...review.revisions import RevisionError, git_dirs, resolve, work_tree
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

        def post(callback: Callable[[], Any]) -> None:
            try:
                loop.call_soon_threadsafe(callback)
            except RuntimeError:  # the event loop is closed: nobody is listening any more
                stop.set()

        def moved() -> None:
            post(lambda: loop.create_task(self._look(tree)))

        waiting = [2]  # the watches not yet in place

        def in_place() -> None:
            waiting[0] -= 1
            if waiting[0] == 0:  # both watches are in place: every later move is compared with the sha read now
                loop.create_task(self._first_look(tree))

        def watching(paths: list[Path], keep: Callable[[str], bool], recursive: bool) -> None:
            try:
                follow(paths, keep, moved, stop, recursive=recursive, ready=lambda: post(in_place))
            except Exception:  # the folder went away: no more marks follow HEAD, the rest keeps working
                stop.set()
                post(self.ready.set)

        # own threads, not the event loop's executor: they live as long as the watch
        for paths, keep, recursive in (([*sorted({git_dir, common})], keep_top, False), ([refs], keep_ref, True)):
            threading.Thread(target=watching, args=(paths, keep, recursive), name="crux-head-watch", daemon=True).start()

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
