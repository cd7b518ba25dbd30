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

from crux_devtools.inspector.session.service import ProjectSession


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


POOL = (
    "from concurrent.futures import ThreadPoolExecutor\n"
    "import httpx\n"
    "from crux_devtools import prompt\n"
    "\n"
    "pool = ThreadPoolExecutor(max_workers=1)\n"
    "reply = pool.submit(httpx.post, 'http://127.0.0.1:{port}/v1/chat', json={{}}, timeout=30).result()\n"
    "hello = prompt('hello', system='Hi.', examples={{'one': {{}}}})\n"
)


async def test_an_sdk_call_through_a_thread_pool_at_import_is_refused_on_the_pool_thread(tmp_path: Path, server: Counter) -> None:
    (tmp_path / "app.py").write_text(POOL.format(port=server.port), encoding="utf-8")
    async with ProjectSession(tmp_path, watch=False, history=False, prewarm=False) as session:
        errors = session.report["errors"] if session.report is not None else []
    assert server.connections == 0
    [error] = errors
    assert (error["file"], error["line"], error["type"]) == ("app.py", 6, "NetworkRefused")  # the line that waited for it
    assert f"refused a network connection to 127.0.0.1:{server.port} made by " in error["message"]
    assert "(on the thread 'ThreadPoolExecutor-" in error["message"] and "allow_network = true" in error["message"]


# A thread started at import that connects only when told to, after the load is over (the worker idle).
LATER = (
    "import os, pathlib, socket, threading\n"
    "from crux_devtools import prompt\n"
    "\n"
    "def later():\n"
    "    open({fifo!r}).read()  # blocks until the test writes to it\n"
    "    try:\n"
    "        socket.create_connection(('127.0.0.1', {port}), timeout=30).close()\n"
    "        outcome = 'connected'\n"
    "    except OSError as exc:\n"
    "        outcome = f'{{type(exc).__name__}}: {{exc}}'\n"
    "    pathlib.Path({result!r} + '.tmp').write_text(outcome)\n"
    "    os.replace({result!r} + '.tmp', {result!r})\n"
    "\n"
    "threading.Thread(target=later, name='phone-home', daemon=True).start()\n"
    "hello = prompt('hello', system='Hi.', examples={{'one': {{}}}})\n"
)


async def test_a_thread_started_at_import_cannot_connect_once_the_worker_is_idle(tmp_path: Path, server: Counter) -> None:
    import os

    from waits import until_async

    fifo, result = tmp_path / "go.fifo", tmp_path / "outcome.txt"
    os.mkfifo(fifo)
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text(LATER.format(port=server.port, fifo=str(fifo), result=str(result)), encoding="utf-8")
    async with ProjectSession(project, watch=False, history=False, prewarm=False) as session:
        assert session.report is not None and not session.report["errors"], session.report
        fifo.write_text("go")  # the load is answered: the worker waits for its next request
        await until_async(result.exists, "the thread wrote what its connection did")
    outcome = result.read_text()
    assert server.connections == 0
    assert outcome.startswith(f"NetworkRefused: crux-devtools refused a network connection to 127.0.0.1:{server.port} made by app.py:7"), outcome
    assert "(on the thread 'phone-home') while holding your project between requests" in outcome


# The application's own OpenTelemetry set-up, as an instrumented app has at import: spans made at
# import and the runs' spans (emit_otel) go to a batch processor, whose own thread exports them over
# OTLP/HTTP every 50 ms (the exporter is the library's: no project frame is on that thread's stack).
OTEL = (
    "import logging\n"
    "from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter\n"
    "from opentelemetry.sdk.trace import TracerProvider\n"
    "from opentelemetry.sdk.trace.export import BatchSpanProcessor\n"
    "from crux_devtools import ScriptedModel, emit_otel, prompt\n"
    "\n"
    "class Logged(logging.Handler):  # what the exporter says of each export that failed\n"
    "    def emit(self, record):\n"
    "        with open({log!r}, 'a') as log:\n"
    "            log.write(record.getMessage() + '\\n')\n"
    "\n"
    "logging.getLogger('opentelemetry').addHandler(Logged())\n"
    "provider = TracerProvider()\n"
    "exporter = OTLPSpanExporter(endpoint='http://127.0.0.1:{port}/v1/traces', timeout=1)\n"
    "provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=50))\n"
    "emit_otel(provider)\n"
    "with provider.get_tracer('app').start_as_current_span('import'):\n"
    "    pass\n"
    "\n"
    "traced = prompt('traced', system='Hi.', model=ScriptedModel(['done']), examples={{'one': {{}}}})\n"
)


async def test_an_opentelemetry_batch_processor_in_the_project_exports_nothing_from_the_worker(tmp_path: Path, server: Counter) -> None:
    from waits import until_async

    log = tmp_path / "exports.log"
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text(OTEL.format(port=server.port, log=str(log)), encoding="utf-8")
    failed = lambda: log.is_file() and "Failed to export" in log.read_text()  # noqa: E731
    async with ProjectSession(project, watch=False, history=False, prewarm=False) as session:
        assert session.report is not None and not session.report["errors"], session.report
        await until_async(failed, "the processor's thread tried to export the span made at import")
        run = await session.run("traced", example="one", confirm=True)  # a Run may call its model, not the exporter
        assert run["status"] == "ok", run
    assert server.connections == 0


CHILD = (
    "import subprocess, sys\n"
    "from crux_devtools import prompt\n"
    "\n"
    "CONNECT = \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=30).close()\"\n"
    "subprocess.run([sys.executable, '-c', CONNECT], check=True, timeout=60)\n"
    "hello = prompt('hello', system='Hi.', examples={{'one': {{}}}})\n"
)


def test_check_refuses_a_child_process_started_at_import_and_names_its_line(tmp_path: Path, server: Counter) -> None:
    import subprocess
    import sys

    from waits import WAIT

    (tmp_path / "app.py").write_text(CHILD.format(port=server.port), encoding="utf-8")
    command = str(Path(sys.executable).with_name("crux-devtools"))
    done = subprocess.run([command, "check", str(tmp_path)], capture_output=True, text=True, timeout=WAIT)
    assert server.connections == 0
    assert done.returncode == 1, done
    assert "app.py:5: NetworkRefused: crux-devtools refused starting the child process" in done.stdout + done.stderr, done
    assert "and another program would run outside its network guard" in done.stdout + done.stderr


def test_allow_network_lets_a_child_process_start(tmp_path: Path, server: Counter) -> None:
    import subprocess
    import sys

    from waits import WAIT

    (tmp_path / "app.py").write_text(CHILD.format(port=server.port), encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text("[tool.crux-devtools]\nallow_network = true\n", encoding="utf-8")
    command = str(Path(sys.executable).with_name("crux-devtools"))
    done = subprocess.run([command, "check", str(tmp_path)], capture_output=True, text=True, timeout=WAIT)
    assert done.returncode == 0, done
    assert server.connections == 1
