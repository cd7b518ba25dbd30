"""The two tiers hold: a unit test cannot start a process or open a socket, from its body, its
fixtures or a thread, and is told where it belongs; the same test under tests/functional/ runs."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

TESTS = Path(__file__).resolve().parents[2]

OFFENDERS = textwrap.dedent(
    '''
    import socket
    import subprocess
    import sys
    import threading

    import pytest


    @pytest.fixture
    def child():
        done = subprocess.run([sys.executable, "-c", "pass"])


    def test_starts_a_process():
        subprocess.run([sys.executable, "-c", "pass"])


    def test_a_fixture_starts_a_process(child):
        pass


    def test_listens_on_a_port():
        server = socket.socket()
        try:
            server.bind(("127.0.0.1", 0))
        finally:
            server.close()


    def test_connects_from_a_thread():
        errors = []

        def connect():
            try:
                socket.create_connection(("127.0.0.1", 9), timeout=1).close()
            except OSError:
                pass  # refused or unreachable: the connection was tried
            except Exception as exc:
                errors.append(exc)

        thread = threading.Thread(target=connect)
        thread.start()
        thread.join()
        if errors:
            raise errors[0]


    def test_pure():
        left, right = socket.socketpair()  # what an asyncio loop uses to wake itself: allowed
        left.close()
        right.close()
        assert sum(range(4)) == 6
    '''
)


def suite_copy(tmp_path: Path, tier: str) -> Path:
    root = tmp_path / "tests"
    (root / tier / "core").mkdir(parents=True)
    # The whole top level of the real suite (its conftest and every helper module it imports), so the
    # copy loads exactly as the real one does whatever the conftest comes to import.
    for helper in TESTS.iterdir():
        if helper.is_file() and helper.suffix in (".py", ".txt"):
            shutil.copy(helper, root / helper.name)
    (root / tier / "core" / "test_offenders.py").write_text(OFFENDERS, encoding="utf-8")
    return root


def run_pytest(root: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "0", "-q", "-rA", "--rootdir", str(root), str(root)],
        cwd=root, capture_output=True, text=True, timeout=300,
    )
    assert "passed" in done.stdout, done.stdout + done.stderr
    return done


def test_a_unit_test_that_starts_a_process_or_opens_a_socket_fails_and_says_where_it_belongs(tmp_path: Path) -> None:
    done = run_pytest(suite_copy(tmp_path, "unit"))
    out = done.stdout
    assert "1 passed" in out and "test_pure" in out, out
    for name in ("test_starts_a_process", "test_listens_on_a_port", "test_connects_from_a_thread"):
        assert f"FAILED unit/core/test_offenders.py::{name}" in out, out
    assert "ERROR unit/core/test_offenders.py::test_a_fixture_starts_a_process" in out, out
    assert "move this test to tests/functional/" in out


def test_the_same_tests_under_functional_are_not_guarded(tmp_path: Path) -> None:
    out = run_pytest(suite_copy(tmp_path, "functional")).stdout
    assert "TierViolation" not in out and "5 passed" in out, out
