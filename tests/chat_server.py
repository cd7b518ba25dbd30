"""A real chat-completions server on 127.0.0.1 for tests: scripted answers, recorded requests.

It runs stdlib ``http.server`` in a thread on an ephemeral port and answers
``POST /v1/chat/completions`` from a queue of scripted answers (text, tool calls, raw bodies, HTTP
errors, slow answers). Every request is recorded (path, headers, decoded JSON body) so a test can
assert what a client actually sent over the wire.

    with ChatServer() as server:
        server.reply_text("hello")
        model = OpenAICompatibleModel(server.base_url, "test-model")

A streamed answer (``reply_stream``) is sent as server-sent events over chunked transfer encoding,
one ``data:`` event per chunk; each chunk may wait for a gate (a ``threading.Event`` the test sets)
and each sets ``sent[i]`` once it is on the wire, so a test paces the stream by events, never by
sleeps. ``cut_after=n`` drops the connection after ``n`` chunks, mid-message.
"""

from __future__ import annotations

import json
import threading
from collections import deque
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True, slots=True)
class ScriptedAnswer:
    """One answer the server gives: a status, a raw body, and an optional delay before sending it."""

    status: int
    body: str
    delay: float = 0.0
    content_type: str = "application/json"


@dataclass(slots=True)
class ScriptedStream:
    """A streamed answer: ``events`` (dicts, sent as ``data:`` JSON; a ``(name, dict)`` pair is sent
    with an ``event:`` line first, as Anthropic does), then ``data: [DONE]`` when ``done``.

    ``gates[i]``, when given, is waited for before event ``i`` goes out; ``sent[i]`` is set once it
    has (``sent_at[i]`` holds the ``time.perf_counter()`` then); ``cut_after`` drops the connection
    after that many events, without the last chunk of the chunked body."""

    events: list[Any]
    done: bool = True
    gates: dict[int, threading.Event] = field(default_factory=dict)
    cut_after: int | None = None
    sent: list[threading.Event] = field(default_factory=list)
    sent_at: list[float] = field(default_factory=list)
    status: int = 200

    def __post_init__(self) -> None:
        self.sent = [threading.Event() for _ in self.events]
        self.sent_at = [0.0] * len(self.events)


def chat_chunks(pieces: Sequence[str], *, usage: dict[str, Any] | None = None, tool_calls: Sequence[dict[str, Any]] = (),
                model: str = "test-model") -> list[dict[str, Any]]:
    """Chat-completions stream chunks for text ``pieces`` (and tool calls, each sent as a head and its
    arguments in two pieces), then a ``finish_reason`` chunk and, with ``usage``, the usage chunk."""
    head = {"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1, "model": model}
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **({"usage": None} if usage else {})}
    out = [chunk({"role": "assistant", "content": ""})]
    out += [chunk({"content": p}) for p in pieces]
    for i, call in enumerate(tool_calls):
        arguments = call["function"]["arguments"]
        half = len(arguments) // 2
        out.append(chunk({"tool_calls": [{"index": i, "id": call["id"], "type": "function", "function": {"name": call["function"]["name"], "arguments": arguments[:half]}}]}))
        out.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": arguments[half:]}}]}))
    out.append(chunk({}, "tool_calls" if tool_calls else "stop"))
    if usage:
        out.append({**head, "choices": [], "usage": usage})
    return out


def message_events(pieces: Sequence[str], *, usage: dict[str, Any], output_tokens: int, tool_use: dict[str, Any] | None = None,
                   model: str = "claude-test") -> list[Any]:
    """Anthropic Messages stream events for text ``pieces`` (and one ``tool_use`` block, its input
    JSON in two pieces): ``usage`` is ``message_start``'s, ``output_tokens`` ``message_delta``'s."""
    start = {"type": "message_start", "message": {"id": "msg_test", "type": "message", "role": "assistant", "model": model, "content": [],
             "stop_reason": None, "stop_sequence": None, "usage": {**usage, "output_tokens": 1}}}
    out: list[Any] = [("message_start", start), ("ping", {"type": "ping"})]
    out.append(("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}))
    out += [("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}}) for p in pieces]
    out.append(("content_block_stop", {"type": "content_block_stop", "index": 0}))
    if tool_use is not None:
        raw = json.dumps(tool_use["input"])
        out.append(("content_block_start", {"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": tool_use["id"], "name": tool_use["name"], "input": {}}}))
        for part in (raw[: len(raw) // 2], raw[len(raw) // 2 :]):
            out.append(("content_block_delta", {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": part}}))
        out.append(("content_block_stop", {"type": "content_block_stop", "index": 1}))
    stop = "tool_use" if tool_use is not None else "end_turn"
    out.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": output_tokens}}))
    out.append(("message_stop", {"type": "message_stop"}))
    return out


@dataclass(frozen=True, slots=True)
class ReceivedRequest:
    """What the server saw: the path, the headers (lower-cased names) and the JSON body."""

    path: str
    headers: dict[str, str]
    body: Any = field(default=None)


def completion(message: dict[str, Any], *, model: str = "test-model") -> dict[str, Any]:
    """A minimal chat-completions body around one assistant message."""
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def wire_tool_call(name: str | None, arguments: str, *, id: str = "call_srv_1") -> dict[str, Any]:
    """A tool call exactly as a provider sends it: ``arguments`` is a JSON *string* (maybe broken)."""
    function: dict[str, Any] = {"arguments": arguments}
    if name is not None:
        function["name"] = name
    return {"id": id, "type": "function", "function": function}


class ChatServer:
    """The server; use as a context manager or call ``start()``/``stop()``."""

    def __init__(self, *, route: str = "/v1/chat/completions") -> None:
        self.route = route  # the one path answered (another provider's format lives at another path)
        self.received: list[ReceivedRequest] = []
        self._answers: deque[ScriptedAnswer | ScriptedStream] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # scripting ------------------------------------------------------------------------------------

    def reply(self, answer: ScriptedAnswer) -> ChatServer:
        with self._lock:
            self._answers.append(answer)
        return self

    def reply_json(self, body: Any, *, status: int = 200, delay: float = 0.0) -> ChatServer:
        return self.reply(ScriptedAnswer(status=status, body=json.dumps(body), delay=delay))

    def reply_text(self, text: str, *, delay: float = 0.0) -> ChatServer:
        return self.reply_json(completion({"content": text}), delay=delay)

    def reply_tool_calls(self, calls: list[dict[str, Any]], *, content: str | None = None) -> ChatServer:
        return self.reply_json(completion({"content": content, "tool_calls": calls}))

    def reply_stream(self, events: list[Any], **options: Any) -> ScriptedStream:
        """Queue a streamed answer (see ``ScriptedStream``); returns it, to pace and watch it."""
        stream = ScriptedStream(list(events), **options)
        with self._lock:
            self._answers.append(stream)  # type: ignore[arg-type]
        return stream

    def reply_status(self, status: int, body: str) -> ChatServer:
        return self.reply(ScriptedAnswer(status=status, body=body, content_type="text/plain"))

    # lifecycle ------------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("ChatServer is not started")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> ChatServer:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        # A short poll keeps shutdown() fast (the default 0.5 s would dominate every test's teardown).
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="chat-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes slow answers so they end promptly
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # used by the handler --------------------------------------------------------------------------

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        """The request handler (a server of another kind answers in its own way)."""
        return _handler_for(self)

    def _record(self, request: ReceivedRequest) -> ScriptedAnswer | ScriptedStream:
        with self._lock:
            self.received.append(request)
            if self._answers:
                return self._answers.popleft()
        return ScriptedAnswer(status=500, body='{"error": "chat_server: no scripted answer left"}')


def _handler_for(server: ChatServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body: Any = json.loads(raw) if raw else None
            except json.JSONDecodeError:
                body = raw.decode("utf-8", "replace")
            headers = {k.lower(): v for k, v in self.headers.items()}
            answer = server._record(ReceivedRequest(path=self.path, headers=headers, body=body))
            if self.path != server.route:
                answer = ScriptedAnswer(status=404, body=f"no route {self.path}", content_type="text/plain")
            if isinstance(answer, ScriptedStream):
                self._stream(answer)
                return
            if answer.delay and server._stopping.wait(answer.delay):
                return
            data = answer.body.encode("utf-8")
            try:
                self.send_response(answer.status)
                self.send_header("Content-Type", answer.content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test); nothing left to tell it

        def _stream(self, stream: ScriptedStream) -> None:
            try:
                self.send_response(stream.status)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                self.wfile.flush()
                for i, event in enumerate(stream.events):
                    gate = stream.gates.get(i)
                    while gate is not None and not gate.wait(0.05):
                        if server._stopping.is_set():
                            return
                    if stream.cut_after is not None and i >= stream.cut_after:
                        self.close_connection = True
                        self.connection.shutdown(2)  # mid-body: the client sees an incomplete chunked read
                        return
                    name, data = event if isinstance(event, tuple) else (None, event)
                    text = (f"event: {name}\n" if name else "") + f"data: {json.dumps(data)}\n\n"
                    self._chunk(text.encode("utf-8"))
                    stream.sent_at[i] = time.perf_counter()
                    stream.sent[i].set()
                if stream.done:
                    self._chunk(b"data: [DONE]\n\n")
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError, OSError):
                pass  # the client stopped reading

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode("ascii") + data + b"\r\n")
            self.wfile.flush()

        def log_message(self, format: str, *args: Any) -> None:
            return  # keep test output clean

    return Handler
