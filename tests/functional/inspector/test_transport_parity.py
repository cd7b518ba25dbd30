"""The in-process transport answers as a worker process does: one sequence of ops, through both.

The project is a copy of ``sample_project/`` with the runs ``record_demo.py`` records, one more module
whose prompt reads a file by a relative path when it is evaluated, and a git history; the sequence is
what the TUI and the web page do with it: load; a second worker of the same session loads a copy of
``HEAD`` (as the change marks do: the same module names, another folder); an edit of ``shared.py``
and an update; a replay of a recorded step from today's source; an evaluation in each worker.

It runs in a test process as the suite leaves it: ``shared`` of another copy of the project is
already imported (``tests/functional/repo/test_readme.py`` imports the sample's ``03_budgets.py``,
which imports it), and the working folder is not the project's.
"""

from __future__ import annotations

import importlib.util
import io
import subprocess
import sys
import tarfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from diff_helpers import commit_all, git
from recorded_sample import newest_run, record_sample

from crux_devtools.inspector.session.discovery import discover
from crux_devtools.inspector.transport.inprocess import in_process
from crux_devtools.inspector.transport.process import SpawnedWorker

REPO = Path(__file__).resolve().parents[3]
OLD_RULE = "- Never ask for passwords or full card numbers.\\n"
NEW_RULE = "- Never ask for passwords, card numbers or one-time codes.\\n"
NOTES = '''from crux_devtools import prompt

house_notes = prompt("house-notes", system=lambda _: open("notes.txt").read(), examples={"today": {}})
'''

# What may differ between the two answers, and why; everything else must be equal.
EXCLUDED = {
    # How long the call took: measured, never the same twice.
    "duration_ms": "time",
    # The libraries the load imported that this interpreter had not imported before (the next spare
    # pre-imports them): a worker process has imported what its warm-up imports, a test process
    # whatever the tests before this one imported.
    "preload": "what the interpreter had imported before the load",
}


def without_excluded(value: Any) -> Any:
    """``value`` with every key of ``EXCLUDED`` taken out, at any depth."""
    if isinstance(value, dict):
        return {k: without_excluded(v) for k, v in value.items() if k not in EXCLUDED}
    if isinstance(value, list):
        return [without_excluded(v) for v in value]
    return value


def differences(mine: Any, theirs: Any, where: str = "") -> list[str]:
    """Where two JSON values differ (``result.prompts[0].examples``: in-process, process), first few."""
    if isinstance(mine, dict) and isinstance(theirs, dict):
        found = [f"{where}.{k}: only {'in process' if k in mine else 'in the process worker'}" for k in sorted(set(mine) ^ set(theirs))]
        for key in sorted(set(mine) & set(theirs)):
            found += differences(mine[key], theirs[key], f"{where}.{key}")
        return found[:10]
    if isinstance(mine, list) and isinstance(theirs, list) and len(mine) == len(theirs):
        return [d for i, (a, b) in enumerate(zip(mine, theirs)) for d in differences(a, b, f"{where}[{i}]")][:10]
    return [] if mine == theirs else [f"{where}: {mine!r:.300} in process, {theirs!r:.300} in the process worker"]


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Path, dict[str, Any]]:
    """The recorded sample with ``notes.py``, committed; ``HEAD`` exported beside it; its newest run.
    Both memory files are seeded first: a load that seeds one writes a partial file named by its pid."""
    root = record_sample(tmp_path)
    (root / "notes.py").write_text(NOTES)
    (root / "notes.txt").write_text("Read the notes before you answer.")
    git(root, "init", "-q")
    commit_all(root, "base")
    head = tmp_path / "head"
    head.mkdir()
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=root, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(head, filter="data")
    for folder in (root, head):
        done = subprocess.run([sys.executable, str(folder / "seed_memory.py")], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    return root, head, newest_run(root)


@pytest.fixture
def as_the_suite_leaves_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another copy's ``shared`` imported, as an earlier test leaves it; the working folder elsewhere."""
    spec = importlib.util.spec_from_file_location("shared", REPO / "sample_project" / "shared.py")
    assert spec is not None and spec.loader is not None
    other = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(other)
    monkeypatch.setitem(sys.modules, "shared", other)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)


def load_request(root: Path) -> dict[str, Any]:
    return {"root": str(root), "modules": [m.to_dict() for m in discover(root).modules]}


async def sequence(start: Callable[[Path], Awaitable[Any]], root: Path, head: Path, run: dict[str, Any]) -> list[tuple[str, Any]]:
    """The answers of one sequence of ops through workers that ``start`` makes (the edit is undone after)."""
    shared = root / "shared.py"
    original = shared.read_text()
    answers: list[tuple[str, Any]] = []

    async def call(worker: Any, op: str, request: dict[str, Any]) -> Any:
        answer = await worker.call(op, request, 120.0)
        answers.append((op, answer))
        return answer

    worker, other = await start(root), await start(head)
    try:
        await worker.wait_ready()
        await other.wait_ready()
        loaded = await call(worker, "load", load_request(root))
        assert loaded["ok"], loaded
        await call(other, "load", load_request(head))
        shared.write_text(original.replace(OLD_RULE, NEW_RULE))
        await call(worker, "update", {"files": ["shared.py"], "known": loaded["result"]["order"]})
        await call(worker, "replay_step", {"prompt_id": run["target"], "run": run["id"], "step": 1, "overrides": {}, "source": "current"})
        await call(worker, "evaluate", {"prompt_id": "house-notes", "example": "today"})
        await call(other, "evaluate", {"prompt_id": "support-reply", "example": "signed-in"})
    finally:
        shared.write_text(original)
        await worker.close()
        await other.close()
    return answers


@pytest.mark.usefixtures("as_the_suite_leaves_it")
async def test_the_in_process_transport_answers_every_op_as_a_worker_process_does(project: tuple[Path, Path, dict[str, Any]]) -> None:
    root, head, run = project
    processes = await sequence(SpawnedWorker.start, root, head, run)
    here = await sequence(in_process, root, head, run)
    assert [op for op, _ in here] == [op for op, _ in processes]
    for (op, mine), (_, theirs) in zip(here, processes, strict=True):
        found = differences(without_excluded(mine), without_excluded(theirs))
        assert not found, f"the answers to {op!r} differ:\n" + "\n".join(found)
    replayed = processes[3][1]["result"]["replayed"]
    assert "one-time codes" in replayed["sent"]["system"]  # the step was planned from the edited source
