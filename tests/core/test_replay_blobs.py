"""The plan inputs' blobs go with the last run that refers to them: pruning old runs keeps the store small."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from test_replay import assert_every_step_replays_exactly, generated_agent

from crux_devtools import generate, record_runs
from crux_devtools.core.record.runstore import SCHEMA_VERSION, RunStore


def record(root: Path, sizes: list[int]) -> RunStore:
    """One 4-step run of the generated agent per size (a size changes its history block and frames)."""
    with record_runs(root):
        for size in sizes:
            assert generate(generated_agent(4), input={"question": "why do uploads stall?", "size": size}).stop_reason == "text"
    return RunStore.for_project(root)


def counts(root: Path, tables: tuple[str, ...] = ("blobs", "step_plans")) -> tuple[int, ...]:
    with sqlite3.connect(root / ".crux" / "runs.sqlite3") as db:
        return tuple(db.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in tables)


def test_pruning_drops_the_blobs_no_remaining_run_refers_to_and_keeps_the_shared_ones(tmp_path: Path) -> None:
    store = record(tmp_path / "p", [40, 41, 40])
    record(tmp_path / "two", [41, 40]).close()
    record(tmp_path / "one", [40]).close()
    two, one = counts(tmp_path / "two"), counts(tmp_path / "one")
    assert one[0] < two[0] < counts(tmp_path / "p")[0]

    assert store.prune(2) == 1  # the oldest run shares its texts with the newest: only its own frames go
    assert counts(tmp_path / "p") == two
    assert store.prune(1) == 1  # the size-41 run's history texts have no other run left
    assert counts(tmp_path / "p") == one
    newest = store.list()[0]["id"]
    assert assert_every_step_replays_exactly(store, newest) == 4  # what stays is whole

    store.write({"id": "no-plans", "target": "x", "steps": []}, keep=1)  # keep= prunes in the write's transaction
    assert counts(tmp_path / "p") == (0, 0)


def test_a_version_2_file_gets_its_references_and_loses_its_orphan_blobs_on_open(tmp_path: Path) -> None:
    store = record(tmp_path, [40, 41])
    store.close()
    path = tmp_path / ".crux" / "runs.sqlite3"
    with sqlite3.connect(path) as db:  # the file as the release before this one left it: no references, an orphan
        db.execute("DROP TABLE blob_refs")
        db.execute("DROP INDEX step_plans_by_frame")
        db.execute("INSERT INTO blobs (hash, text) VALUES ('orphan', 'a text no frame refers to')")
        db.execute("PRAGMA user_version = 2")
    before = counts_v2(path)
    store = RunStore(path)
    assert store.schema_version == SCHEMA_VERSION
    blobs, plans, refs = counts(tmp_path, ("blobs", "step_plans", "blob_refs"))
    assert blobs == before - 1 and plans == 8 and refs > 0
    assert store.prune(1) == 1 and counts(tmp_path)[0] < blobs
    assert assert_every_step_replays_exactly(store, store.list()[0]["id"]) == 4


def counts_v2(path: Path) -> int:
    with sqlite3.connect(path) as db:
        return int(db.execute("SELECT count(*) FROM blobs").fetchone()[0])
