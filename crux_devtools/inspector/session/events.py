"""The session's events: who hears them (``Subscribers``), what a load says (pure), and the tasks they start.

Every front end hears the session the same way: the web's SSE hub, the TUI and the MCP tools each
subscribe a callback, called on the event loop with each ``SessionEvent`` in order. A callback may
return an awaitable (it is run in the background, ``Background``) and may fail without stopping
the others (logged). What a shown load says, one sentence for a notification, is ``shown_event``'s;
a verification that only confirmed the report, ``verified_event``'s.

``Background`` is the session's set of tasks started and forgotten (a subscriber's awaitable,
priming the spare, retiring a worker): ``settled`` waits for them, ``cancel`` ends them with the session.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
from collections.abc import Callable, Sequence
from typing import Any

from ..api import SessionEvent
from ..report_types import Report
from .load import LoadOutcome

log = logging.getLogger(__name__)
Subscriber = Callable[[SessionEvent], Any]


class Background:
    """Tasks run in the background, kept until they end (so none is collected while it runs)."""

    def __init__(self) -> None:
        self.tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, awaitable: Any) -> None:
        task = asyncio.ensure_future(awaitable)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def settled(self) -> None:
        """Wait for every task running now (their faults are theirs: not raised here)."""
        if self.tasks:
            await asyncio.gather(*list(self.tasks), return_exceptions=True)

    async def cancel(self) -> None:
        for task in list(self.tasks):
            task.cancel()
        await self.settled()


class Subscribers:
    """The callbacks that hear a session's events; ``spawn`` runs what a callback returns to await."""

    def __init__(self, spawn: Callable[[Any], None]) -> None:
        self._callbacks: list[Subscriber] = []
        self._spawn = spawn

    def __bool__(self) -> bool:
        """Anyone listens (the recorded runs are polled only then)."""
        return bool(self._callbacks)

    def add(self, callback: Subscriber) -> Callable[[], None]:
        """Call ``callback(event)`` on every event; returns the function that stops it."""
        self._callbacks.append(callback)

        def unsubscribe() -> None:
            with contextlib.suppress(ValueError):
                self._callbacks.remove(callback)

        return unsubscribe

    def emit(self, event: SessionEvent) -> None:
        for callback in list(self._callbacks):
            try:
                result = callback(event)
            except Exception:  # a broken subscriber must not stop the others
                log.exception("session subscriber %r failed on %s", callback, event.kind)
                continue
            if inspect.isawaitable(result):
                self._spawn(result)


def shown_event(report: Report, outcome: LoadOutcome, changed: list[str], files: list[str], elapsed: float) -> SessionEvent:
    """What a load shown as ``report`` says: ``report`` (how many prompts, how fast, after which
    changes, how many re-evaluated, what a verification corrected), or ``error`` (the first load error,
    and that the broken module's last good prompts are shown) when it has errors."""
    version, errors, disagreements = report["version"], report["errors"], report["disagreements"]
    extra: dict[str, Any] = {"load": outcome.kind, "reevaluated": list(outcome.reevaluated), "verification": "corrected" if disagreements else ""}
    if not errors:
        summary = f"Report {version}: {len(report['prompts'])} prompt(s) in {elapsed * 1000:.0f} ms"
        if disagreements:
            summary += f", verified: a fresh load corrected {len(changed)} prompt(s)"
        if files:
            summary += f" after changes to {', '.join(files[:3])}{'…' if len(files) > 3 else ''}"
        if outcome.kind == "incremental":
            summary += f" ({len(outcome.reevaluated)} re-evaluated)"
        return SessionEvent("report", version, summary, changed_files=files, changed_prompts=changed, **extra)
    first = errors[0]
    where = f"{first['file']}:{first['line']}: " if first.get("file") else ""
    summary = f"{where}{first['type']}: {first['message']}".splitlines()[0][:300]
    if report["stale"]:
        summary += " (its module's last good prompts are shown, marked stale)"
    return SessionEvent("error", version, summary, changed_files=files, changed_prompts=changed, **extra)


def verified_event(report: Report, reevaluated: Sequence[str]) -> SessionEvent:
    """A verification that agrees with the report shown: the same version, now verified."""
    summary = f"Report {report['version']} verified: a fresh load of the whole project agrees"
    return SessionEvent("report", report["version"], summary, load="full", reevaluated=list(reevaluated), verification="agreed")
