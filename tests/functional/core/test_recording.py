"""Recording runs: what record_runs and CRUX_DEVTOOLS_RECORD write, and that recording never changes a run."""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from crux_devtools import (
    RunError,
    ModelCapacityProfile,
    RequestCompositionError,
    RunRecorder,
    ScriptedModel,
    agenerate,
    agent,
    context,
    generate,
    prompt,
    record_runs,
    tool,
    tool_call,
)
from crux_devtools.core.record import recording
from crux_devtools.core.record.runstore import RunStore
from waits import WAIT

REPO = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve()


class Query(BaseModel):
    query: str


class Question(BaseModel):
    question: str = "where is my parcel?"


class Opaque:
    def __repr__(self) -> str:
        return "<Opaque thing>"


search = tool("search", description="Search the docs", parameters=Query, execute=lambda p: {"hits": [p.query], "raw": Opaque()})
explode = tool("explode", description="Always fails", parameters=Query, execute=lambda p: 1 / 0)
CAPACITY = ModelCapacityProfile(100_000, 0, "exact")
ask = prompt("ask", system="You answer questions.", prompt=lambda i: i.question, input=Question, tools=[search, explode])
ASK_LINE = next(n for n, line in enumerate(HERE.read_text().splitlines(), 1) if line.startswith("ask = prompt("))


def helper_agent(responses: list[Any], **kwargs: Any) -> Any:
    return agent("helper", prompt=ask, model=ScriptedModel(responses, capacity=CAPACITY), **kwargs)


def stored(root: Path) -> list[dict[str, Any]]:
    with RunStore.for_project(root, create=False) as store:
        return [store.get(r["id"]) for r in store.list(limit=1000)]


@pytest.fixture(autouse=True)
def no_recorders_left() -> None:
    yield
    for r in list(recording._active):
        r.close()


def test_a_recorded_agent_run_holds_every_step_the_literal_request_and_the_source_line(tmp_path: Path) -> None:
    m = ScriptedModel([[tool_call("search", {"query": "parcel"})], "It is in Rotterdam."], capacity=CAPACITY, name="scripted-x")
    bot = agent("bot", prompt=ask, model=m)
    bot_line = sys._getframe().f_lineno - 1
    with record_runs(tmp_path) as recorder:
        result = generate(bot, input={"question": "where?"})
    assert recorder.written == 1
    [run] = stored(tmp_path)
    assert (run["target"], run["kind"], run["origin"], run["status"], run["error"]) == ("bot", "agent", "app", "ok", None)
    assert run["file"] == str(HERE) and run["line"] == bot_line  # outside the recorded folder: absolute
    assert run["model"] == "scripted-x" and run["input"] == {"question": "where?"} and run["text"] == "It is in Rotterdam."
    assert run["started_at"].endswith("+00:00") and run["duration_ms"] > 0
    assert len(run["steps"]) == 2
    assert run["steps"] == [s.to_dict() | {"tool_results": run["steps"][i]["tool_results"]} for i, s in enumerate(result.steps)]
    first = run["steps"][0]
    assert first["sent"]["system"] == m.requests[0].system and first["sent"]["tools"][0]["name"] == "search"
    assert first["tool_results"][0]["output"] == {"hits": ["parcel"], "raw": "<Opaque thing>"}
    assert first["request"]["input_tokens"] == result.steps[0].request.input_tokens
    assert RunStore.for_project(tmp_path).list()[0]["input_tokens"] == sum(s.request.input_tokens for s in result.steps)


def test_a_prompt_run_records_its_definition_line_relative_to_the_recorded_folder(tmp_path: Path) -> None:
    script = tmp_path / "app.py"
    script.write_text(textwrap.dedent("""
        from crux_devtools import ScriptedModel, generate, prompt, record_runs
        p = prompt("greet", system="Be brief.", prompt="hi", model=ScriptedModel(["hello"], name="tiny"))
        record_runs(".")
        print(generate(p).text)
    """))
    done = subprocess.run([sys.executable, "app.py"], cwd=tmp_path, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "hello"
    [run] = stored(tmp_path)
    assert (run["target"], run["kind"], run["file"], run["line"], run["model"], run["text"]) == ("greet", "prompt", "app.py", 3, "tiny", "hello")


def test_failed_runs_are_recorded_with_their_status_and_error(tmp_path: Path) -> None:
    failures: list[RunError] = []
    with record_runs(tmp_path):
        for script, steps in (([[tool_call("explode", {"query": "x"})]], 8), ([[tool_call("nope", {})]], 8), ([[tool_call("search", {"q": 1})]], 8),
                              ([[tool_call("search", {"query": "a"})]] * 2, 2), ([], 8)):
            with pytest.raises(RunError) as caught:
                generate(helper_agent(script, max_steps=steps))
            failures.append(caught.value)
    assert [e.stop_reason for e in failures] == ["error", "error", "error", "max_steps", "error"]
    runs = {r["error"]["type"]: r for r in stored(tmp_path)}
    assert set(runs) == {"ZeroDivisionError", "UnknownTool", "InvalidToolArguments", "MaxSteps", "ModelError"}
    assert "ran out of responses" in runs["ModelError"]["error"]["message"]
    assert runs["ZeroDivisionError"]["status"] == "error" and "division by zero" in runs["ZeroDivisionError"]["error"]["message"]
    assert "Traceback" in runs["ZeroDivisionError"]["error"]["traceback"]
    assert runs["MaxSteps"]["status"] == "max_steps" and len(runs["MaxSteps"]["steps"]) == 2
    assert all(r["text"] is None for r in runs.values())


def test_a_planning_error_is_recorded_and_re_raised_unchanged(tmp_path: Path) -> None:
    huge = prompt("huge", system="word " * 5000, model=ScriptedModel(["never"], capacity=ModelCapacityProfile(1000, 100, "exact")))
    with record_runs(tmp_path), pytest.raises(RequestCompositionError) as caught:
        generate(huge)
    assert caught.value.code == "REQUEST_TOO_LARGE" and caught.value.steps == []
    [run] = stored(tmp_path)
    assert run["status"] == "error" and run["error"]["type"] == "RequestCompositionError"
    assert run["error"]["message"] == str(caught.value) and run["steps"] == [] and run["model"] == "scripted"


def test_an_input_that_does_not_validate_is_recorded_as_given_and_the_error_raised(tmp_path: Path) -> None:
    with record_runs(tmp_path), pytest.raises(Exception, match="question"):
        generate(helper_agent(["x"]), input={"question": {"not": "a string"}, "extra": Opaque()})
    [run] = stored(tmp_path)
    assert run["status"] == "error" and run["input"] == {"question": {"not": "a string"}, "extra": "<Opaque thing>"}


def test_recording_does_not_change_what_a_run_returns_or_sends(tmp_path: Path) -> None:
    script = [[tool_call("search", {"query": "parcel"})], "Done."]
    plain_model, recorded_model = ScriptedModel(list(script), capacity=CAPACITY), ScriptedModel(list(script), capacity=CAPACITY)
    plain = generate(agent("a", prompt=ask, model=plain_model))
    with record_runs(tmp_path):
        recorded = generate(agent("a", prompt=ask, model=recorded_model))
    assert (plain.text, plain.stop_reason, len(plain.steps)) == (recorded.text, recorded.stop_reason, len(recorded.steps))
    assert [r.to_dict() for r in plain_model.requests] == [r.to_dict() for r in recorded_model.requests]


def test_a_write_that_fails_turns_recording_off_with_one_warning_and_never_breaks_the_run(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / ".crux").write_text("not a folder")
    caplog.set_level(logging.WARNING, logger="crux_devtools")
    recorder = record_runs(tmp_path)
    results = []
    for _ in range(3):
        results.append(generate(helper_agent(["fine"])))
    assert [r.text for r in results] == ["fine", "fine", "fine"]
    warnings = [r for r in caplog.records if r.name == "crux_devtools"]
    assert len(warnings) == 1, [w.getMessage() for w in warnings]
    assert "recording runs to" in warnings[0].getMessage() and "is a file, not a folder" in warnings[0].getMessage()
    assert not recorder.enabled and recorder not in recording._active


def test_redact_rewrites_each_run_before_it_is_written(tmp_path: Path) -> None:
    def redact(run: dict[str, Any]) -> dict[str, Any]:
        run["input"] = {"question": "[redacted]"}
        for step in run["steps"]:
            step["sent"]["messages"] = []
        return run

    with record_runs(tmp_path, redact=redact):
        generate(helper_agent(["ok"]), input={"question": "my card is 4111 1111"})
    [run] = stored(tmp_path)
    assert run["input"] == {"question": "[redacted]"} and run["steps"][0]["sent"]["messages"] == []
    assert "4111" not in (tmp_path / ".crux" / "runs.sqlite3").read_bytes().decode("latin-1")


def test_a_redact_that_raises_or_returns_nothing_turns_recording_off_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="crux_devtools")
    for redact, message in ((lambda run: 1 / 0, "redact raised ZeroDivisionError"), (lambda run: None, "redact returned NoneType")):
        caplog.clear()
        recorder = record_runs(tmp_path, redact=redact)
        assert [generate(helper_agent(["ok"])).text for _ in range(2)] == ["ok", "ok"]
        assert [r.getMessage() for r in caplog.records if message in r.getMessage()] != []
        assert len(caplog.records) == 1 and not recorder.enabled
        recorder.close()  # its redact stays in force until then: runs are withheld, never sent unmasked
    assert stored(tmp_path) == []


def test_keep_holds_only_the_newest_runs(tmp_path: Path) -> None:
    with record_runs(tmp_path, keep=2):
        for q in ("one", "two", "three"):
            generate(helper_agent(["ok"]), input={"question": q})
    assert [r["input"]["question"] for r in stored(tmp_path)] == ["three", "two"]


def test_bad_recorder_arguments_raise_clear_errors() -> None:
    with pytest.raises(ValueError, match="keep must be a positive int"):
        record_runs(".", keep=0)
    with pytest.raises(TypeError, match="redact must be a function"):
        record_runs(".", redact="no")  # type: ignore[arg-type]


def test_nothing_is_recorded_or_created_while_recording_is_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    recorder = record_runs(tmp_path / "elsewhere")
    recorder.close()
    generate(helper_agent(["ok"]))
    assert recording.begin(ask, {}) is None
    assert not (tmp_path / ".crux").exists() and not (tmp_path / "elsewhere" / ".crux").exists()


def test_an_async_run_inside_a_running_loop_is_recorded(tmp_path: Path) -> None:
    async def main() -> str | None:
        with record_runs(tmp_path):
            return (await agenerate(helper_agent(["async ok"]))).text

    assert asyncio.run(main()) == "async ok"
    assert [r["text"] for r in stored(tmp_path)] == ["async ok"]


def test_a_recording_scope_sets_the_origin_and_collects_the_run_without_turning_recording_on(tmp_path: Path) -> None:
    own = RunRecorder(tmp_path)
    with recording.recording_scope(origin="inspector", recorder=own) as scope:
        generate(helper_agent(["from the inspector"]))
    generate(helper_agent(["not recorded"]))
    own.close()
    assert [r["text"] for r in scope.runs] == ["from the inspector"]
    [run] = stored(tmp_path)
    assert run["origin"] == "inspector" and run["text"] == "from the inspector"


ENV_SCRIPT = """
import sys
import crux_devtools
from crux_devtools import ScriptedModel, generate, prompt
p = prompt("envy", system="s", prompt="hi", model=ScriptedModel(["one", "two"]))
import os
print(os.path.exists(os.path.join(sys.argv[1], ".crux")), flush=True)
generate(p)
generate(p)
"""


def test_the_environment_variable_turns_recording_on_at_the_first_run_not_at_import(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO), "CRUX_DEVTOOLS_RECORD": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", ENV_SCRIPT, str(tmp_path)], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
    assert [r["text"] for r in stored(tmp_path)] == ["two", "one"]


def test_a_bad_environment_variable_warns_and_the_run_goes_on(tmp_path: Path) -> None:
    (tmp_path / "blocked").write_text("file")
    env = {**os.environ, "PYTHONPATH": str(REPO), "CRUX_DEVTOOLS_RECORD": str(tmp_path / "blocked")}
    code = ENV_SCRIPT + "print('done')\n"
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "done"]
    assert done.stderr.count("recording runs to") == 1 and "is a file, not a folder" in done.stderr


def test_the_core_exports_the_recording_names() -> None:
    import crux_devtools
    import crux_devtools.core as core

    assert "record_runs" in crux_devtools.__all__ and "RunRecorder" in core.__all__
    assert crux_devtools.record_runs is recording.record_runs and ask.defined_at == (str(HERE), ASK_LINE)


HOLD_LOCK = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
conn.execute("UPDATE meta SET value = value WHERE key = 'writes'")
print("locked", flush=True)
sys.stdin.readline()
conn.execute("COMMIT")
print("released", flush=True)
"""


def lock_holder(db: Path) -> subprocess.Popen[str]:
    """Another process that holds the runs database's write lock until a line is written to it."""
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    return holder


def release(holder: subprocess.Popen[str]) -> None:
    assert holder.stdin is not None and holder.stdout is not None
    holder.stdin.write("release\n")
    holder.stdin.flush()
    assert holder.stdout.readline().strip() == "released"


@contextmanager
def write_lock_held(db: Path) -> Iterator[None]:
    """The runs database's write lock is held by another process for the whole block."""
    holder = lock_holder(db)
    try:
        yield
        release(holder)
    finally:
        holder.kill()
        holder.wait(60)


def test_another_process_holding_the_write_lock_delays_runs_but_loses_none(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="crux_devtools")
    recorder = record_runs(tmp_path)
    assert generate(helper_agent(["run 0"])).text == "run 0"
    with write_lock_held(recorder.path):
        texts = [generate(helper_agent([f"run {n}"])).text for n in range(1, 11)]  # the runs go on meanwhile
        assert texts == [f"run {n}" for n in range(1, 11)]
        assert recorder.enabled and recorder.failure is None
    assert recorder.flush(60), "the runs waiting for the lock were not written once it was free"
    assert recorder.enabled and recorder.written == 11 and recorder.pending == 0
    assert sorted(r["text"] for r in stored(tmp_path)) == sorted(f"run {n}" for n in range(11))
    assert not [r for r in caplog.records if "is off for this process" in r.getMessage()]


def test_a_run_waiting_for_a_lock_is_written_when_the_recorder_closes(tmp_path: Path) -> None:
    recorder = record_runs(tmp_path)
    generate(helper_agent(["first"]))
    with write_lock_held(recorder.path):
        generate(helper_agent(["second"]))
    recorder.close()  # the holder has released: the waiting run goes in before the store closes
    assert sorted(r["text"] for r in stored(tmp_path)) == ["first", "second"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_records_through_its_own_connection(tmp_path: Path) -> None:
    with record_runs(tmp_path):
        generate(helper_agent(["parent before"]))
        pid = os.fork()
        if pid == 0:  # the child: record one run, then leave without running the parent's cleanup
            code = 0
            try:
                generate(helper_agent(["child"]))
            except BaseException:  # noqa: BLE001
                code = 1
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        generate(helper_agent(["parent after"]))
    assert os.waitstatus_to_exitcode(status) == 0
    assert sorted(r["text"] for r in stored(tmp_path)) == ["child", "parent after", "parent before"]


def test_a_run_waiting_for_a_lock_is_written_when_the_application_exits(tmp_path: Path) -> None:
    RunStore.for_project(tmp_path).close()  # the file exists: the holder below can lock it
    holder = lock_holder(tmp_path / ".crux" / "runs.sqlite3")
    # The application's own exit handler (it runs before recording's) waits until the lock is gone:
    # the run is still waiting when the process ends, and its retry thread would not try for an hour.
    app_code = textwrap.dedent(f"""
        import atexit, sys, threading
        sys.path[:0] = [{str(HERE.parent)!r}, {str(HERE.parents[2])!r}]  # test_recording and the helpers it imports
        from crux_devtools import generate, record_runs
        from crux_devtools.core.record import recording
        from test_recording import helper_agent
        recording.RETRY_SECONDS = 3600
        locked_seen = threading.Semaphore(0)
        is_locked = recording.is_locked
        recording.is_locked = lambda exc: locked_seen.release() or is_locked(exc)
        recorder = record_runs({str(tmp_path)!r})
        print(generate(helper_agent(["while locked"])).text, recorder.pending, flush=True)
        # the write met the lock, then the retry thread tried once and now waits for an hour
        assert locked_seen.acquire(timeout={WAIT}) and locked_seen.acquire(timeout={WAIT})
        atexit.register(lambda: (print("exiting", flush=True), sys.stdin.readline()))
    """)
    try:
        app = subprocess.Popen([sys.executable, "-c", app_code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO)
        assert app.stdout is not None and app.stdin is not None
        assert app.stdout.readline().strip() == "while locked 1"  # the run waits for the lock
        assert app.stdout.readline().strip() == "exiting"
        release(holder)
        app.stdin.write("go on\n")
        app.stdin.flush()
        assert app.wait(120) == 0
    finally:
        holder.kill()
        holder.wait(60)
    assert [r["text"] for r in stored(tmp_path)] == ["while locked"]
