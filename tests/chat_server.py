"""A real chat-completions server on 127.0.0.1 for tests: scripted answers, recorded requests.

It runs stdlib ``http.server`` in a thread on an ephemeral port and answers
``POST /v1/chat/completions`` from a queue of scripted answers (text, tool calls, raw bodies, HTTP
errors, slow answers). Every request is recorded (path, headers, decoded JSON body) so a test can
assert what a client actually sent over the wire.

    with ChatServer() as server:
        server.reply_text("hello")
        model = OpenAICompatibleModel(server.base_url, "test-model")
"""

from __future__ import annotations

import json
import threading
from collections import deque
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
        self._answers: deque[ScriptedAnswer] = deque()
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

    def _record(self, request: ReceivedRequest) -> ScriptedAnswer:
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

        def log_message(self, format: str, *args: Any) -> None:
            return  # keep test output clean

    return Handler
