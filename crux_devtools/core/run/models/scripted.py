"""``ScriptedModel``: replays fixed answers offline and records every request, for tests and demos."""

from __future__ import annotations

import copy
import inspect
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from typing import Any

from ...errors import ModelError
from ...contract import ModelRequest, ModelResponse, ToolCall, capacity_dict

ScriptedResponse = str | Sequence[ToolCall] | ModelResponse


class ScriptedModel:
    """Replays scripted answers in order, fully offline, and keeps every request in ``.requests``.

    Each response is a string (a text answer), a list of ``ToolCall`` (the model asks for those
    tools) or a ready ``ModelResponse``. A call after the last response raises ``ModelError``
    (``kind="exhausted"``); that request is still recorded.

    ``astream`` streams each text answer in pieces of ``chunk`` characters (``generate(...,
    on_text=...)`` uses it); ``before_chunk(i)``, when given, is called (and awaited when it returns
    an awaitable) before piece ``i`` goes out, so a test or a demo sets the pace by its own events.
    """

    def __init__(
        self, responses: Iterable[ScriptedResponse], *, name: str = "scripted", capacity: Any = None,
        chunk: int = 16, before_chunk: Callable[[int], Any] | None = None,
    ) -> None:
        if isinstance(responses, (str, bytes)):
            raise TypeError("ScriptedModel responses must be a list of answers, not a single string; wrap it: [text]")
        if isinstance(chunk, bool) or not isinstance(chunk, int) or chunk < 1:
            raise ValueError(f"chunk must be a positive number of characters per streamed piece, got {chunk!r}")
        if before_chunk is not None and not callable(before_chunk):
            raise TypeError(f"before_chunk must be a function of the piece's index, got {type(before_chunk).__name__}")
        self.name = name
        self.capacity = capacity
        self.chunk = chunk
        self.before_chunk = before_chunk
        self._responses: list[ModelResponse] = [_scripted(i, r) for i, r in enumerate(responses)]
        self.requests: list[ModelRequest] = []
        self._lock = threading.Lock()

    @property
    def remaining(self) -> int:
        """How many scripted answers are left."""
        return max(0, len(self._responses) - len(self.requests))

    def complete(self, request: ModelRequest) -> ModelResponse:
        """Record ``request`` and return the next scripted answer."""
        snapshot = ModelRequest(
            system=request.system,
            messages=copy.deepcopy(list(request.messages)),
            tools=list(request.tools),
            max_tokens=request.max_tokens,
            cache=copy.deepcopy(request.cache),
        )
        with self._lock:
            index = len(self.requests)
            self.requests.append(snapshot)
        if index >= len(self._responses):
            raise ModelError(
                f"scripted model ran out of responses after {len(self._responses)} calls; "
                f"add more responses to ScriptedModel({self.name!r}) or lower max_steps",
                kind="exhausted",
                model=self.name,
            )
        return self._responses[index]

    async def acomplete(self, request: ModelRequest) -> ModelResponse:
        """Same as ``complete``; nothing here blocks."""
        return self.complete(request)

    async def astream(self, request: ModelRequest) -> AsyncIterator[str | ModelResponse]:
        """The next scripted answer streamed: its text in pieces of ``chunk`` characters (each after
        ``before_chunk(i)``), then the answer itself."""
        response = self.complete(request)
        text = response.text or ""
        for i, start in enumerate(range(0, len(text), self.chunk)):
            if self.before_chunk is not None:
                waited = self.before_chunk(i)
                if inspect.isawaitable(waited):
                    await waited
            yield text[start : start + self.chunk]
        yield response

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "scripted",
            "name": self.name,
            "responses": len(self._responses),
            "calls": len(self.requests),
            "capacity": capacity_dict(self.capacity),
        }

    def __repr__(self) -> str:
        return f"ScriptedModel(name={self.name!r}, responses={len(self._responses)}, calls={len(self.requests)})"


def _scripted(index: int, response: Any) -> ModelResponse:
    if isinstance(response, ModelResponse):
        return response
    if isinstance(response, str):
        return ModelResponse(text=response, tool_calls=[])
    if isinstance(response, Sequence) and not isinstance(response, bytes):
        calls = list(response)
        if not calls:
            raise ValueError(f"scripted response #{index} is an empty list; give a text answer or at least one tool_call(...)")
        for call in calls:
            if not isinstance(call, ToolCall):
                raise TypeError(
                    f"scripted response #{index} must hold tool_call(...) values, got {type(call).__name__}"
                )
        return ModelResponse(text=None, tool_calls=calls)
    raise TypeError(
        f"scripted response #{index} must be a string, a list of tool_call(...) or a ModelResponse, "
        f"got {type(response).__name__}"
    )
