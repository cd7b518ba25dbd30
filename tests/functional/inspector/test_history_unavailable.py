"""A damaged history file or a read-only ``.crux`` never stops the inspector: history is off, one warning.

``serve`` and ``tui`` are run as real commands. The tests run as root here, and root ignores file
modes; the read-only cases therefore drop the capability that lets root write anyway
(``setpriv --bounding-set=-dac_override``), so ``.crux`` (mode 0555) is really read-only to them.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from test_tui_tmux import Terminal
from child_signals import INTERRUPTIBLE
from waits import WAIT
from web_conftest_helpers import free_port

from crux_devtools.inspector.session.history import History, open_history

REPO = Path(__file__).resolve().parents[3]
COMMAND = Path(sys.executable).parent / "crux-devtools"
GOOD = REPO / "tests" / "projects" / "good"


def report(digest: str, text: str) -> dict[str, object]:
    return {"hash": digest, "duration_ms": 1.0, "prompts": [{"id": "p", "examples": [{"name": "e", "inspection": {"system": text}}]}]}


def read_only_prefix() -> list[str]:
    """What to run a command under so that file modes bind it (nothing when not root)."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: a read-only folder cannot be simulated")
    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    shutil.copytree(GOOD, root, ignore=shutil.ignore_patterns("__pycache__", ".crux"))
    return root


def corrupt(root: Path) -> None:
    (root / ".crux").mkdir(exist_ok=True)
    (root / ".crux" / "devtools.sqlite3").write_bytes(b"not a database, one flipped page" * 200)


def read_only(root: Path, *, with_store: bool) -> None:
    """``.crux`` read-only: empty, or holding a store written before it was made read-only."""
    if with_store:
        History(root).close()
        for child in (root / ".crux").iterdir():
            child.chmod(0o444)
    else:
        (root / ".crux").mkdir()
    (root / ".crux").chmod(0o555)


@pytest.fixture(autouse=True)
def writable_again(project: Path) -> Iterator[None]:
    yield
    if (project / ".crux").exists():
        (project / ".crux").chmod(0o755)  # so pytest can clean up


def test_a_damaged_history_file_is_no_history_and_one_warning(project: Path, caplog: pytest.LogCaptureFixture) -> None:
    corrupt(project)
    with caplog.at_level(logging.WARNING, logger="crux_devtools.inspector.session.history"):
        history, warning = open_history(project)
    assert history is None
    assert warning is not None and warning.startswith(f"history is off: cannot use {project / '.crux' / 'devtools.sqlite3'} (file is not a database)")
    assert "move the damaged file away" in warning
    assert [r.getMessage() for r in caplog.records] == [warning]


def test_a_history_that_fails_later_turns_itself_off_with_one_warning(project: Path, caplog: pytest.LogCaptureFixture) -> None:
    history = History(project, busy_timeout=0.05)
    history.record(report("a", "old"), ok=True, errors=[])
    other = sqlite3.connect(project / ".crux" / "devtools.sqlite3")
    other.execute("BEGIN EXCLUSIVE")  # another process holds the file: every write and read fails
    try:
        with caplog.at_level(logging.WARNING, logger="crux_devtools.inspector.session.history"):
            history.record(report("b", "new"), ok=True, errors=[])  # no exception
            history.record(report("c", "newer"), ok=True, errors=[])
            assert history.previous_system("p", "e", "newer") is None
            assert history.versions("p", "e") == [] and history.runs() == []
    finally:
        other.rollback()
        other.close()
        history.close()
    assert len(caplog.records) == 1 and "history is off from now on" in caplog.records[0].getMessage()


def serve(root: Path, prefix: list[str]) -> tuple[int, str]:
    """Run the real ``serve``; returns the status of ``/`` once it answers, and what it printed."""
    proc = subprocess.Popen(
        [*prefix, str(COMMAND), "serve", str(root), "--no-open", "--port", str(free_port())],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**os.environ, "CI": "1"}, **INTERRUPTIBLE,
    )
    assert proc.stdout is not None
    printed, status = "", 0
    try:
        url = None
        for line in proc.stdout:  # the port it chose (the one asked for may have been taken since)
            printed += line
            if line.startswith("Serving at "):
                url = line.split()[2]
                break
        deadline = time.monotonic() + WAIT
        while url and time.monotonic() < deadline and proc.poll() is None:
            try:
                status = httpx.get(url, timeout=5).status_code
                break
            except httpx.TransportError:
                time.sleep(0.1)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        rest, _ = proc.communicate(timeout=WAIT)
    return status, printed + rest


def test_serve_starts_with_a_damaged_history_file(project: Path) -> None:
    corrupt(project)
    status, output = serve(project, [])
    assert status == 200, output
    assert "Traceback" not in output
    assert output.count("history is off") == 1, output


@pytest.mark.parametrize("with_store", [False, True], ids=["empty-crux", "crux-with-a-store"])
def test_serve_starts_with_a_read_only_state_folder(project: Path, with_store: bool) -> None:
    read_only(project, with_store=with_store)
    status, output = serve(project, read_only_prefix())
    assert status == 200, output
    assert "Traceback" not in output
    [line] = [line for line in output.splitlines() if "history is off" in line]
    assert "make .crux writable to keep history" in line


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
@pytest.mark.parametrize("damage", ["read-only", "corrupt"])
def test_the_tui_starts_with_a_read_only_or_damaged_state_folder_and_says_history_is_off(project: Path, damage: str) -> None:
    prefix = read_only_prefix() if damage == "read-only" else []
    if damage == "read-only":
        read_only(project, with_store=False)
    else:
        corrupt(project)
    term = Terminal(f"crux-history-{os.getpid()}")
    for _ in range(5):
        if subprocess.run(["tmux", "-L", term.socket, "new-session", "-d", "-s", "t", "-x", "150", "-y", "36", "cat"], capture_output=True, check=False).returncode == 0:
            break
        time.sleep(0.2)
    try:
        env = "-u COLUMNS -u LINES TERM=xterm-256color"
        term.tmux("respawn-pane", "-k", "-t", "t", f"{' '.join(prefix)} env {env} {COMMAND} tui {project}; sleep 30")
        screen = term.wait_for(lambda s: "support" in s and "Running without history" in s)
        assert "Traceback" not in screen
        term.keys("q")
        term.wait_for(lambda s: "System text" not in s)
    finally:
        term.tmux("kill-server")
