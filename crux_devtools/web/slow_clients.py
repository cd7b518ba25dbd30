"""Deadlines for slow or half-open clients, which uvicorn alone never times out.

uvicorn's only timer is the keep-alive one, armed after a response and cancelled by the first byte
of the next request; a connection that sends nothing, half a request line, or one header byte a
second is held forever. Two deadlines close that gap:

- ``RequestHeadDeadline`` (the HTTP protocol): a request head must be complete ``HEAD_SECONDS``
  after the connection opens or the previous response ends, else the connection is closed. Bytes
  arriving do not reset the clock, so dribbling does not help.
- ``BodyDeadline`` (ASGI middleware): a request body must be complete ``BODY_SECONDS`` after its
  head; a route still waiting for it gets ``408 Request Timeout`` and the connection closes.

Once a request is whole nothing is timed: a long Run, or the endless ``/events`` stream, is fine.
The environment variables ``CRUX_DEVTOOLS_HEAD_SECONDS`` and ``CRUX_DEVTOOLS_BODY_SECONDS``, read
when the server starts, change the two deadlines (the tests make them short).
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from starlette.exceptions import HTTPException
from uvicorn.protocols.http.h11_impl import H11Protocol

HEAD_ENV = "CRUX_DEVTOOLS_HEAD_SECONDS"
BODY_ENV = "CRUX_DEVTOOLS_BODY_SECONDS"


def deadline_seconds(variable: str, default: float) -> float:
    """The deadline an environment variable sets (a positive number of seconds), else ``default``."""
    try:
        seconds = float(os.environ.get(variable, ""))
    except ValueError:
        return default
    return seconds if seconds > 0 else default


HEAD_SECONDS = deadline_seconds(HEAD_ENV, 5.0)
BODY_SECONDS = deadline_seconds(BODY_ENV, 10.0)


class RequestHeadDeadline(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose request head is not complete in time.

    uvicorn sets ``self.scope`` afresh for every request head it parses: a new scope after data
    arrives means the head is complete."""

    head_seconds = HEAD_SECONDS

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._head_deadline: asyncio.TimerHandle | None = None
        self._arm()

    def data_received(self, data: bytes) -> None:
        scope = self.scope
        super().data_received(data)
        if self.scope is not scope:
            self._disarm()

    def on_response_complete(self) -> None:
        scope = self.scope
        super().on_response_complete()
        if self.scope is scope and not self.transport.is_closing():
            self._arm()  # the next request (keep-alive) has the same time to arrive whole

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._head_deadline = self.loop.call_later(self.head_seconds, self._head_too_slow)

    def _disarm(self) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None

    def _head_too_slow(self) -> None:
        self._head_deadline = None
        if not self.transport.is_closing():
            self.transport.close()


class BodyDeadline:
    """ASGI middleware: ``408`` (connection closed) when a request body is not complete in time."""

    def __init__(self, app: Any, seconds: float = BODY_SECONDS) -> None:
        self.app = app
        self.seconds = seconds

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.seconds
        body_done = False

        async def receive_in_time() -> dict[str, Any]:
            nonlocal body_done
            if body_done:  # e.g. a stream waiting for the client to go away: no deadline
                return await receive()
            try:
                message: dict[str, Any] = await asyncio.wait_for(receive(), max(0.0, deadline - loop.time()))
            except TimeoutError:
                raise HTTPException(408, f"the request body did not arrive within {self.seconds:g} seconds", {"Connection": "close"}) from None
            if message["type"] != "http.request" or not message.get("more_body", False):
                body_done = True
            return message

        await self.app(scope, receive_in_time, send)
