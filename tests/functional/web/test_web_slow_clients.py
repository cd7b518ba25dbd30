"""Half-open connections are timed out: raw sockets against the real ``crux-devtools serve``.

A client that opens a connection and never finishes its request head (or its body) must not hold a
connection (and a slot of the server) forever; a slow client that dribbles one byte a second must
not either. Normal requests, keep-alive and the endless ``/events`` stream are unaffected.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from child_signals import INTERRUPTIBLE
from waits import WAIT
from web_conftest_helpers import free_port

from crux_devtools.web.slow_clients import BODY_ENV, HEAD_ENV, deadline_seconds

REPO = Path(__file__).resolve().parents[3]
COMMAND = Path(sys.executable).parent / "crux-devtools"
HEAD_SECONDS = 2.0  # the server's deadlines, set short through its environment (5 s and 10 s by default)
BODY_SECONDS = 3.0
DRIP = HEAD_SECONDS / 4  # seconds between two bytes of a dribbling client
SLACK = 10.0  # seconds allowed beyond a deadline on a loaded machine (a server that ignores it keeps the socket for minutes)
AGENT = """
from crux_devtools import ScriptedModel, agent, prompt

echo = agent("echo-agent", prompt=prompt("echo", system="Echo."), model=ScriptedModel(["ok"] * 100))
"""

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("slow") / "project"
    shutil.copytree(REPO / "tests" / "projects" / "good", root, ignore=shutil.ignore_patterns("__pycache__", ".crux"))
    (root / "echo_agent.py").write_text(AGENT)  # a runnable agent: its Run reads the request body
    proc = subprocess.Popen(
        [str(COMMAND), "serve", str(root), "--no-open", "--port", str(free_port())],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "CI": "1", HEAD_ENV: str(HEAD_SECONDS), BODY_ENV: str(BODY_SECONDS)}, **INTERRUPTIBLE,
    )
    assert proc.stdout is not None
    base = next((line.split()[2].rstrip("/") for line in proc.stdout if line.startswith("Serving at ")), None)
    assert base is not None, proc.communicate()[0]
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        try:
            listed = httpx.get(base + "/api/prompts", timeout=5)
            assert any(p["id"] == "echo-agent" and p["has_model"] for p in listed.json()), listed.text
            break
        except httpx.TransportError:
            time.sleep(0.1)
    else:
        proc.kill()
        raise AssertionError(proc.communicate()[0])
    yield base
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=WAIT)


def connect(url: str) -> socket.socket:
    port = int(url.rsplit(":", 1)[1])
    sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
    return sock


def seconds_until_closed(sock: socket.socket, limit: float, drip: bytes = b"") -> tuple[float, bytes]:
    """Seconds until the server closes ``sock`` (sending ``drip`` one byte every ``DRIP`` seconds
    meanwhile), and what it sent; ``limit`` when it is still open then."""
    start = time.monotonic()
    received = b""
    sock.settimeout(0.2)
    next_drip = start + DRIP
    while time.monotonic() - start < limit:
        if drip and time.monotonic() >= next_drip:
            try:
                sock.sendall(drip[:1])
            except OSError:
                return time.monotonic() - start, received
            drip, next_drip = drip[1:], next_drip + DRIP
        try:
            chunk = sock.recv(4096)
        except TimeoutError:
            continue
        except OSError:
            return time.monotonic() - start, received
        if not chunk:
            return time.monotonic() - start, received
        received += chunk
    return limit, received


def test_a_partial_request_line_is_closed_within_the_head_deadline(url: str) -> None:
    with connect(url) as sock:
        sock.sendall(b"GET /api/prompts HT")
        elapsed, _ = seconds_until_closed(sock, HEAD_SECONDS + 30)
    assert elapsed < HEAD_SECONDS + SLACK


def test_a_connection_that_sends_nothing_is_closed(url: str) -> None:
    with connect(url) as sock:
        elapsed, received = seconds_until_closed(sock, HEAD_SECONDS + 30)
    assert elapsed < HEAD_SECONDS + SLACK and received == b""


def test_a_client_dribbling_its_headers_byte_by_byte_is_closed(url: str) -> None:
    with connect(url) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\n")
        elapsed, _ = seconds_until_closed(sock, HEAD_SECONDS + 30, drip=b"Host: 127.0.0.1\r\nX-Slow: " + b"a" * 200)
    assert elapsed < HEAD_SECONDS + SLACK  # each byte must not reset the clock


def test_an_unfinished_body_gets_408_and_the_connection_closes(url: str) -> None:
    with connect(url) as sock:
        port = url.rsplit(":", 1)[1]
        head = f"POST /prompts/echo-agent/run HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\n"
        sock.sendall(head.encode() + b"example=basic")
        elapsed, received = seconds_until_closed(sock, BODY_SECONDS + HEAD_SECONDS + 30)
    assert received.startswith(b"HTTP/1.1 408 "), received[:200]
    assert elapsed < BODY_SECONDS + SLACK


def test_after_a_response_an_idle_or_half_sent_next_request_is_closed_too(url: str) -> None:
    with connect(url) as sock:
        port = url.rsplit(":", 1)[1]
        sock.sendall(f"GET /api/prompts HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        assert sock.recv(65536).startswith(b"HTTP/1.1 200 ")  # waits for the response's first bytes
        sock.sendall(b"GET /api/prom")  # the keep-alive timer stops at the first byte; the head deadline does not
        elapsed, _ = seconds_until_closed(sock, HEAD_SECONDS + 30)
    assert elapsed < HEAD_SECONDS + SLACK


def test_normal_requests_keep_alive_and_the_event_stream_outlive_the_deadlines(url: str) -> None:
    with httpx.Client(base_url=url, timeout=HEAD_SECONDS + 10) as client:
        for _ in range(3):
            assert client.get("/api/prompts").status_code == 200
        with client.stream("GET", "/events") as events:
            lines = events.iter_lines()
            assert next(lines) == "event: hello"
            time.sleep(HEAD_SECONDS + 1.5)  # past every deadline: the stream is still open
            assert client.get("/").status_code == 200
            assert events.is_closed is False


def test_a_deadline_comes_from_its_environment_variable_when_that_is_a_positive_number(monkeypatch: pytest.MonkeyPatch) -> None:
    for value, seconds in (("0.5", 0.5), ("12", 12.0), ("0", 5.0), ("-1", 5.0), ("soon", 5.0), ("", 5.0)):
        monkeypatch.setenv(HEAD_ENV, value)
        assert deadline_seconds(HEAD_ENV, 5.0) == seconds, value
    monkeypatch.delenv(HEAD_ENV)
    assert deadline_seconds(HEAD_ENV, 5.0) == 5.0
