"""A fake model provider with real prompt-cache semantics, on 127.0.0.1, for tests and benchmarks.

It speaks both wire formats (``POST /v1/messages``, Anthropic's Messages API, and ``POST
/v1/chat/completions``, OpenAI's chat completions), answers from a script (text, or tool calls
that an agent loop runs), and keeps a cache the way the providers describe theirs, so that a claim
about caching is checked against what this server counted, not against our own arithmetic:

- Anthropic: the request is read in cache order (tools, then ``system`` blocks, then message
  content blocks); every block carrying ``cache_control`` is a breakpoint (more than 4 is HTTP 400,
  as the API answers). A breakpoint's prefix is cached only when it reaches ``min_tokens``. The
  longest breakpoint prefix held and not expired is read (its lifetime starts again); every longer
  breakpoint prefix not yet held is written with its ``ttl`` (``"5m"`` default or ``"1h"``). Usage
  reports ``input_tokens`` (neither read nor written), ``cache_read_input_tokens``,
  ``cache_creation_input_tokens`` and ``cache_creation.ephemeral_5m_input_tokens`` /
  ``ephemeral_1h_input_tokens``.
- OpenAI: no breakpoints; the longest prefix (in tokens, from ``min_tokens`` up in steps of
  ``openai_step``) shared with an earlier request of the same ``prompt_cache_key`` (and model) is
  read and reported in ``prompt_tokens_details.cached_tokens``; with ``bills_writes`` the new part
  is reported as ``cache_write_tokens``.

Tokens are counted with tiktoken's ``cl100k_base`` over the server's own serialisation of each
block (a tool as its JSON, a text block as its text), independently of the library's counts.
``clock`` (seconds) may be replaced, so a test moves time instead of waiting for it.

    with CacheProvider(min_tokens=1024) as provider:
        model = AnthropicModel("claude-test", base_url=provider.root_url, api_key="k")
        ...
        provider.calls[-1].read   # what this server counted as read from its cache
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from chat_server import ChatServer
from crux_devtools.core.tokens import default_counter

TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}


@dataclass(frozen=True, slots=True)
class CacheCall:
    """What the server counted for one request."""

    wire: str  # "anthropic" | "openai"
    total: int  # input tokens of the whole request
    read: int
    written: int
    written_1h: int
    breakpoints: tuple[int, ...]  # the prefix tokens at each breakpoint, in request order
    body: Any = field(default=None, repr=False)


@dataclass
class _Entry:
    expires: float
    ttl: str


class CacheProvider(ChatServer):
    """The server; use as a context manager or call ``start()``/``stop()`` (those of ``ChatServer``)."""

    def __init__(
        self,
        *,
        min_tokens: int = 1024,
        openai_step: int = 128,
        bills_writes: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(route="/v1/messages")
        self.min_tokens = min_tokens
        self.openai_step = openai_step
        self.bills_writes = bills_writes
        self.clock = clock
        self.calls: list[CacheCall] = []
        self._script: deque[Any] = deque()
        self._entries: dict[str, _Entry] = {}
        self._openai: dict[tuple[str, str], list[list[int]]] = {}
        self._counter = default_counter()

    # scripting ------------------------------------------------------------------------------------

    def reply_text(self, text: str) -> CacheProvider:
        self._script.append(text)
        return self

    def reply_tool_call(self, name: str, arguments: dict[str, Any]) -> CacheProvider:
        self._script.append((name, arguments))
        return self

    @property
    def read_tokens(self) -> int:
        return sum(c.read for c in self.calls)

    @property
    def written_tokens(self) -> int:
        return sum(c.written for c in self.calls)

    # the cache ------------------------------------------------------------------------------------

    def _tokens(self, text: str) -> int:
        return int(self._counter.count(text))

    def anthropic(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Account one Messages request: (HTTP status, usage or error body)."""
        blocks: list[tuple[str, dict[str, Any] | None]] = []  # (serialised text, cache_control)
        for tool in body.get("tools") or []:
            plain = {k: v for k, v in tool.items() if k != "cache_control"}
            blocks.append((json.dumps(plain, sort_keys=True, ensure_ascii=False), tool.get("cache_control")))
        system = body.get("system")
        if isinstance(system, str):
            blocks.append((system, None))
        elif isinstance(system, list):
            blocks.extend((str(b.get("text", "")), b.get("cache_control")) for b in system)
        for message in body.get("messages") or []:
            content = message.get("content")
            if isinstance(content, str):
                blocks.append((f"{message.get('role')}:{content}", None))
                continue
            for block in content or []:
                plain = {k: v for k, v in block.items() if k != "cache_control"}
                blocks.append((f"{message.get('role')}:" + json.dumps(plain, sort_keys=True, ensure_ascii=False), block.get("cache_control")))
        marks = [i for i, (_, control) in enumerate(blocks) if control]
        if len(marks) > 4:
            return 400, {"type": "error", "error": {"type": "invalid_request_error", "message": f"A maximum of 4 blocks with cache_control may be provided. Found {len(marks)}."}}
        model = str(body.get("model"))
        digest = hashlib.sha256(model.encode())
        prefix_tokens: list[int] = []
        keys: list[str] = []
        running = 0
        for text, _control in blocks:
            digest.update(b"\x00" + text.encode("utf-8"))
            running += self._tokens(text)
            prefix_tokens.append(running)
            keys.append(digest.hexdigest())
        total = running
        now = self.clock()
        read = 0
        for i in reversed(marks):  # the longest breakpoint prefix held
            entry = self._entries.get(keys[i])
            if entry is not None and entry.expires > now and prefix_tokens[i] >= self.min_tokens:
                read = prefix_tokens[i]
                entry.expires = now + TTL_SECONDS[entry.ttl]
                break
        written = written_1h = 0
        covered = read
        for i in marks:
            if prefix_tokens[i] <= covered or prefix_tokens[i] < self.min_tokens:
                continue
            ttl = str((blocks[i][1] or {}).get("ttl") or "5m")
            if ttl not in TTL_SECONDS:
                return 400, {"type": "error", "error": {"type": "invalid_request_error", "message": f"cache_control.ttl must be 5m or 1h, got {ttl!r}"}}
            entry = self._entries.get(keys[i])
            if entry is None or entry.expires <= now:
                self._entries[keys[i]] = _Entry(now + TTL_SECONDS[ttl], ttl)
            part = prefix_tokens[i] - covered
            written += part
            written_1h += part if ttl == "1h" else 0
            covered = prefix_tokens[i]
        self.calls.append(CacheCall("anthropic", total, read, written, written_1h, tuple(prefix_tokens[i] for i in marks), body))
        return 200, {
            "input_tokens": total - read - written, "output_tokens": 1,
            "cache_read_input_tokens": read, "cache_creation_input_tokens": written,
            "cache_creation": {"ephemeral_5m_input_tokens": written - written_1h, "ephemeral_1h_input_tokens": written_1h},
        }

    def openai(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Account one chat-completions request: (HTTP status, usage)."""
        pieces = [json.dumps(t, sort_keys=True, ensure_ascii=False) for t in body.get("tools") or []]
        pieces += [f"{m.get('role')}:" + (m["content"] if isinstance(m.get("content"), str) else json.dumps(m.get("content"), sort_keys=True)) for m in body.get("messages") or []]
        tokens = list(self._counter._load().encode_ordinary("".join(pieces)))
        key = (str(body.get("model")), str(body.get("prompt_cache_key") or ""))
        seen = self._openai.setdefault(key, [])
        best = 0
        for earlier in seen:
            common = 0
            for a, b in zip(earlier, tokens):
                if a != b:
                    break
                common += 1
            best = max(best, common)
        read = 0 if best < self.min_tokens else self.min_tokens + (best - self.min_tokens) // self.openai_step * self.openai_step
        seen.append(tokens)
        written = max(0, len(tokens) - read) if self.bills_writes and len(tokens) >= self.min_tokens else 0
        self.calls.append(CacheCall("openai", len(tokens), read, written, 0, (), body))
        details: dict[str, int] = {"cached_tokens": read}
        if self.bills_writes:
            details["cache_write_tokens"] = written
        return 200, {"prompt_tokens": len(tokens), "completion_tokens": 1, "total_tokens": len(tokens) + 1, "prompt_tokens_details": details}

    def _next_reply(self) -> Any:
        return self._script.popleft() if self._script else "done"

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        return _handler_for(self)

    def answer(self, path: str, body: Any) -> tuple[int, dict[str, Any]]:
        """The whole answer to one POST: accounting, then the scripted reply in the path's format."""
        with self._lock:
            if not isinstance(body, dict):
                return 400, {"error": "body must be a JSON object"}
            if path == "/v1/messages":
                status, usage = self.anthropic(body)
                if status != 200:
                    return status, usage
                reply = self._next_reply()
                if isinstance(reply, tuple):
                    content = [{"type": "tool_use", "id": f"toolu_{len(self.calls)}", "name": reply[0], "input": reply[1]}]
                    stop = "tool_use"
                else:
                    content, stop = [{"type": "text", "text": reply}], "end_turn"
                return 200, {"id": f"msg_{len(self.calls)}", "type": "message", "role": "assistant", "model": body.get("model"),
                             "content": content, "stop_reason": stop, "usage": usage}
            if path == "/v1/chat/completions":
                status, usage = self.openai(body)
                reply = self._next_reply()
                if isinstance(reply, tuple):
                    message = {"role": "assistant", "content": None, "tool_calls": [
                        {"id": f"call_{len(self.calls)}", "type": "function", "function": {"name": reply[0], "arguments": json.dumps(reply[1])}}]}
                else:
                    message = {"role": "assistant", "content": reply}
                return 200, {"id": f"chatcmpl-{len(self.calls)}", "object": "chat.completion", "model": body.get("model"),
                             "choices": [{"index": 0, "message": message, "finish_reason": "stop"}], "usage": usage}
            return 404, {"error": f"no route {path}"}


def _handler_for(provider: CacheProvider) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body: Any = json.loads(raw) if raw else None
            except json.JSONDecodeError:
                body = None
            status, answer = provider.answer(self.path, body)
            data = json.dumps(answer).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler
