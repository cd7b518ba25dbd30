"""The two tiers hold: a unit test cannot start a process or open a socket, from its body, its
fixtures or a thread, and is told where it belongs; the same test under tests/functional/ runs."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

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


def suite_copy(tmp_path: Path) -> Path:
    """A copy of the suite's top level holding the same offending tests in both tiers (under two file
    names: test file names are unique across the folders)."""
    root = tmp_path / "tests"
    # The whole top level of the real suite (its conftest and every helper module it imports), so the
    # copy loads exactly as the real one does whatever the conftest comes to import.
    root.mkdir()
    for helper in TESTS.iterdir():
        if helper.is_file() and helper.suffix in (".py", ".txt"):
            shutil.copy(helper, root / helper.name)
    for tier, name in TIER_FILES.items():
        (root / tier / "core").mkdir(parents=True)
        (root / tier / "core" / name).write_text(OFFENDERS, encoding="utf-8")
    return root


TIER_FILES = {"unit": "test_offenders.py", "functional": "test_offenders_functional.py"}


def run_pytest(root: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "0", "-q", "-rA", "--rootdir", str(root), str(root)],
        cwd=root, capture_output=True, text=True, timeout=300,
    )
    assert "passed" in done.stdout, done.stdout + done.stderr
    return done


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, dict[str, str]], str]:
    """One pytest run of the copy: each tier's ``{test: PASSED/FAILED/ERROR}`` (``-rA``'s lines), and the output."""
    out = run_pytest(suite_copy(tmp_path_factory.mktemp("tiers"))).stdout
    found: dict[str, dict[str, str]] = {tier: {} for tier in TIER_FILES}
    for line in out.splitlines():
        verdict, _, rest = line.partition(" ")
        if verdict in ("PASSED", "FAILED", "ERROR"):
            path, _, name = rest.split(" ", 1)[0].partition("::")
            tier = next((t for t, f in TIER_FILES.items() if path == f"{t}/core/{f}"), None)
            if tier is not None:
                found[tier][name] = verdict
    return found, out


def test_a_unit_test_that_starts_a_process_or_opens_a_socket_fails_and_says_where_it_belongs(outcomes: tuple[dict[str, dict[str, str]], str]) -> None:
    found, out = outcomes
    assert found["unit"] == {"test_pure": "PASSED", "test_starts_a_process": "FAILED", "test_listens_on_a_port": "FAILED",
                             "test_connects_from_a_thread": "FAILED", "test_a_fixture_starts_a_process": "ERROR"}, out
    assert "move this test to tests/functional/" in out


def test_the_same_tests_under_functional_are_not_guarded(outcomes: tuple[dict[str, dict[str, str]], str]) -> None:
    found, out = outcomes
    names = ("test_starts_a_process", "test_a_fixture_starts_a_process", "test_listens_on_a_port", "test_connects_from_a_thread", "test_pure")
    assert found["functional"] == dict.fromkeys(names, "PASSED"), out
    assert "TierViolation" not in "\n".join(line for line in out.splitlines() if "test_offenders_functional.py" in line), out
