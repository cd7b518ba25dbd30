"""``/events`` against a real uvicorn on 127.0.0.1: events arrive, streams end, the report is live."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import httpx
from child_signals import INTERRUPTIBLE
from waits import WAIT
from web_conftest_helpers import live_server
from web_fakes import FakeSession, default_prompts, load_error, support_prompt

from crux_devtools.web.app import create_app

REPO = Path(__file__).resolve().parents[3]


async def read_event(lines: object, kind: str, timeout: float = WAIT) -> dict[str, object]:
    """The next event of ``kind`` from an SSE line iterator."""
    deadline = time.monotonic() + timeout
    current = None
    async for line in lines:  # type: ignore[attr-defined]
        if time.monotonic() > deadline:
            break
        if line.startswith("event: "):
            current = line.removeprefix("event: ")
        elif line.startswith("data: ") and current == kind:
            return json.loads(line.removeprefix("data: "))
    raise AssertionError(f"no {kind!r} event")


async def test_a_saved_file_reaches_an_open_event_stream(tmp_path: Path) -> None:
    session = FakeSession(tmp_path)
    with live_server(create_app(session)) as server:
        async with httpx.AsyncClient(base_url=server.url, timeout=WAIT) as client:
            async with client.stream("GET", "/events") as r:
                assert r.headers["content-type"].startswith("text/event-stream")
                lines = r.aiter_lines()
                hello = await read_event(lines, "hello")
                assert hello == {"version": session.version}
                await server.acall(session.replace([support_prompt("Be brief."), *default_prompts()[1:]]))
                event = await read_event(lines, "report")
                assert event["version"] == session.version and event["changed_files"] == ["prompts.py"]
                await server.acall(session.fail(load_error("prompts.py", 3, "invalid syntax")))
                failed = await read_event(lines, "error")
                assert failed["summary"] == "prompts.py failed to load"
            page = await client.get("/prompts/support-reply")
            assert "Be brief." in page.text


async def test_the_app_starts_the_session_before_answering_and_stops_it_after(tmp_path: Path) -> None:
    session = FakeSession(tmp_path)
    with live_server(create_app(session)) as server:
        assert session.started
        assert httpx.get(server.url + "/api/prompts").status_code == 200
    assert not session.started


async def test_a_closed_stream_unsubscribes_its_queue(tmp_path: Path) -> None:
    session = FakeSession(tmp_path)
    app = create_app(session)
    with live_server(app) as server:
        async with httpx.AsyncClient(base_url=server.url, timeout=WAIT) as client:
            async with client.stream("GET", "/events") as r:
                await read_event(r.aiter_lines(), "hello")
                assert app.state.hub.listeners == 1
        deadline = time.monotonic() + WAIT
        while app.state.hub.listeners and time.monotonic() < deadline:
            await server.acall(session.reload())  # a write notices the closed socket
            time.sleep(0.05)
        assert app.state.hub.listeners == 0


async def test_saving_a_real_project_file_pushes_a_report_event(tmp_path: Path) -> None:
    from crux_devtools.inspector.session.service import ProjectSession
    from crux_devtools.inspector.transport.inprocess import in_process

    project = tmp_path / "sample"
    shutil.copytree(REPO / "sample_project", project, ignore=shutil.ignore_patterns("data", "__pycache__"))
    session = ProjectSession(project, history=False, transport=in_process)  # the stream is the subject, not the worker process
    with live_server(create_app(session)) as server:
        async with httpx.AsyncClient(base_url=server.url, timeout=WAIT) as client:
            before = (await client.get("/api/prompts/support-reply")).json()
            async with client.stream("GET", "/events") as r:
                lines = r.aiter_lines()
                await read_event(lines, "hello")
                source = project / "01_contexts.py"
                source.write_text(source.read_text().replace("support agent for Nimbus", "support agent for Nimbus (live edit)"))
                event = await read_event(lines, "report")
                assert event["version"] > before["version"]
            after = (await client.get("/prompts/support-reply")).text
            assert "support agent for Nimbus (live edit)" in after


def test_serve_on_a_busy_port_says_so_and_answers_on_the_next_one(tmp_path: Path) -> None:
    import socket
    import subprocess
    import sys

    from web_conftest_helpers import free_port

    project = tmp_path / "sample"
    shutil.copytree(REPO / "sample_project", project, ignore=shutil.ignore_patterns("data", "__pycache__"))
    busy = socket.socket()
    busy.bind(("127.0.0.1", free_port()))
    busy.listen()
    port = busy.getsockname()[1]
    cli = [sys.executable, "-c", "from crux_devtools.cli import main; main()"]
    proc = subprocess.Popen([*cli, "serve", str(project), "--no-open", "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        lines = []
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("Serving at"):
                break
        text = "".join(lines)
        assert f"Port {port} is busy; using " in text, text
        url = text.split("Serving at ", 1)[1].split()[0]
        assert not url.endswith(f":{port}/")
        deadline = time.monotonic() + WAIT
        while True:
            try:
                r = httpx.get(url + "api/prompts", timeout=5)
                break
            except httpx.ConnectError:
                assert time.monotonic() < deadline, "the server never answered"
                time.sleep(0.1)
        assert r.status_code == 200 and any(p["id"] == "support-reply" for p in r.json())
        assert httpx.get(url, headers={"Host": "rebind.example"}, timeout=WAIT).status_code == 400
    finally:
        proc.terminate()
        proc.wait(WAIT)
        busy.close()


def test_ctrl_c_ends_an_open_event_stream_cleanly(tmp_path: Path) -> None:
    """uvicorn waits for open responses before shutting the app down; the /events stream must end
    by itself on Ctrl-C, not be cut when the graceful timeout runs out."""
    import signal
    import subprocess
    import sys

    from web_conftest_helpers import free_port

    project = tmp_path / "sample"
    shutil.copytree(REPO / "sample_project", project, ignore=shutil.ignore_patterns("data", "__pycache__"))
    port = free_port()
    cli = [sys.executable, "-c", "from crux_devtools.cli import main; main()"]
    proc = subprocess.Popen([*cli, "serve", str(project), "--no-open", "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **INTERRUPTIBLE)
    try:
        url = f"http://127.0.0.1:{port}/events"
        deadline = time.monotonic() + WAIT
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/api/prompts", timeout=5)
                break
            except httpx.ConnectError:
                assert time.monotonic() < deadline and proc.poll() is None, "the server never answered"
                time.sleep(0.1)
        with httpx.stream("GET", url, timeout=WAIT) as stream:
            lines = stream.iter_lines()
            assert next(lines) == "event: hello"
            proc.send_signal(signal.SIGINT)
            rest = list(lines)  # ends at the server's clean end of the body; a cut stream raises here
        assert all(line == "" or line.startswith(("data: ", "event: ", ":")) for line in rest)
        assert proc.wait(WAIT) == 0
        assert proc.stdout is not None and proc.stdout.read().rstrip().endswith("Stopped.")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(WAIT)
