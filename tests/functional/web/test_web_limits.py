"""Limits of the web inspector against a real uvicorn: request body size, same-origin check with a
parsed URL and port, and a restarted server keeping its port while old connections are in TIME_WAIT."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from web_conftest_helpers import LiveServer, free_port, live_server
from web_fakes import FakeSession

from crux_devtools.web.app import create_app
from crux_devtools.web.security import MAX_BODY_BYTES
from crux_devtools.web.serve import choose_binding


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    root = tmp_path / "project"
    root.mkdir()
    app = create_app(FakeSession(root, agent_ids=("support-reply",)), bound_host="127.0.0.1")
    with live_server(app) as running:
        yield running


def read_response(sock: socket.socket) -> tuple[int, bytes]:
    """The status code and the response, head and body (60 s at most: a failure bound)."""
    sock.settimeout(60)
    data = b""
    while True:
        head, _, body = data.partition(b"\r\n\r\n")
        if _:
            length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), 0)
            if len(body) >= length:
                break
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return int(data.split(b" ", 2)[1]), data


def test_a_declared_body_over_the_limit_is_refused_before_it_is_sent(server: LiveServer) -> None:
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        head = (
            f"POST /prompts/support-reply/run HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
            f"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {300 * 1024 * 1024}\r\n\r\n"
        )
        sock.sendall(head.encode() + b"example=")  # the rest of the 300 MB is never sent
        status, data = read_response(sock)
    assert status == 413, data
    assert b"request body over" in data


def test_a_chunked_body_over_the_limit_is_refused_once_it_passes_it(server: LiveServer) -> None:
    chunk = b"x" * 65536
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        head = (
            f"POST /prompts/support-reply/run HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
            "Content-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        sock.sendall(head.encode())
        for _ in range(MAX_BODY_BYTES // len(chunk) + 2):  # past the limit; the body never ends
            sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        status, data = read_response(sock)
    assert status == 413, data
    assert b"request body over" in data


def test_a_body_under_the_limit_is_served(server: LiveServer) -> None:
    with httpx.Client(timeout=60) as client:
        r = client.post(f"{server.url}/prompts/support-reply/run", data={"example": "billing", "pad": "y" * 100_000})
    assert r.status_code == 200 and "step 0" in r.text


@pytest.mark.parametrize(
    "origin",
    [
        "http://localhost:80@evil.example",  # user info: the host is evil.example
        "http://127.0.0.1@evil.example",
        "http://localhost:{port}@evil.example",
        "http://127.0.0.1:1",  # a local page on another port is another origin
        "http://127.0.0.1",
        "https://127.0.0.1:{port}:8",
        "ftp://127.0.0.1:{port}",
    ],
)
def test_an_origin_is_parsed_and_its_port_must_match(server: LiveServer, origin: str) -> None:
    with httpx.Client(timeout=60) as client:
        r = client.post(
            f"{server.url}/prompts/support-reply/run", data={"example": "billing"}, headers={"Origin": origin.format(port=server.port)}
        )
    assert r.status_code == 403, origin


@pytest.mark.parametrize("origin", ["http://127.0.0.1:{port}", "http://localhost:{port}"])
def test_the_page_own_origin_is_accepted(server: LiveServer, origin: str) -> None:
    with httpx.Client(timeout=60) as client:
        r = client.post(
            f"{server.url}/prompts/support-reply/run", data={"example": "billing"}, headers={"Origin": origin.format(port=server.port)}
        )
    assert r.status_code == 200, origin


def test_a_port_whose_old_connections_are_in_time_wait_is_still_chosen() -> None:
    port = free_port()
    with socket.create_server(("127.0.0.1", port)) as listener:
        client = socket.create_connection(("127.0.0.1", port))
        accepted, _ = listener.accept()
        accepted.close()  # the server side closes first: its end of the connection enters TIME_WAIT
        assert client.recv(1) == b""
        client.close()
    binding = choose_binding("127.0.0.1", port)
    assert (binding.port, binding.moved_from) == (port, None)
