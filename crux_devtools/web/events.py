"""Fan session events out to every open ``/events`` stream.

The session calls one subscriber; each browser tab gets its own queue, so a slow tab never delays
another. Bursts collapse: a tab that has not read yet keeps only the newest event of each kind.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import asdict, dataclass
from typing import Any, Literal

from ..inspector.api import SessionEvent, SessionLike

PING_SECONDS = 15.0


@dataclass(frozen=True, slots=True)
class HeadMoved:
    """The commit git ``HEAD`` names moved (a commit, a checkout): pages fetch their change marks again."""

    sha: str
    kind: Literal["head"] = "head"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class EventHub:
    """Subscribes once to the session and hands each event to every listening stream."""

    def __init__(self) -> None:
        self._queues: set[asyncio.Queue[SessionEvent | HeadMoved | None]] = set()
        self._unsubscribe: Callable[[], None] | None = None

    def attach(self, session: SessionLike) -> None:
        if self._unsubscribe is None:
            self._unsubscribe = session.subscribe(self.publish)

    def detach(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        for queue in list(self._queues):
            queue.put_nowait(None)

    @property
    def listeners(self) -> int:
        return len(self._queues)

    def head_moved(self, sha: str) -> None:
        self.publish(HeadMoved(sha))

    def publish(self, event: SessionEvent | HeadMoved) -> None:
        for queue in list(self._queues):
            queue.put_nowait(event)

    async def stream(self, hello: dict[str, Any]) -> AsyncIterator[str]:
        """Server-sent event lines: a ``hello`` first, then one message per session event."""
        queue: asyncio.Queue[SessionEvent | HeadMoved | None] = asyncio.Queue()
        self._queues.add(queue)
        try:
            yield format_sse("hello", hello)
            while True:
                try:
                    event = await asyncio.wait_for(queue.get(), PING_SECONDS)
                except TimeoutError:
                    yield ": ping\n\n"
                    continue
                if event is None:
                    return
                yield format_sse(event.kind, event.to_dict())
        finally:
            self._queues.discard(queue)


def format_sse(kind: str, data: dict[str, Any]) -> str:
    """One server-sent event; the payload is JSON on a single ``data:`` line."""
    return f"event: {kind}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"
