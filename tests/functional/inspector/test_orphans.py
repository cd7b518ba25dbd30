"""No process outlives the inspector: workers die with `serve` and `tui` (even killed with SIGKILL,
or SIGHUP when the terminal closes) while they run hung user code, and a child user code started
before ending its worker is killed with the worker's process group. Checked in /proc, for real."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from child_signals import INTERRUPTIBLE
from waits import WAIT
from web_conftest_helpers import free_port

COMMAND = str(Path(sys.executable).parent / "crux-devtools")

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

HANGS = "import os, pathlib\nimport crux_devtools\n\npathlib.Path({pidfile!r}).write_text(str(os.getpid()))\nwhile True:\n    pass\n"
LEAVES_A_CHILD = (
    "import os, pathlib, subprocess\nimport crux_devtools\n\n"
    "child = subprocess.Popen(['sleep', '300'], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
    "pathlib.Path({pidfile!r}).write_text(str(child.pid))\nos._exit(3)\n"
)
GOOD = "from crux_devtools import prompt\n\nfine = prompt('fine', system='Fine.')\n"


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped, does not count)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_until(predicate: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting until {what}")
        time.sleep(0.05)


def read_pid(pidfile: Path, timeout: float = WAIT) -> int:
    wait_until(lambda: pidfile.is_file() and pidfile.read_text().strip().isdigit(), timeout, f"{pidfile.name} is written")
    return int(pidfile.read_text())


def project(root: Path, template: str) -> tuple[Path, Path]:
    pidfile = root / "pid.txt"
    code = root / "code"
    code.mkdir()
    (code / "fine.py").write_text(GOOD, encoding="utf-8")
    (code / "user.py").write_text(template.format(pidfile=str(pidfile)), encoding="utf-8")
    # The network guard refuses child processes; this project allows them, so that they can be left behind.
    (code / "pyproject.toml").write_text("[tool.crux-devtools]\nallow_network = true\n", encoding="utf-8")
    return code, pidfile


def start_serve(code: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [COMMAND, "serve", str(code), "--no-open", "--port", str(free_port())],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        **INTERRUPTIBLE,
    )


@pytest.fixture
def cleanup() -> Iterator[list[int]]:
    """Pids to kill at the end whatever happens, so a failing test leaves nothing running."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGHUP])
def test_a_worker_running_hung_code_dies_when_serve_is_killed(tmp_path: Path, how: signal.Signals, cleanup: list[int]) -> None:
    code, pidfile = project(tmp_path, HANGS)
    serve = start_serve(code)
    cleanup.append(serve.pid)
    worker = read_pid(pidfile)
    cleanup.append(worker)
    assert alive(worker)
    serve.send_signal(how)
    serve.wait(WAIT)
    # serve is gone, and with it the timeout that kills hung code: only its death can end the worker
    wait_until(lambda: not alive(worker), WAIT, "the worker dies with serve")


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
def test_a_worker_running_hung_code_dies_when_the_tui_terminal_closes(tmp_path: Path, cleanup: list[int]) -> None:
    code, pidfile = project(tmp_path, HANGS)
    socket = f"crux-orphans-{os.getpid()}"
    subprocess.run(["tmux", "-L", socket, "new-session", "-d", "-s", "t", "-x", "100", "-y", "30", f"{COMMAND} tui {code}"], check=True)
    try:
        worker = read_pid(pidfile)
        cleanup.append(worker)
        assert alive(worker)
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], check=False)  # SIGHUP to the tui
    wait_until(lambda: not alive(worker), WAIT, "the worker dies with the tui")


def test_a_child_left_by_a_module_that_exits_dies_with_check(tmp_path: Path, cleanup: list[int]) -> None:
    code, pidfile = project(tmp_path, LEAVES_A_CHILD)
    done = subprocess.run([COMMAND, "check", str(code), "--timeout", "5"], capture_output=True, text=True, timeout=WAIT, check=False)
    child = read_pid(pidfile, timeout=0)  # check has returned: the file is written by now
    cleanup.append(child)
    wait_until(lambda: not alive(child), WAIT, "the child user code left behind is killed")
    assert done.returncode == 1 and "user.py:6: WorkerExited" in done.stdout, done.stdout


def test_a_child_left_by_a_module_that_exits_dies_while_serve_runs_and_after(tmp_path: Path, cleanup: list[int]) -> None:
    code, pidfile = project(tmp_path, LEAVES_A_CHILD)
    serve = start_serve(code)
    cleanup.append(serve.pid)
    try:
        child = read_pid(pidfile)
        cleanup.append(child)
        wait_until(lambda: not alive(child), WAIT, "the child is killed with its worker's process group")
    finally:
        serve.send_signal(signal.SIGINT)
        serve.wait(WAIT)
    assert not alive(child)


STARTS_A_CHILD = (
    "import pathlib, subprocess\nimport crux_devtools\n\n"
    "child = subprocess.Popen(['sleep', '300'], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
    "pathlib.Path({pidfile!r}).write_text(str(child.pid))\nwhile True:\n    pass\n"
)


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGHUP])
def test_a_child_user_code_started_at_import_dies_when_serve_is_killed(tmp_path: Path, how: signal.Signals, cleanup: list[int]) -> None:
    code, pidfile = project(tmp_path, STARTS_A_CHILD)
    serve = start_serve(code)
    cleanup.append(serve.pid)
    child = read_pid(pidfile)
    cleanup.append(child)
    assert alive(child)
    serve.send_signal(how)
    serve.wait(WAIT)
    wait_until(lambda: not alive(child), 5.0, "the child user code started dies with serve")


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
@pytest.mark.parametrize("how", ["SIGKILL", "SIGHUP"])
def test_a_child_user_code_started_at_import_dies_when_the_tui_is_killed(tmp_path: Path, how: str, cleanup: list[int]) -> None:
    code, pidfile = project(tmp_path, STARTS_A_CHILD)
    socket = f"crux-orphans-{os.getpid()}-{how}"
    tui_pidfile = tmp_path / "tui.pid"
    command = f"echo $$ > {tui_pidfile}; exec {COMMAND} tui {code}"
    subprocess.run(["tmux", "-L", socket, "new-session", "-d", "-s", "t", "-x", "100", "-y", "30", command], check=True)
    try:
        tui = read_pid(tui_pidfile)
        cleanup.append(tui)
        child = read_pid(pidfile)
        cleanup.append(child)
        assert alive(child)
        if how == "SIGKILL":
            os.kill(tui, signal.SIGKILL)
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], check=False)  # SIGHUP to the tui
    wait_until(lambda: not alive(child), 5.0, "the child user code started dies with the tui")


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
def test_a_child_user_code_started_at_import_dies_when_check_is_killed(tmp_path: Path, how: signal.Signals, cleanup: list[int]) -> None:
    code, pidfile = project(tmp_path, STARTS_A_CHILD)
    check = subprocess.Popen([COMMAND, "check", str(code), "--timeout", "600"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    cleanup.append(check.pid)
    child = read_pid(pidfile)
    cleanup.append(child)
    assert alive(child)
    check.send_signal(how)
    check.wait(WAIT)
    wait_until(lambda: not alive(child), 5.0, "the child user code started dies with check")
