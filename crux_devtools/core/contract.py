"""The model-provider contract: what the library sends a model (``ModelRequest``), what it expects
back (``ModelResponse`` with ``ToolCall``s), and ``Model``, the protocol an adapter satisfies.

A provider adapter is any object with ``complete(request) -> ModelResponse``; everything else it may
offer is an optional hook the library looks up with ``getattr`` and uses when present (listed on
``Model``). docs/models.md tells how to write one. This module needs nothing but the standard
library and ``Tool``; the adapters live in ``run/models/`` (``scripted``, ``openai``, ``anthropic``).
"""

from __future__ import annotations

import copy
import itertools
import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from crux_devtools.shapes import SentRequestDict

from .tools import Tool

_call_ids = itertools.count(1)
_call_ids_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool the model asks to run: ``arguments`` are already decoded from JSON."""

    id: str
    name: str
    arguments: dict[str, Any]

    def to_message(self) -> dict[str, Any]:
        """This call in the OpenAI ``tool_calls`` shape, as an assistant message carries it."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": json.dumps(self.arguments, ensure_ascii=False)},
        }

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "arguments": copy.deepcopy(self.arguments)}


def _next_call_id() -> str:
    with _call_ids_lock:
        return f"call_{next(_call_ids)}"


def tool_call(name: str, arguments: Mapping[str, Any] | None = None, *, id: str | None = None) -> ToolCall:
    """Build a ``ToolCall``; without ``id`` it gets the next ``call_<n>`` of this process."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"tool_call name must be a non-empty string, got {name!r}")
    if arguments is not None and not isinstance(arguments, Mapping):
        raise TypeError(f"tool_call {name!r}: arguments must be a dict or None, got {type(arguments).__name__}")
    if id is not None and (not isinstance(id, str) or not id):
        raise ValueError(f"tool_call {name!r}: id must be a non-empty string or None, got {id!r}")
    return ToolCall(id=id or _next_call_id(), name=name, arguments=dict(arguments or {}))


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """What one provider call sends: system text, chat messages (OpenAI format) and offered tools.

    ``cache`` is the planned prompt-cache placement (``plan/cache_plan.py``: ``{"breakpoints":
    [{"after", "offset", "tokens", "ttl"}], "key"}``) when the model's profile asks for it, else None:
    then the request, its dict and its wire bodies are exactly what they are without caching."""

    system: str
    messages: list[dict[str, Any]]
    tools: list[Tool]
    max_tokens: int | None = None
    cache: dict[str, Any] | None = None

    def to_dict(self) -> SentRequestDict:
        """The wire shape: messages as JSON values, each tool as its name, description and JSON
        schema; ``cache`` only when a placement was planned."""
        out: SentRequestDict = {
            "system": self.system,
            "messages": [jsonable_message(m) for m in self.messages],
            "tools": [t.to_dict() for t in self.tools],
            "max_tokens": self.max_tokens,
        }
        if self.cache is not None:
            out["cache"] = copy.deepcopy(self.cache)  # type: ignore[typeddict-item]  # checked by cache_plan
        return out

    def to_openai(self, model: str | None = None) -> dict[str, Any]:
        """This request as an OpenAI chat-completions body (``client.chat.completions.create(**...)``):
        the system text as the first message, tools as ``{"type": "function", "function": ...}``, the
        ``tools`` and ``max_tokens`` keys only when there are any, ``model`` only when given, and
        ``prompt_cache_key`` (the cache plan's key) only when a cache placement was planned. When the
        plan names a ``breakpoint_field`` (the model's profile says it takes one), the system message's
        content is text parts cut at the system breakpoints, the part before each cut carrying
        ``{field: {"mode": "explicit"}}``; joined, the parts are the system text exactly."""
        body: dict[str, Any] = {} if model is None else {"model": model}
        body["messages"] = [{"role": "system", "content": self._openai_system()}, *(jsonable_message(m) for m in self.messages)]
        if self.tools:
            body["tools"] = [t.json_schema() for t in self.tools]
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        if self.cache is not None and self.cache.get("key"):
            body["prompt_cache_key"] = self.cache["key"]
        return body

    def _openai_system(self) -> str | list[dict[str, Any]]:
        field = (self.cache or {}).get("breakpoint_field")
        points = [b for b in (self.cache or {}).get("breakpoints") or () if b.get("after") == "system"]
        if not (field and points and self.system):
            return self.system
        return _text_parts(self.system, points, lambda _point: {field: {"mode": "explicit"}})

    def to_anthropic(self, model: str | None = None, *, default_max_tokens: int = 4096) -> dict[str, Any]:
        """This request as an Anthropic Messages body (``client.messages.create(**...)``): ``system``
        on its own, tool calls and results as ``tool_use``/``tool_result`` blocks, tools as ``{"name",
        "description", "input_schema"}``. The Messages API requires ``max_tokens``: without one
        planned, ``default_max_tokens`` is sent. With a cache placement, ``system`` is a list of text
        blocks split at the breakpoints' offsets, ``cache_control`` on the block before each
        breakpoint (and on the last tool for one after the tools)."""
        return messages_body(self, model, default_max_tokens)


# -- the Anthropic Messages wire shape (``ModelRequest.to_anthropic``; the adapter sends it) --------
def messages_body(request: ModelRequest, model: str | None, default_max_tokens: int = 4096) -> dict[str, Any]:
    """``request`` as a Messages API body (see ``ModelRequest.to_anthropic``)."""
    system_parts = [request.system] if request.system else []
    messages: list[dict[str, Any]] = []
    for raw in request.messages:
        message = jsonable_message(raw)
        role = message.get("role")
        if role == "system":  # the Messages API has no system turn: it joins the system text
            if isinstance(message.get("content"), str) and message["content"]:
                system_parts.append(message["content"])
            continue
        blocks = _blocks(message)
        wire_role = "assistant" if role == "assistant" else "user"
        if messages and messages[-1]["role"] == wire_role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": wire_role, "content": blocks})
    body: dict[str, Any] = {} if model is None else {"model": model}
    breakpoints = list((request.cache or {}).get("breakpoints") or [])
    if system_parts:
        system = "\n\n".join(system_parts)
        offsets = [b for b in breakpoints if b.get("after") == "system"]
        body["system"] = _system_blocks(system, offsets) if offsets else system
    body["messages"] = messages
    if request.tools:
        body["tools"] = [{"name": t.name, "description": t.description, "input_schema": t.to_dict()["parameters"]} for t in request.tools]
        after_tools = next((b for b in breakpoints if b.get("after") == "tools"), None)
        if after_tools is not None:
            body["tools"][-1]["cache_control"] = _cache_control(after_tools)
    body["max_tokens"] = request.max_tokens if request.max_tokens is not None else default_max_tokens
    return body


def _cache_control(breakpoint: Mapping[str, Any]) -> dict[str, Any]:
    """Anthropic's mark of a breakpoint: the 5-minute lifetime is the default and is not spelled out."""
    ttl = breakpoint.get("ttl")
    return {"type": "ephemeral", "ttl": ttl} if ttl == "1h" else {"type": "ephemeral"}


def _system_blocks(system: str, breakpoints: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The system text as text blocks cut at each breakpoint's offset, the block before each cut
    carrying ``cache_control``; joined, the blocks are the system text exactly."""
    return _text_parts(system, breakpoints, lambda point: {"cache_control": _cache_control(point)})


def _text_parts(system: str, breakpoints: Any, mark: Any) -> list[dict[str, Any]]:
    """``system`` as ``{"type": "text"}`` parts cut at each breakpoint's offset, the part before each
    cut carrying ``mark(breakpoint)`` (both providers' wire shapes mark a cut this way)."""
    blocks: list[dict[str, Any]] = []
    start = 0
    for point in sorted(breakpoints, key=lambda b: int(b.get("offset") or 0)):
        offset = min(max(int(point.get("offset") or 0), start), len(system))
        if offset > start:
            blocks.append({"type": "text", "text": system[start:offset], **mark(point)})
            start = offset
    if start < len(system):
        blocks.append({"type": "text", "text": system[start:]})
    return blocks


def _blocks(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One OpenAI-shaped message's content as Messages API content blocks."""
    content = message.get("content")
    if message.get("role") == "tool":
        result = content if isinstance(content, (str, list)) else json.dumps(content, ensure_ascii=False)
        return [{"type": "tool_result", "tool_use_id": str(message.get("tool_call_id") or ""), "content": result}]
    blocks: list[dict[str, Any]] = []
    if isinstance(content, str):
        if content:
            blocks.append({"type": "text", "text": content})
    elif isinstance(content, list):
        blocks.extend(p if isinstance(p, dict) else {"type": "text", "text": str(p)} for p in content)
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        arguments = function.get("arguments")
        try:
            decoded = json.loads(arguments) if isinstance(arguments, str) and arguments.strip() else (arguments or {})
        except json.JSONDecodeError:
            decoded = {"_raw": arguments}
        blocks.append({"type": "tool_use", "id": call.get("id"), "name": function.get("name"), "input": decoded})
    return blocks


@dataclass(frozen=True, slots=True)
class ModelResponse:
    """A model's answer: text, tool calls, or (rarely) both.

    ``usage`` is what the provider reported, as ``{"input_tokens", "output_tokens"}``, or ``None``
    when it reported nothing (a scripted model reports nothing: it has no tokenizer of its own).
    """

    text: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: dict[str, int] | None = None

    def to_message(self) -> dict[str, Any]:
        """The assistant message to append to the conversation before feeding tool results back."""
        message: dict[str, Any] = {"role": "assistant", "content": self.text}
        if self.tool_calls:
            message["tool_calls"] = [c.to_message() for c in self.tool_calls]
        return message

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "tool_calls": [c.to_dict() for c in self.tool_calls], "usage": dict(self.usage) if self.usage else None}


@runtime_checkable
class Model(Protocol):
    """A model-provider adapter: the one extension point for talking to a new provider.

    Required, the only method the library cannot do without:

    ``complete(request: ModelRequest) -> ModelResponse``
        Send ``request`` and return the answer. ``generate``/``agenerate`` (and an ``Agent``, and the
        inspector's Run) call it once per step when the adapter has no ``acomplete``; a summary rung
        (``summarizable(model=...)``) calls it, in the same way, to prepare a summary. Return text,
        tool calls, or both, and ``usage`` when the provider reports it. Raise ``ModelError`` with
        the ``kind`` that says what happened for every fault on the way to or from the provider
        (any other exception also ends the run with a step error, but says less).

    Optional hooks, each used only when the adapter has it (leave out what you do not need):

    ``async acomplete(request: ModelRequest) -> ModelResponse``
        Preferred over ``complete`` wherever the library is already async (every ``generate`` step,
        every summary it prepares), so a network adapter does not block the event loop. Same
        contract as ``complete``.
    ``astream(request: ModelRequest) -> AsyncIterator[str | ModelResponse]``
        The answer streamed: an async iterator of the text's pieces (``str``) as they arrive,
        ending with the whole ``ModelResponse`` (the one ``acomplete`` would have returned, usage
        included). ``generate(..., on_text=...)`` streams every step through it; without
        ``on_text`` it is never called. A fault, also one after some pieces, is a ``ModelError``.
    ``name: str``
        The model's name: shown in receipts, run records and the inspector; picks the tiktoken
        encoding when no ``counter=`` and no ``count_tokens`` is given; keys the planning epochs
        and the summary artifacts; is what a ``capacity_resolver`` is asked about. Without it (or
        when it is not a ``str``) the model is anonymous: conservative counting, name ``None``.
    ``capacity: ModelCapacityProfile | None``
        The model's context window and default output reserve, read every time a request is
        planned (``preview``, ``generate``, the inspector). It wins over any resolver. Anything
        other than a ``ModelCapacityProfile`` or ``None`` is a ``TypeError`` at planning time.
    ``capacity_resolver: Callable[[str], ModelCapacityProfile | None]``
        Asked with ``name`` when ``capacity`` is ``None`` and the caller passed no
        ``capacity_resolver=``; returning ``None`` falls back to the conservative profile.
    ``count_tokens(text: str) -> int``
        The provider's own token count of one text. When the caller passes no ``counter=``, the
        planner counts every text of the request with it (each distinct text once per planning
        call) and reports the counts as exact. It must return an ``int >= 0`` (else ``TypeError``).

    An adapter with only ``acomplete`` also runs (every path that calls a model is async), but it
    is not a ``Model`` to a type checker or ``isinstance``: give it ``complete`` too.

    Not called by the library: ``to_dict()`` (the built-in adapters have one for display, never
    showing a key) and ``__repr__``. ``isinstance(x, Model)`` checks only that ``complete`` exists.
    """

    def complete(self, request: ModelRequest) -> ModelResponse: ...


OPTIONAL_HOOKS: tuple[str, ...] = ("acomplete", "astream", "name", "capacity", "capacity_resolver", "count_tokens")
"""The optional hooks of ``Model``, in the order its docstring lists them (tests keep the list true)."""


async def acall(model: Any, request: ModelRequest) -> ModelResponse:
    """Ask ``model`` for an answer from async code: its ``acomplete`` when it has one, else ``complete``."""
    acomplete = getattr(model, "acomplete", None)
    if callable(acomplete):
        response: ModelResponse = await acomplete(request)
        return response
    result: ModelResponse = model.complete(request)
    return result


def is_model(model: Any) -> bool:
    """Whether ``model`` can be called as a model (it has ``complete`` or ``acomplete``)."""
    return callable(getattr(model, "complete", None)) or callable(getattr(model, "acomplete", None))


def capacity_dict(capacity: Any) -> Any:
    if capacity is None:
        return None
    to_dict = getattr(capacity, "to_dict", None)
    return to_dict() if callable(to_dict) else repr(capacity)


def jsonable_message(message: Mapping[str, Any]) -> dict[str, Any]:
    """A message with ``ToolCall`` objects and non-text content turned into wire-format values."""
    out: dict[str, Any] = {}
    for key, value in message.items():
        if key == "tool_calls" and value is not None:
            out[key] = [c.to_message() if isinstance(c, ToolCall) else c for c in value]
        elif key == "content" and not (value is None or isinstance(value, (str, list))):
            out[key] = json.dumps(value, ensure_ascii=False, default=str)
        else:
            out[key] = value
    return out
