"""No save can spend money: the worker refuses the connections user code opens while the inspector
imports and evaluates it, and allows them in a Run or with ``allow_network = true``.

A real TCP server on 127.0.0.1 counts the connections that reach it; the project is loaded by a real
``ProjectSession`` and its worker process.
"""

from __future__ import annotations

import socket
import socketserver
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from crux_devtools.inspector.session import ProjectSession


class Counter(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        self.connections = 0
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), Handler)

    @property
    def port(self) -> int:
        return int(self.server_address[1])


class Handler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        server = self.server
        assert isinstance(server, Counter)
        with server.lock:
            server.connections += 1
        self.request.sendall(b"ok\n")


@pytest.fixture
def server() -> Iterator[Counter]:
    counter = Counter()
    thread = threading.Thread(target=counter.serve_forever, daemon=True)
    thread.start()
    try:
        yield counter
    finally:
        counter.shutdown()
        counter.server_close()


GOOD = "from crux_devtools import prompt\n\nhello = prompt('hello', system='Be kind.', examples={'one': {}})\n"
# Line 5 connects at import, as an unguarded script calling a model would.
SCRIPT = (
    "import socket\n"
    "from crux_devtools import prompt\n"
    "\n"
    "app = prompt('app', system='Hi.', examples={{'one': {{}}}})\n"
    "reply = socket.create_connection(('127.0.0.1', {port}), timeout=30).recv(10)\n"
)
# A model adapter that calls the counting server; a system callback (line 7) that does too.
RUNNABLE = (
    "import socket\n"
    "from crux_devtools import ModelResponse, context, prompt\n"
    "\n"
    "\n"
    "class Local:\n"
    "    def complete(self, request):\n"
    "        socket.create_connection(('127.0.0.1', {port}), timeout=30).recv(10)\n"
    "        return ModelResponse(text='done')\n"
    "\n"
    "\n"
    "def fetch(_input):\n"
    "    return socket.create_connection(('127.0.0.1', {port}), timeout=30).recv(10).decode()\n"
    "\n"
    "\n"
    "talk = prompt('talk', system='Hi.', model=Local(), examples={{'one': {{}}}})\n"
    "fetched = prompt('fetched', system='Hi.', use=[context('remote', system=fetch)], examples={{'one': {{}}}})\n"
)


async def test_a_save_of_a_module_that_connects_at_import_makes_no_connection_and_names_its_line(tmp_path: Path, server: Counter) -> None:
    (tmp_path / "prompts.py").write_text(GOOD, encoding="utf-8")
    async with ProjectSession(tmp_path, watch=False, history=False, prewarm=False) as session:
        assert session.report is not None and not session.report["errors"]
        (tmp_path / "app.py").write_text(SCRIPT.format(port=server.port), encoding="utf-8")  # the save
        await session.reload()
        report = session.report
    assert server.connections == 0
    assert report is not None
    [error] = report["errors"]
    assert (error["file"], error["line"], error["type"]) == ("app.py", 5, "NetworkRefused")
    assert f"to 127.0.0.1:{server.port} made by app.py:5" in error["message"]
    assert "allow_network = true" in error["message"] and "[tool.crux-devtools]" in error["message"]
    assert [p["id"] for p in report["prompts"]] == ["hello"]  # the other module is still shown
    assert report["imported_note"] is not None and report["imported_note"].startswith("imported: app.py, prompts.py (every .py file")


async def test_allow_network_lets_the_import_connect_and_a_bad_value_is_a_config_error_at_its_line(tmp_path: Path, server: Counter) -> None:
    (tmp_path / "app.py").write_text(SCRIPT.format(port=server.port), encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text("[tool.crux-devtools]\nallow_network = true\n", encoding="utf-8")
    async with ProjectSession(tmp_path, watch=False, history=False, prewarm=False) as session:
        assert session.report is not None and not session.report["errors"], session.report
        assert server.connections == 1
        (tmp_path / "pyproject.toml").write_text("[tool.crux-devtools]\n\nallow_network = 'yes'\n", encoding="utf-8")
        await session.reload()
        errors = session.report["errors"] if session.report is not None else []
    assert server.connections == 1  # a bad value refuses, as the default does
    assert {(e["file"], e["line"], e["type"]) for e in errors} == {("pyproject.toml", 3, "ConfigError"), ("app.py", 5, "NetworkRefused")}


async def test_evaluating_refuses_a_callback_that_connects_and_a_run_may_call_its_model(tmp_path: Path, server: Counter) -> None:
    (tmp_path / "prompts.py").write_text(RUNNABLE.format(port=server.port), encoding="utf-8")
    async with ProjectSession(tmp_path, watch=False, history=False, prewarm=False) as session:
        report = session.report
        assert report is not None and server.connections == 0
        fetched = next(p for p in report["prompts"] if p["id"] == "fetched")
        error = fetched["examples"][0]["error"]
        assert fetched["status"] == "error" and error is not None
        assert (error["file"], error["line"]) == ("prompts.py", 12) and "made by prompts.py:12" in error["message"]
        custom = await session.evaluate("fetched", input={})  # a custom evaluation is refused too
        assert custom["status"] == "error" and server.connections == 0
        run = await session.run("talk", example="one", confirm=True)  # the one who presses Run confirms
    assert run["status"] == "ok" and run["text"] == "done", run
    assert server.connections == 1  # the Run, and only the Run, reached the server


WRAPPED = (
    "import urllib.request\n"
    "from crux_devtools import prompt\n"
    "\n"
    "try:\n"
    "    CONFIG = urllib.request.urlopen('http://127.0.0.1:{port}/config', timeout=30).read()\n"
    "except OSError as exc:\n"
    "    raise RuntimeError('could not fetch the configuration') from exc\n"
    "hello = prompt('hello', system='Hi.', examples={{'one': {{}}}})\n"
)


async def test_a_refusal_wrapped_by_a_client_library_is_still_reported_as_one(tmp_path: Path, server: Counter) -> None:
    (tmp_path / "config.py").write_text(WRAPPED.format(port=server.port), encoding="utf-8")
    async with ProjectSession(tmp_path, watch=False, history=False, prewarm=False) as session:
        errors = session.report["errors"] if session.report is not None else []
    assert server.connections == 0
    [error] = errors
    assert (error["file"], error["line"], error["type"]) == ("config.py", 5, "NetworkRefused")  # where it connected
    assert error["message"].startswith(f"crux-devtools refused a network connection to 127.0.0.1:{server.port} made by config.py:5")
    assert error["message"].endswith("(raised as RuntimeError: could not fetch the configuration)")


def test_the_guard_refuses_only_while_on_and_only_code_of_the_project(tmp_path: Path, server: Counter) -> None:
    """In this process: the hook is off outside ``guarded``, and library code (no project frame) may connect."""
    from crux_devtools.inspector import netguard

    netguard.install(tmp_path)
    with netguard.guarded():
        socket.create_connection(("127.0.0.1", server.port), timeout=30).close()  # this test file is not in tmp_path
    user = tmp_path / "user_code.py"
    user.write_text(f"import socket\n\ndef call():\n    return socket.create_connection(('127.0.0.1', {server.port}), timeout=30)\n", encoding="utf-8")
    namespace: dict[str, object] = {}
    exec(compile(user.read_text(), str(user), "exec"), namespace)  # noqa: S102 - a stand-in for an imported user module
    with netguard.guarded(), pytest.raises(netguard.NetworkRefused, match="made by user_code.py:4"):
        namespace["call"]()  # type: ignore[operator]
    namespace["call"]().close()  # type: ignore[operator]  # outside the guard: allowed
