"""Streamed answers, assembled: the chunks a provider streams, read one by one into the answer the
same call made without streaming would have returned.

- ``ChatStream`` reads chat-completions chunks (``stream: true`` with ``stream_options:
  {"include_usage": true}``): each chunk's ``choices[0].delta`` carries a piece of the text or of
  a tool call (its ``index``, then ``id`` and ``function.name`` once, ``function.arguments`` in
  pieces), ``finish_reason`` comes on the last content chunk, and one more chunk with empty
  ``choices`` carries the whole request's ``usage``.
- ``MessageStream`` reads Anthropic's Messages events: ``message_start`` (the message with empty
  content and the input usage, cache reads and writes included), ``content_block_start`` /
  ``content_block_delta`` (``text_delta`` or ``input_json_delta``) / ``content_block_stop`` per
  block, ``message_delta`` (``stop_reason`` and the output usage, cumulative) and ``message_stop``.

Both take chunks as decoded JSON (the adapters' SSE ``data:`` lines) or as a provider SDK's
objects (read by attribute, never converted chunk by chunk: a chunk costs a few attribute reads).
``feed`` returns the text the chunk added (``None`` when it added none); ``completion()`` is the
answer in the provider's non-streamed shape (a ``chat.completion`` / a ``message``), which the
non-streamed parsers (``parse_chat_completion``, ``parse_message``) read, so a streamed answer's text, tool calls and usage are exactly those of
the same answer not streamed. ``started`` says whether any text or tool call arrived (time to
first token), ``done`` whether the stream reached its end.
"""

from __future__ import annotations

import json
from typing import Any



def field(obj: Any, key: str) -> Any:
    """``obj[key]`` of a dict, ``obj.key`` of an SDK object, ``None`` when absent."""
    return obj.get(key) if type(obj) is dict else getattr(obj, key, None)


def plain(value: Any) -> Any:
    """A small SDK object (usage, a message head) as plain data; dicts and scalars as they are."""
    if value is None or isinstance(value, (dict, str, int, float, bool, list)):
        return value
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            return dump(mode="json", exclude_none=False)
        except TypeError:
            return dump()
    to_dict = getattr(value, "to_dict", None)
    return to_dict() if callable(to_dict) else value


class ChatStream:
    """A chat-completions stream being read (see the module docstring)."""

    kind = "openai"

    def __init__(self) -> None:
        self.head: dict[str, Any] = {}
        self.parts: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish_reason: str | None = None
        self.usage: Any = None
        self.chunks = 0
        self.started = False
        self.done = False

    def feed(self, chunk: Any) -> str | None:
        self.chunks += 1
        if not self.head:
            self.head = {k: field(chunk, k) for k in ("id", "created", "model", "system_fingerprint")}
        usage = field(chunk, "usage")
        if usage is not None:
            self.usage = usage
        choices = field(chunk, "choices")
        if not choices:
            return None
        choice = choices[0]
        finish = field(choice, "finish_reason")
        if finish:
            self.finish_reason, self.done = finish, True
        delta = field(choice, "delta")
        if delta is None:
            return None
        calls = field(delta, "tool_calls")
        if calls:
            self.started = True
            for call in calls:
                self._call_piece(call)
        text = field(delta, "content")
        if text:
            self.started = True
            self.parts.append(text)
            return text  # type: ignore[no-any-return]
        return None

    def _call_piece(self, piece: Any) -> None:
        index = field(piece, "index")
        slot = self.calls.get(index if isinstance(index, int) else len(self.calls))
        if slot is None:
            slot = self.calls[index if isinstance(index, int) else len(self.calls)] = {"id": None, "type": "function", "name": [], "arguments": []}
        if field(piece, "id"):
            slot["id"] = field(piece, "id")
        function = field(piece, "function")
        if function is not None:
            if field(function, "name"):
                slot["name"].append(field(function, "name"))
            if field(function, "arguments"):
                slot["arguments"].append(field(function, "arguments"))

    @property
    def text(self) -> str:
        return "".join(self.parts)

    def completion(self) -> dict[str, Any]:
        """The answer as the same request without streaming would have returned it."""
        message: dict[str, Any] = {"role": "assistant", "content": self.text if self.parts else None}  # parse_chat_completion reads it
        if self.calls:
            message["tool_calls"] = [
                {"id": c["id"], "type": "function", "function": {"name": "".join(c["name"]), "arguments": "".join(c["arguments"])}}
                for _i, c in sorted(self.calls.items())
            ]
        head = {k: v for k, v in self.head.items() if v is not None}
        return {
            **head, "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": self.finish_reason}],
            "usage": plain(self.usage),
        }


class MessageStream:
    """An Anthropic Messages stream being read (see the module docstring)."""

    kind = "anthropic"

    def __init__(self) -> None:
        self.message: dict[str, Any] = {}
        self.usage: dict[str, Any] = {}
        self.blocks: dict[int, dict[str, Any]] = {}
        self.parts: list[str] = []  # every text delta, in order (the text so far)
        self.error: Any = None
        self.chunks = 0
        self.started = False
        self.done = False

    def feed(self, event: Any) -> str | None:
        self.chunks += 1
        kind = field(event, "type")
        if kind == "content_block_delta":
            delta = field(event, "delta")
            block = self.blocks.get(field(event, "index"))
            if block is None:
                return None
            dkind = field(delta, "type")
            if dkind == "text_delta":
                text = field(delta, "text")
                if text:
                    self.started = True
                    block["parts"].append(text)
                    self.parts.append(text)
                    return text  # type: ignore[no-any-return]
            elif dkind == "input_json_delta":
                piece = field(delta, "partial_json")
                if piece:
                    self.started = True
                    block["json"].append(piece)
            return None
        if kind == "message_start":
            message = plain(field(event, "message")) or {}
            self.message = {k: v for k, v in message.items() if k not in ("content", "usage")} if isinstance(message, dict) else {}
            self._usage(message.get("usage") if isinstance(message, dict) else None)
        elif kind == "content_block_start":
            block = plain(field(event, "content_block")) or {}
            index = field(event, "index")
            entry: dict[str, Any] = {"block": dict(block) if isinstance(block, dict) else {}, "parts": [], "json": []}
            first = entry["block"].get("text")
            self.blocks[index if isinstance(index, int) else len(self.blocks)] = entry
            if entry["block"].get("type") == "tool_use":
                self.started = True
            if isinstance(first, str) and first:
                self.started = True
                entry["parts"].append(first)
                self.parts.append(first)
                return first
        elif kind == "message_delta":
            delta = plain(field(event, "delta")) or {}
            if isinstance(delta, dict):
                self.message.update({k: v for k, v in delta.items() if v is not None})
            self._usage(plain(field(event, "usage")))
        elif kind == "message_stop":
            self.done = True
        elif kind == "error":
            self.error = plain(field(event, "error"))
        return None

    def _usage(self, usage: Any) -> None:
        """Merge usage: ``message_start`` gives the input side, ``message_delta`` the (cumulative)
        output and, from newer servers, the input side again; a value sent as null changes nothing."""
        usage = plain(usage)
        if isinstance(usage, dict):
            self.usage.update({k: v for k, v in usage.items() if v is not None})

    @property
    def text(self) -> str:
        return "".join(self.parts)

    def completion(self) -> dict[str, Any]:
        """The answer as the same request without streaming would have returned it."""
        content = []
        for _i, entry in sorted(self.blocks.items()):
            block = dict(entry["block"])
            if block.get("type") == "text":
                block["text"] = "".join(entry["parts"])
            elif block.get("type") == "tool_use":
                raw = "".join(entry["json"])
                try:
                    block["input"] = json.loads(raw) if raw.strip() else (block.get("input") or {})
                except json.JSONDecodeError:
                    block["input"] = raw  # parse_message says the input is not an object
            content.append(block)
        return {**self.message, "content": content, "usage": dict(self.usage)}


def assembler_for(chunk: Any) -> ChatStream | MessageStream:
    """The assembler for a stream whose first chunk is ``chunk`` (an Anthropic event has a ``type``
    among the Messages events; anything else is read as a chat-completions chunk)."""
    kind = field(chunk, "type")
    if isinstance(kind, str) and (kind.startswith(("message_", "content_block_")) or kind in ("ping", "error")):
        return MessageStream()
    return ChatStream()


__all__ = ["ChatStream", "MessageStream", "assembler_for", "field", "plain"]
