"""``RunsWatcher``: the project's recorded runs, and a ``runs`` event whenever another process writes one.

The store (``.crux/runs.sqlite3``, ``core/record/runstore.py``, standard library only) is opened on first
use. While anyone listens to the session, a task polls its change token every ``poll`` seconds (the
look itself runs in a thread) and emits one ``SessionEvent("runs", ...)`` naming the new runs. A
write to the store never reloads the project. A corrupt or unreadable store is logged once and
polled on (it may be fixed); ``store()`` is then ``None``.

Runs being recorded (a step streaming, ``core/record/live.py``): each time their live rows change
the poller emits ``SessionEvent("run", ...)`` naming the runs still live, and while any is live it
polls every ``live_poll`` seconds, so an open run page shows each piece of text within tens of
milliseconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...api import SessionEvent

log = logging.getLogger(__name__)


def _runs_changes(store: Any, token: int | None, mark: int | None) -> tuple[int, int | None, SessionEvent | None]:
    """The store's change token and write mark now, and the event to send if it changed (in a thread)."""
    now = store.change_token()
    if token is None or now == token:
        if token is None:
            mark, _ = store.written_since(None)
        return now, mark, None
    mark, new = store.written_since(mark)
    if new:
        listed = ", ".join(f"{r.get('target')} ({r.get('status')})" for r in new[-3:])
        more = f"{len(new) - 3} more, " if len(new) > 3 else ""
        summary = f"{len(new)} new run{'s' if len(new) != 1 else ''}: {more}{listed}"
    else:
        summary = "Recorded runs changed"
    return now, mark, SessionEvent("runs", now, summary, runs=[str(r.get("id")) for r in new])


def _live_changes(store: Any, token: int | None, live: bool) -> tuple[int, bool, SessionEvent | None]:
    """The store's live token now, whether any run is live, and the ``run`` event to send if the
    token moved (in a thread). ``live`` is the last look's answer, kept while nothing moved."""
    now = store.live_token()
    if token is not None and now == token:
        return now, live, None
    ids = [str(r.get("id")) for r in store.live_runs()]
    if token is None:
        return now, bool(ids), None
    summary = f"{len(ids)} run{'s' if len(ids) != 1 else ''} being recorded" if ids else "No run is being recorded"
    return now, bool(ids), SessionEvent("run", now, summary, runs=ids)


class RunsWatcher:
    """The project's ``RunStore`` and its poller. ``emit`` sends an event to the session's
    subscribers; ``listening`` says whether there are any (the poller ends when there are none)."""

    def __init__(self, root: Path, emit: Callable[[SessionEvent], None], listening: Callable[[], bool], poll: float = 0.1, live_poll: float = 0.02) -> None:
        self.root = root
        self.poll = poll
        self.live_poll = min(live_poll, poll)
        self._emit = emit
        self._listening = listening
        self._store: Any = None  # the RunStore, opened on first use
        self._warned = False
        self.task: asyncio.Task[None] | None = None

    def store(self) -> Any:
        """The ``RunStore``, or ``None`` when it cannot be opened (corrupt, newer schema, unreadable:
        logged once). A missing file is an empty store."""
        from ....core.record.runstore import RunStoreError

        store = self._open()
        try:
            store.change_token()
        except RunStoreError as exc:
            self._warn(exc)
            return None
        self._warned = False
        return store

    def _open(self) -> Any:
        from ....core.record.runstore import RunStore

        if self._store is None:
            self._store = RunStore.for_project(self.root, create=False)
        return self._store

    def _warn(self, exc: Exception) -> None:
        if not self._warned:
            self._warned = True
            log.warning("recorded runs are not shown: %s", exc)

    def start(self) -> None:
        """Poll while anyone listens (a no-op when already polling, when nobody listens, or outside
        the event loop: the session's ``start`` calls it again)."""
        if self.task is not None and not self.task.done() or not self._listening():
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return
        self.task = asyncio.ensure_future(self._poll())

    async def _poll(self) -> None:
        from ....core.record.runstore import RunStoreError

        token: int | None = None
        mark: int | None = None
        live_token: int | None = None
        live = False
        while self._listening():
            try:
                token, mark, event, live_token, live, live_event = await asyncio.to_thread(self._look, token, mark, live_token, live)
            except RunStoreError as exc:  # corrupt or unreadable: say so once, keep polling (it may be fixed)
                self._warn(exc)
                event = live_event = None
            if live_event is not None:
                self._emit(live_event)
            if event is not None:
                self._emit(event)
            await asyncio.sleep(self.live_poll if live else self.poll)

    def _look(self, token: int | None, mark: int | None, live_token: int | None, live: bool) -> tuple[Any, ...]:
        store = self._open()
        token, mark, event = _runs_changes(store, token, mark)
        live_token, live, live_event = _live_changes(store, live_token, live)
        return token, mark, event, live_token, live, live_event

    async def close(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task
            self.task = None
        if self._store is not None:
            self._store.close()
            self._store = None
