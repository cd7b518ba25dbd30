"""The runs store on real SQLite files: writing, listing, filters, retention and every fault it must survive."""

from __future__ import annotations

import ast
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from waits import WAIT

from crux_devtools.core.record.runstore import RUNS_FILE, TEXT_CAP, RunStore, RunStoreError, storable

REPO = Path(__file__).resolve().parents[3]


def make_run(n: int, *, target: str = "support-agent", status: str = "ok", origin: str = "app", steps: int = 2, **extra: Any) -> dict[str, Any]:
    run = {
        "id": f"run-{n}",
        "target": target,
        "kind": "agent",
        "file": "app.py",
        "line": 12,
        "origin": origin,
        "started_at": f"2026-01-01T00:00:{n % 60:02d}.{n:06d}+00:00",
        "duration_ms": 12.5,
        "status": status,
        "error": None if status == "ok" else {"type": "ToolError", "message": f"tool exploded {n}", "traceback": "Traceback..."},
        "model": "scripted",
        "input": {"question": f"where is order {n}?"},
        "text": f"answer number {n}",
        "usage": {"input_tokens": 10, "output_tokens": 3},
        "steps": [{"index": i, "request": {"input_tokens": 100 + i}, "sent": {"system": "sys", "messages": [], "tools": []}} for i in range(steps)],
    }
    run.update(extra)
    return run


@pytest.fixture
def store(tmp_path: Path) -> RunStore:
    s = RunStore.for_project(tmp_path)
    yield s
    s.close()


def test_a_written_run_comes_back_whole_and_lists_as_a_summary(store: RunStore, tmp_path: Path) -> None:
    store.write(make_run(1))
    assert (tmp_path / RUNS_FILE).is_file()
    got = store.get("run-1")
    assert got == make_run(1)
    [summary] = store.list()
    assert "steps" not in summary
    assert summary["step_count"] == 2 and summary["input_tokens"] == 201
    assert summary["target"] == "support-agent" and summary["text"] == "answer number 1"
    assert store.get("no-such-run") is None


def test_runs_list_newest_first_by_start_time_and_page_with_limit_and_offset(store: RunStore) -> None:
    for n in (3, 1, 5, 2, 4):
        store.write(make_run(n))
    assert [r["id"] for r in store.list()] == ["run-5", "run-4", "run-3", "run-2", "run-1"]
    assert [r["id"] for r in store.list(limit=2, offset=1)] == ["run-4", "run-3"]
    assert store.count() == 5


def test_filters_by_target_status_and_origin_combine_and_count_agrees(store: RunStore) -> None:
    store.write(make_run(1, target="a"))
    store.write(make_run(2, target="b", status="error"))
    store.write(make_run(3, target="a", status="error", origin="inspector"))
    store.write(make_run(4, target="a", status="max_steps"))
    assert [r["id"] for r in store.list(target="a")] == ["run-4", "run-3", "run-1"]
    assert [r["id"] for r in store.list(status="error")] == ["run-3", "run-2"]
    assert [r["id"] for r in store.list(target="a", status="error", origin="inspector")] == ["run-3"]
    assert store.count(target="a", status="error") == 1
    assert store.list(target="nobody") == [] and store.count(origin="app", status="nope") == 0


def test_text_search_matches_words_of_the_input_text_error_model_and_target(store: RunStore) -> None:
    store.write(make_run(1, input={"question": "refund for the blue kettle"}, text="sure"))
    store.write(make_run(2, text="The parcel left Rotterdam"))
    store.write(make_run(3, status="error", error={"type": "TimeoutError", "message": "upstream took too long", "traceback": ""}))
    store.write(make_run(4, target="billing-bot", model="gpt-4o-mini"))
    assert [r["id"] for r in store.list(text="kettle")] == ["run-1"]
    assert [r["id"] for r in store.list(text="rotterd")] == ["run-2"]  # a prefix of a word matches
    assert [r["id"] for r in store.list(text="TimeoutError")] == ["run-3"]
    assert [r["id"] for r in store.list(text="gpt-4o")] == ["run-4"]
    assert [r["id"] for r in store.list(text="billing-bot")] == ["run-4"]
    assert store.count(text="blue kettle") == 1 and store.count(text="blue parcel") == 0
    for odd in ('"', "a\"b OR (", "NEAR(", "*", "-", "%_"):
        assert isinstance(store.list(text=odd), list)  # FTS5 syntax in user text never raises


def test_retention_keeps_the_newest_runs_and_deletes_the_steps_of_the_others(store: RunStore) -> None:
    for n in range(1, 8):
        store.write(make_run(n), keep=3)
    assert [r["id"] for r in store.list()] == ["run-7", "run-6", "run-5"]
    with sqlite3.connect(store.path) as conn:
        assert conn.execute("SELECT count(*) FROM steps").fetchone()[0] == 6
        assert conn.execute("SELECT count(*) FROM runs_fts").fetchone()[0] == 3
    assert store.prune(1) == 2 and [r["id"] for r in store.list()] == ["run-7"]


def test_writing_a_run_with_a_known_id_replaces_it(store: RunStore) -> None:
    store.write(make_run(1, text="first"))
    store.write(make_run(1, text="second", steps=1))
    assert store.count() == 1
    assert store.get("run-1")["text"] == "second" and len(store.get("run-1")["steps"]) == 1
    assert store.count(text="first") == 0


def test_a_run_without_an_id_or_start_time_gets_both(store: RunStore) -> None:
    run_id = store.write({"target": "p", "status": "ok"})
    got = store.get(run_id)
    assert got["started_at"] and got["origin"] == "app" and got["steps"] == []


class Unprintable:
    def __repr__(self) -> str:
        raise RuntimeError("no repr for you")


def test_values_that_are_not_json_are_stored_as_their_repr_and_never_raise(store: RunStore) -> None:
    cyclic: list[Any] = [1]
    cyclic.append(cyclic)
    odd = {
        "obj": object(),
        "when": __import__("datetime").date(2026, 1, 2),
        "nan": float("nan"),
        "set": {3, 1, 2},
        "bytes": b"\x00\xff",
        (1, 2): "tuple key",
        5: "int key",
        "cycle": cyclic,
        "broken": Unprintable(),
    }
    store.write(make_run(1, input=odd, steps=0) | {"steps": [{"index": 0, "tool_results": [{"output": object()}]}]})
    got = store.get("run-1")
    assert got["input"]["obj"].startswith("<object object at")
    assert got["input"]["when"] == "datetime.date(2026, 1, 2)"
    assert got["input"]["nan"] == "nan" and got["input"]["set"] == [1, 2, 3] and got["input"]["bytes"] == "b'\\x00\\xff'"
    assert got["input"]["(1, 2)"] == "tuple key" and got["input"]["5"] == "int key"
    assert got["input"]["cycle"] == [1, "<cycle: list>"]
    assert "repr() raised RuntimeError" in got["input"]["broken"]
    assert got["steps"][0]["tool_results"][0]["output"].startswith("<object object")


def test_a_50_mb_tool_result_is_kept_up_to_the_cap_with_its_true_size(store: RunStore) -> None:
    huge = "x" * (50 * 1024 * 1024)
    step = {"index": 0, "tool_results": [{"name": "dump", "output": huge, "model_output": huge}]}
    store.write(make_run(1, steps=0, text=huge) | {"steps": [step]})
    got = store.get("run-1")
    out = got["steps"][0]["tool_results"][0]["output"]
    assert out.startswith("x" * TEXT_CAP) and len(out) < TEXT_CAP + 200
    assert "52,428,800 characters in all" in out
    assert "52,428,800 characters in all" in got["text"]
    assert os.path.getsize(store.path) + os.path.getsize(store.path + "-wal") < 20 * 1024 * 1024
    assert storable("short") == "short"


def test_a_missing_file_opened_without_create_is_an_empty_store_until_a_writer_creates_it(tmp_path: Path) -> None:
    reader = RunStore.for_project(tmp_path, create=False)
    assert reader.list() == [] and reader.get("x") is None and reader.count() == 0 and reader.change_token() == 0
    assert not (tmp_path / ".crux").exists()
    with pytest.raises(RunStoreError, match="create=False"):
        reader.write(make_run(1))
    with RunStore.for_project(tmp_path) as writer:
        writer.write(make_run(1))
    assert [r["id"] for r in reader.list()] == ["run-1"] and reader.change_token() >= 1
    reader.close()


def test_change_token_grows_when_another_process_writes(tmp_path: Path) -> None:
    reader = RunStore.for_project(tmp_path)
    before = reader.change_token()
    writer = f"from crux_devtools.core.record.runstore import RunStore\nRunStore.for_project({str(tmp_path)!r}).write({{'id': 'x', 'target': 't'}})\n"
    subprocess.run([sys.executable, "-c", writer], check=True, cwd=REPO)
    assert reader.change_token() > before
    assert reader.get("x")["target"] == "t"


def test_a_corrupt_file_gives_a_clear_error_and_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / RUNS_FILE
    path.parent.mkdir()
    path.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(RunStoreError, match="not a valid runs database.*move it aside"):
        RunStore(path)
    reader = RunStore(path, create=False)
    with pytest.raises(RunStoreError, match="not a valid runs database"):
        reader.list()
    assert path.read_bytes().startswith(b"this is not sqlite")


def test_a_crux_that_is_a_file_gives_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / ".crux").write_text("oops")
    with pytest.raises(RunStoreError, match=r"\.crux' is a file, not a folder; remove or rename it"):
        RunStore.for_project(tmp_path)
    assert RunStore.for_project(tmp_path, create=False).list() == []


def test_a_newer_schema_version_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    with RunStore.for_project(tmp_path) as s:
        s.write(make_run(1))
        path = s.path
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 99")
    with pytest.raises(RunStoreError, match="schema version 99 is newer than this release.*upgrade crux_devtools"):
        RunStore(path)
    with pytest.raises(RunStoreError, match="schema version 99"):
        RunStore(path, create=False).list()


def test_a_locked_database_fails_the_write_after_the_busy_timeout_and_works_once_released(tmp_path: Path) -> None:
    s = RunStore.for_project(tmp_path, busy_timeout=0.2)
    s.write(make_run(1))
    locker = sqlite3.connect(s.path, isolation_level=None)
    locker.execute("BEGIN EXCLUSIVE")
    started = time.monotonic()
    with pytest.raises(RunStoreError, match="locked by another process"):
        s.write(make_run(2))
    assert time.monotonic() - started >= 0.15
    locker.execute("ROLLBACK")
    locker.close()
    s.write(make_run(2))
    assert s.count() == 2


AS_NOBODY = """
import os, sys, json
from crux_devtools.core.record.runstore import RunStore, RunStoreError  # imported first: the stdlib may not be readable by nobody
os.setgid(65534); os.setuid(65534)
root = sys.argv[1]
out = {}
try:
    RunStore.for_project(root).write({"id": "new", "target": "t"})
    out["write"] = "ok"
except RunStoreError as exc:
    out["write"] = str(exc)
out["read"] = [r["id"] for r in RunStore.for_project(root, create=False).list()]
print(json.dumps(out))
"""


@pytest.mark.skipif(not hasattr(os, "setuid"), reason="needs POSIX users")
def test_a_read_only_folder_refuses_writes_clearly_and_still_reads() -> None:
    root = Path(tempfile.mkdtemp(prefix="crux-ro-"))
    try:
        os.chmod(root, 0o755)
        with RunStore.for_project(root) as s:
            s.write(make_run(1))
        for path in (root, root / ".crux"):
            os.chmod(path, 0o555)
        for path in (root / ".crux").iterdir():
            os.chmod(path, 0o444)
        if os.getuid() == 0:
            cmd = [sys.executable, "-c", AS_NOBODY, str(root)]
        else:
            cmd = [sys.executable, "-c", AS_NOBODY.replace("os.setgid(65534); os.setuid(65534)", ""), str(root)]
        done = subprocess.run(cmd, capture_output=True, text=True, cwd="/", env={**os.environ, "PYTHONPATH": str(REPO)})
        assert done.returncode == 0, done.stderr
        out = json.loads(done.stdout)
        assert "read-only" in out["write"] or "readonly" in out["write"] or "cannot open" in out["write"], out
        assert out["read"] == ["run-1"]
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(root)], check=False)
        subprocess.run(["rm", "-rf", str(root)], check=False)


WRITER = """
import sys
from crux_devtools.core.record.runstore import RunStore
root, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = RunStore.for_project(root)
for i in range(count):
    store.write({"id": f"{name}-{i}", "target": name, "status": "ok", "text": "t" * 2000,
                 "steps": [{"index": 0, "request": {"input_tokens": i}}]}, keep=100000)
"""


def test_three_writer_processes_at_once_lose_nothing(tmp_path: Path) -> None:
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), f"w{k}", "150"], cwd=REPO, stderr=subprocess.PIPE, text=True) for k in range(3)]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    with RunStore.for_project(tmp_path, create=False) as s:
        assert s.count() == 450
        for k in range(3):
            assert s.count(target=f"w{k}") == 150
        assert s.change_token() == 450


# Each round: 8 processes forked from one that imported the store once (no connection open yet),
# let go together when the parent closes their pipe; each opens the new store, writes and closes.
OPENERS = """
import os, sys, traceback
from crux_devtools.core.record.runstore import RunStore
failed = 0
for root in sys.argv[1:]:
    go, release = os.pipe()
    children = []
    for k in range(8):
        pid = os.fork()
        if pid == 0:
            os.close(release)
            os.read(go, 1)  # returns when the parent closes its end: every opener starts at once
            code = 0
            try:
                store = RunStore.for_project(root)
                store.write({"id": f"r{k}", "target": "t", "status": "ok", "steps": []})
                store.close()
            except BaseException:
                traceback.print_exc()
                code = 1
            sys.stderr.flush()
            os._exit(code)
        children.append(pid)
    os.close(go)
    os.close(release)
    failed += sum(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) != 0 for pid in children)
sys.exit(1 if failed else 0)
"""


def test_processes_opening_and_closing_a_new_store_at_once_all_get_in(tmp_path: Path) -> None:
    """While one process creates the file or, as its last user, tidies it up on close, SQLite may refuse
    another's switch to WAL at once, without the busy wait: opening retries it."""
    roots = [tmp_path / f"round{round_}" for round_ in range(6)]
    done = subprocess.run([sys.executable, "-c", OPENERS, *map(str, roots)], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    for root in roots:
        with RunStore.for_project(root, create=False) as s:
            assert s.count() == 8


KILLED = """
import sys
from crux_devtools.core.record.runstore import RunStore
store = RunStore.for_project(sys.argv[1])
i = 0
print("started", flush=True)
while True:
    store.write({"id": f"r{i}", "target": "t", "text": "y" * 300000,
                 "steps": [{"index": s, "sent": {"system": "z" * 50000}} for s in range(5)]}, keep=50)
    if i == 2:
        print("wrote", flush=True)  # a few runs are in: the next write is under way
    i += 1
"""


def test_a_process_killed_mid_write_leaves_the_database_usable(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", KILLED, str(tmp_path)], cwd=REPO, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "started"
    assert proc.stdout.readline().strip() == "wrote"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=WAIT)
    with RunStore.for_project(tmp_path) as s:
        n = s.count()
        assert 1 <= n <= 50
        with sqlite3.connect(s.path) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            assert conn.execute("SELECT count(DISTINCT run_seq) FROM steps").fetchone()[0] == n  # no half-written run
        newest = s.list(limit=1)[0]
        assert len(s.get(newest["id"])["steps"]) == 5
        s.write(make_run(1))
        assert s.count() == n + 1


def test_importing_the_store_loads_no_pydantic_tiktoken_or_planner() -> None:
    code = "import sys, crux_devtools.core.record.runstore; print(sorted(m for m in ('pydantic', 'tiktoken', 'crux_devtools.core.plan.planner') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert done.stdout.strip() == "[]"


def test_the_lazy_core_names_match_its_type_checking_imports() -> None:
    import crux_devtools.core as core

    tree = ast.parse((REPO / "crux_devtools/core/__init__.py").read_text())
    imported: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            for alias in node.names:
                imported[alias.name] = node.module
    assert imported == core._MODULE_OF
    assert sorted(core.__all__) == sorted(imported)
    assert callable(core.memory) and core.memory.__module__.startswith("crux_devtools.core.memory")



def test_text_with_lone_surrogates_is_stored_and_read_back(store: RunStore) -> None:
    odd = b"caf\xe9 \xff".decode("utf-8", "surrogateescape")
    store.write(make_run(1, text=odd, target="t" + odd, input={"q": odd}) | {"steps": [{"index": 0, "response_text": odd}]})
    got = store.get("run-1")
    assert got["input"] == {"q": odd} and got["steps"][0]["response_text"] == odd
    assert store.count(text="caf") == 1


def test_counts_stay_right_through_replacing_pruning_and_filters(store: RunStore) -> None:
    for n in range(1, 13):
        store.write(make_run(n, target="a" if n % 2 else "b", status="error" if n % 3 == 0 else "ok", origin="inspector" if n % 4 == 0 else "app"))
    store.write(make_run(3, target="c", status="max_steps"))  # replaces run-3
    store.prune(8)

    def truth(**filters: str) -> int:
        return sum(all(r[k] == v for k, v in filters.items()) for r in store.list(limit=100))

    for filters in ({}, {"target": "a"}, {"status": "error"}, {"origin": "inspector"}, {"target": "b", "status": "error"}, {"target": "c"}):
        assert store.count(**filters) == truth(**filters), filters
    assert store.count() == 8 and store.targets() == sorted({r["target"] for r in store.list()})
    with sqlite3.connect(store.path) as conn:
        assert conn.execute("SELECT count(*) FROM run_counts WHERE n <= 0").fetchone()[0] == 0


def test_a_sample_for_the_charts_keeps_the_oldest_and_the_newest_run_and_stays_in_order(store: RunStore) -> None:
    for n in range(300):
        store.write(make_run(n, started_at=f"2026-01-01T{n // 60:02d}:{n % 60:02d}:00+00:00", usage={"input_tokens": n, "output_tokens": 1}))
    rows = store.sampled(20)
    assert 2 <= len(rows) <= 20
    assert [r["first"] for r in rows] == sorted(r["first"] for r in rows)
    assert rows[0]["usage"]["input_tokens"] == 0 and rows[-1]["usage"]["input_tokens"] == 299
    assert store.sampled(20, status="error") == []
    groups = store.buckets(20)
    assert len(groups) == 20 and sum(g["runs"] for g in groups) == 300
    assert groups[0]["min_input_tokens"] == groups[-1]["max_input_tokens"] == 201  # each run's steps summed, every run counted
