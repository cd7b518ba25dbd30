"""``crux-devtools runs`` and ``crux-devtools run``, run for real: in this process with in-process workers
(``cli_in_process``), and as processes (worker processes included) for a run's printed answer and
for ``runs --follow`` stopped by a signal."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from cli_in_process import cli as in_process_cli
from child_signals import INTERRUPTIBLE, ignores_sigint
from waits import WAIT, Lines

from crux_devtools.core.record.runstore import RunStore

REPO = Path(__file__).resolve().parents[3]
PROJECT = Path(__file__).parents[2] / "projects" / "runs"
CLI = str(Path(sys.executable).with_name("crux-devtools"))


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``crux-devtools ARGS`` in this process, its workers in-process."""
    return in_process_cli(*args, cwd=REPO)


def cli_process(*args: str, timeout: float = WAIT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=timeout, cwd=REPO)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copytree(PROJECT, tmp_path, dirs_exist_ok=True)
    return tmp_path


def write_runs(root: Path, *runs: dict) -> None:
    with RunStore.for_project(root) as store:
        for run in runs:
            store.write(run)


def fake(n: int, target: str = "helper", status: str = "ok") -> dict:
    return {
        "id": f"r{n}", "target": target, "kind": "agent", "origin": "app", "status": status, "model": "m-1",
        "started_at": f"2026-03-0{n}T10:00:00+00:00", "duration_ms": 1500.0 + n, "text": f"text {n}",
        "usage": {"input_tokens": 120, "output_tokens": 7}, "error": None,
        "steps": [{"index": 0, "request": {"input_tokens": 1000 + n}}],
    }


def test_run_prints_the_answer_and_a_summary_and_records_the_run(project: Path) -> None:
    done = cli_process("run", str(project), "--prompt", "helper", "--example", "first")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "In Rotterdam.\n"
    [summary] = done.stderr.strip().splitlines()
    assert summary.startswith("ok · helper · 2 steps · ") and "input tokens sent" in summary and "recorded as " in summary
    listed = json.loads(cli("runs", str(project), "--json").stdout)
    assert [(r["target"], r["origin"], r["status"], len(r["steps"])) for r in listed] == [("helper", "inspector", "ok", 2)]
    assert summary.endswith(listed[0]["id"])


def test_run_with_a_custom_input_and_json_output(project: Path) -> None:
    done = cli("run", str(project), "--prompt", "solo", "--input", "{}", "--json")
    assert done.returncode == 0, done.stderr
    run = json.loads(done.stdout)
    assert (run["target"], run["kind"], run["text"], run["recorded"]) == ("solo", "prompt", "Hi from a prompt.", True)


def test_a_failed_run_prints_its_error_and_exits_1(project: Path) -> None:
    done = cli("run", str(project), "--prompt", "raiser")
    assert done.returncode == 1
    assert done.stdout == ""
    assert "ZeroDivisionError: tool 'explode' raised ZeroDivisionError: division by zero" in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("error · raiser · 1 step · ")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--prompt", "nope"), "no prompt or agent with id 'nope'; known ids: ask, helper, raiser"),
        (("--prompt", "plain"), "prompt 'plain' has no model to call; runnable: helper, raiser"),
        (("--prompt", "helper", "--example", "zzz"), "agent 'helper' has no example 'zzz'; known examples: first"),
        (("--prompt", "helper", "--input", "[1]"), "must be a JSON object"),
        (("--prompt", "helper", "--input", "{}", "--example", "first"), "use either --example or --input"),
    ],
)
def test_run_refuses_bad_requests_with_a_clear_message(project: Path, args: tuple[str, ...], message: str) -> None:
    done = cli("run", str(project), *args)
    assert done.returncode != 0 and message in done.stderr, done.stderr
    assert not (project / ".crux" / "runs.sqlite3").exists() or RunStore.for_project(project).count() == 0


def test_runs_lists_newest_first_with_filters_and_limit(project: Path) -> None:
    write_runs(project, fake(1), fake(2, status="error"), fake(3, target="solo"), fake(4))
    done = cli("runs", str(project))
    assert done.returncode == 0, done.stderr
    header, *lines = done.stdout.splitlines()
    assert header.split()[:4] == ["TIME", "TARGET", "STATUS", "STEPS"]
    assert [line.split()[-1] for line in lines] == ["r4", "r3", "r2", "r1"]
    first = lines[0].split()
    assert first[2:5] == ["helper", "ok", "1"] and "1,004" in first and "120/7" in first and "1.50" in lines[0] and "m-1" in first
    assert [l.split()[-1] for l in cli("runs", str(project), "--target", "helper", "--status", "ok").stdout.splitlines()[1:]] == ["r4", "r1"]
    assert [l.split()[-1] for l in cli("runs", str(project), "--limit", "2").stdout.splitlines()[1:]] == ["r4", "r3"]
    whole = json.loads(cli("runs", str(project), "--json", "--status", "error").stdout)
    assert [r["id"] for r in whole] == ["r2"] and whole[0]["steps"] == [{"index": 0, "request": {"input_tokens": 1002}}]


def test_runs_with_nothing_recorded_says_how_to_record(project: Path) -> None:
    done = cli("runs", str(project))
    assert done.returncode == 0 and done.stdout == ""
    assert "no runs recorded" in done.stderr and "record_runs(...)" in done.stderr and "CRUX_DEVTOOLS_RECORD" in done.stderr
    assert not (project / ".crux").exists()


def test_runs_on_a_corrupt_store_exits_1_with_a_clear_message(project: Path) -> None:
    (project / ".crux").mkdir()
    (project / ".crux" / "runs.sqlite3").write_bytes(b"garbage" * 500)
    done = cli("runs", str(project))
    assert done.returncode == 1 and "not a valid runs database" in done.stderr and "Traceback" not in done.stderr


def test_runs_rejects_an_unknown_status() -> None:
    done = cli("runs", str(PROJECT), "--status", "fine")
    assert done.returncode == 2 and "'fine' is not one of 'ok', 'error', 'max_steps'" in done.stderr


APP = """
import sys
from crux_devtools import ScriptedModel, generate, prompt, record_runs
p = prompt(sys.argv[2], system="s", prompt="hi", model=ScriptedModel(["ok"]))
with record_runs(sys.argv[1]):
    generate(p)
"""


def test_runs_follow_prints_new_runs_as_they_are_recorded_until_ctrl_c(project: Path) -> None:
    write_runs(project, fake(1))
    proc = subprocess.Popen([CLI, "runs", str(project), "--follow"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, **INTERRUPTIBLE)
    try:
        assert proc.stdout is not None and proc.stderr is not None
        out, err = Lines(proc.stdout), Lines(proc.stderr)
        assert out.next().startswith("TIME")
        assert out.next().rstrip().endswith("r1")
        assert "following new runs" in err.next()
        for name in ("first-new", "second-new"):
            env = {**os.environ, "PYTHONPATH": str(REPO)}
            subprocess.run([sys.executable, "-c", APP, str(project), name], check=True, env=env, timeout=WAIT)
            line = out.next()  # how soon it comes is measured in benchmarks/, not here
            assert line.split()[2] == name and " app " in line, line
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=WAIT) == 0
        rest = []
        while line := err.next():
            rest.append(line)
        assert "Traceback" not in "".join(rest)
    finally:
        if proc.poll() is None:
            proc.kill()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_runs_follow_stops_on_sigint_when_the_suite_runs_as_a_background_job(project: Path) -> None:
    """A suite started with ``&`` has SIGINT ignored, and so has every child it starts unless the test
    gives SIGINT back: then ``runs --follow`` never saw the SIGINT the test above sends it."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # as the shell starts a background job
    try:
        proc = subprocess.Popen([CLI, "runs", str(project), "--follow"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=REPO, **INTERRUPTIBLE)
    finally:
        signal.signal(signal.SIGINT, previous)
    try:
        assert proc.stderr is not None
        assert "following new runs" in Lines(proc.stderr).next()  # sent at once: a SIGINT before its loop was an "Aborted!" exit 1
        assert not ignores_sigint(proc.pid)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=WAIT) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
