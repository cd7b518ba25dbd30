"""The inspector's side of runs: its own Run (recorded, failures as failures, repeatable), the runs store
of the session, and live "runs" events when another process records a run."""

from __future__ import annotations

import asyncio
import logging
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from waits import WAIT, watcher_caught_up

from crux_devtools.core.record.runstore import RunStore
from crux_devtools.inspector.features.runs import watch as runs_watch
from crux_devtools.inspector.api import SessionEvent
from crux_devtools.inspector.session.service import ProjectSession
from crux_devtools.inspector.transport.inprocess import in_process

REPO = Path(__file__).resolve().parents[3]

PROJECT = Path(__file__).parents[2] / "projects" / "runs"


def make_project(tmp_path: Path) -> Path:
    shutil.copytree(PROJECT, tmp_path, dirs_exist_ok=True)
    return tmp_path


async def until(predicate: Callable[[], bool], timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)


async def test_the_inspectors_run_is_a_whole_recorded_run_and_every_run_starts_from_the_definitions(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    async with ProjectSession(root, transport=in_process, watch=False, history=False, prewarm=False) as session:
        first = await session.run("helper", example="first")
        second = await session.run("helper", example="first")
    for run in (first, second):
        assert (run["status"], run["error"], run["text"], run["origin"], run["recorded"]) == ("ok", None, "In Rotterdam.", "inspector", True)
        assert (run["target"], run["kind"], run["file"], run["model"]) == ("helper", "agent", "agents.py", "scripted")
        assert len(run["steps"]) == 2 and run["steps"][0]["tool_results"][0]["output"] == "found parcel"
        assert run["steps"][0]["sent"]["system"].startswith("Answer briefly.")
    assert first["id"] != second["id"]
    with RunStore.for_project(root, create=False) as store:
        assert [r["id"] for r in store.list()] == [second["id"], first["id"]]
        stored = store.get(first["id"])
    assert {k: v for k, v in first.items() if k != "recorded"} == stored


@pytest.mark.parametrize(
    ("target", "error_type", "message"),
    [
        ("raiser", "ZeroDivisionError", "tool 'explode' raised ZeroDivisionError"),
        ("unknown", "UnknownTool", "unknown tool 'teleport'"),
        ("bad-args", "InvalidToolArguments", "invalid arguments"),
        ("short", "ModelError", "ran out of responses"),
        ("huge", "RequestCompositionError", "REQUEST_TOO_LARGE"),
    ],
)
async def test_a_failed_run_comes_back_as_an_error_not_an_empty_success(tmp_path: Path, target: str, error_type: str, message: str) -> None:
    root = make_project(tmp_path)
    async with ProjectSession(root, transport=in_process, watch=False, history=False, prewarm=False) as session:
        runs = [await session.run(target) for _ in range(2)]
    for run in runs:
        assert run["status"] == "error" and run["error"]["type"] == error_type and message in run["error"]["message"], run["error"]
        assert run["recorded"] is True and run["text"] is None
    with RunStore.for_project(root, create=False) as store:
        assert store.count(status="error", target=target) == 2


async def test_a_prompt_that_names_a_model_adapter_can_be_run_and_reports_its_model_kind(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    async with ProjectSession(root, transport=in_process, watch=False, history=False, prewarm=False) as session:
        assert session.report is not None
        reports = {p["id"]: p for p in session.report["prompts"]}
        solo = await session.run("solo")
        refused = await session.run("plain")
    assert {k: (reports[k]["model_kind"], reports[k]["has_model"]) for k in ("helper", "solo", "plain", "paid", "ask")} == {
        "helper": ("scripted", True), "solo": ("scripted", True), "plain": (None, False), "paid": ("real", True), "ask": (None, False),
    }
    assert (solo["status"], solo["kind"], solo["text"], solo["model"]) == ("ok", "prompt", "Hi from a prompt.", "solo-model")
    assert refused["status"] == "error" and refused["error"]["type"] == "NotRunnable" and refused["recorded"] is False
    assert "model" in refused["error"]["message"] and refused["steps"] == []


async def test_a_run_that_cannot_be_recorded_still_returns_and_says_why(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    (root / ".crux").write_text("in the way")
    async with ProjectSession(root, transport=in_process, watch=False, history=False, prewarm=False) as session:
        run = await session.run("solo")
        assert session.runs() is not None and session.runs().list() == []
    assert run["status"] == "ok" and run["text"] == "Hi from a prompt."
    assert run["recorded"] is False and "is a file, not a folder" in run["record_error"]


@pytest.fixture
def polled(monkeypatch: pytest.MonkeyPatch) -> set[int]:
    """The runs stores a session's poller has looked at (``id`` of each): once a store is in it, the
    poller has its starting mark, and any run written from then on is new to it."""
    seen: set[int] = set()
    look = runs_watch._runs_changes

    def looked(store: Any, token: int | None, mark: int | None) -> Any:
        try:
            return look(store, token, mark)
        finally:
            seen.add(id(store))

    monkeypatch.setattr(runs_watch, "_runs_changes", looked)
    return seen


WRITER = """
import sys
from crux_devtools import ScriptedModel, generate, prompt, record_runs
p = prompt("from-app", system="s", prompt="hi", model=ScriptedModel(["ok"] * int(sys.argv[2])))
with record_runs(sys.argv[1]):
    for _ in range(int(sys.argv[2])):
        generate(p)
"""


async def test_a_run_written_by_another_process_arrives_as_a_runs_event_without_a_reload(tmp_path: Path, polled: set[int]) -> None:
    root = make_project(tmp_path)
    (root / "pyproject.toml").write_text('[tool.crux-devtools]\nwatch_ignore = ["watch-mark.txt"]\n', encoding="utf-8")
    events: list[SessionEvent] = []
    async with ProjectSession(root, transport=in_process, watch=True, history=True, prewarm=False) as session:
        session.subscribe(events.append)
        await until(lambda: len(polled) == 1)  # the poller has its starting mark
        evaluations = session.evaluations
        proc = await asyncio.create_subprocess_exec(sys.executable, "-c", WRITER, str(root), "1", cwd=REPO)
        assert await proc.wait() == 0
        await until(lambda: any(e.kind == "runs" for e in events))
        [event] = [e for e in events if e.kind == "runs"]
        assert event.summary == "1 new run: from-app (ok)" and len(event.runs) == 1
        assert session.runs().get(event.runs[0])["target"] == "from-app"
        proc = await asyncio.create_subprocess_exec(sys.executable, "-c", WRITER, str(root), "3", cwd=REPO)
        assert await proc.wait() == 0
        await until(lambda: sum(len(e.runs) for e in events if e.kind == "runs") == 4)
        await watcher_caught_up(session, "watch-mark.txt")  # the watcher saw the writes, and a reload they caused is done
        assert session.evaluations == evaluations
        assert [e.kind for e in events if e.kind != "runs"] == []
    assert event.version >= 1


async def test_nobody_listening_means_no_polling(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    async with ProjectSession(root, transport=in_process, watch=False, history=False, prewarm=False) as session:
        unsubscribe = session.subscribe(lambda e: None)
        assert session._runs.task is not None and not session._runs.task.done()
        unsubscribe()
        await until(session._runs.task.done)  # the poller ends at its next look


async def test_a_corrupt_runs_file_makes_runs_none_with_one_warning_and_the_inspector_keeps_going(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, polled: set[int]
) -> None:
    root = make_project(tmp_path)
    (root / ".crux").mkdir()
    (root / ".crux" / "runs.sqlite3").write_bytes(b"garbage" * 1000)
    caplog.set_level(logging.WARNING)
    async with ProjectSession(root, transport=in_process, watch=False, history=False, prewarm=False) as session:
        session.subscribe(lambda e: None)
        assert session.runs() is None and session.runs() is None
        await until(lambda: polled)  # the poller met the corrupt file too
        run = await session.run("solo")
        assert session.report is not None and not session.report["errors"]
    assert run["status"] == "ok" and run["recorded"] is False and "not a valid runs database" in run["record_error"]
    warnings = [r for r in caplog.records if "recorded runs are not shown" in r.getMessage()]
    assert len(warnings) == 1 and "not a valid runs database" in warnings[0].getMessage()


async def test_two_inspectors_both_see_every_run_three_processes_write_at_once(tmp_path: Path, polled: set[int]) -> None:
    root = make_project(tmp_path)
    seen: dict[str, list[str]] = {"a": [], "b": []}
    async with ProjectSession(root, transport=in_process, watch=False, history=False, prewarm=False) as one, ProjectSession(root, watch=False, history=False, prewarm=False) as two:
        one.subscribe(lambda e: seen["a"].extend(e.runs))
        two.subscribe(lambda e: seen["b"].extend(e.runs))
        await until(lambda: len(polled) == 2)  # both pollers have their starting marks
        procs = [await asyncio.create_subprocess_exec(sys.executable, "-c", WRITER, str(root), "5", cwd=REPO) for _ in range(3)]
        assert [await p.wait() for p in procs] == [0, 0, 0]
        await until(lambda: len(seen["a"]) == 15 and len(seen["b"]) == 15)
        assert one.runs().count() == 15
    assert sorted(seen["a"]) == sorted(seen["b"]) and len(set(seen["a"])) == 15
