"""The run store's live rows (``core/record/live.py``): a file of the version before gets the table
on open with its runs kept; the live text goes through ``redact`` as the finished run does; a row
is never written for a run already written, and a row of a process that is gone is not shown."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

from waits import WAIT, until

from crux_devtools import ScriptedModel, agenerate, prompt, record_runs
from crux_devtools.core.migrations import apply_migrations
from crux_devtools.core.record.runstore import MIGRATIONS, SCHEMA_VERSION, RunStore


def test_a_file_of_the_version_before_gets_the_live_table_and_keeps_its_runs(tmp_path: Path) -> None:
    path = tmp_path / ".crux" / "runs.sqlite3"
    path.parent.mkdir()
    conn = sqlite3.connect(path, isolation_level=None)
    apply_migrations(conn, MIGRATIONS[:-1])  # the file as the release before this one made it
    conn.close()
    with RunStore(path) as old:
        assert old.schema_version == SCHEMA_VERSION == 5
        old.write({"id": "kept", "target": "t", "steps": [{"index": 0, "response_text": "hi"}]})
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 4")
    conn.execute("DROP TABLE live_runs")
    conn.execute("DELETE FROM meta WHERE key = 'live'")
    conn.commit()
    conn.close()
    with RunStore(path) as store:
        assert store.schema_version == 5 and store.live_runs() == [] and store.live_token() == 0
        assert store.get("kept")["steps"][0]["response_text"] == "hi"  # type: ignore[index]


def test_a_reader_that_opened_the_file_while_a_writer_creates_it_reads_it_whole(tmp_path: Path) -> None:
    # a writer creates the file one migration step per transaction: a reader that opened it before
    # the first step (an empty file, read as empty) can next see it part-made, one step short
    path = tmp_path / ".crux" / "runs.sqlite3"
    path.parent.mkdir()
    sqlite3.connect(path).close()
    reader = RunStore(path, create=False)
    assert reader.live_runs() == [] and reader.live_token() == 0
    writer = sqlite3.connect(path, isolation_level=None)
    apply_migrations(writer, MIGRATIONS[:-1])
    assert reader.schema_version == SCHEMA_VERSION - 1
    assert reader.live_runs() == [] and reader.live_run("any") is None and reader.live_token() == 0
    assert reader.list() == [] and reader.usage_by_model() == []  # every read sees the finished schema
    assert reader.schema_version == SCHEMA_VERSION
    apply_migrations(writer, MIGRATIONS)
    writer.close()
    with RunStore(path) as store:
        assert store.write_live({"run_id": "r1", "summary": {"target": "t"}, "index": 0, "text": "so far", "chunks": 1, "pid": os.getpid()})
    assert [run["live"]["text"] for run in reader.live_runs()] == ["so far"]
    reader.close()


def test_a_live_row_is_not_written_for_a_run_already_written_and_a_dead_process_row_is_hidden(tmp_path: Path) -> None:
    with RunStore.for_project(tmp_path) as store:
        row = {"run_id": "r1", "summary": {"target": "t"}, "index": 0, "text": "so far", "chunks": 1, "pid": __import__("os").getpid()}
        assert store.write_live(row) is True and store.live_run("r1")["live"]["text"] == "so far"  # type: ignore[index]
        store.write({"id": "r1", "target": "t", "steps": []})
        assert store.live_run("r1") is None
        assert store.write_live({**row, "text": "late"}) is False and store.live_runs() == []
        assert store.write_live({**row, "run_id": "orphan", "pid": 2**22 + 12345}) is True  # no such process
        assert store.live_runs() == []


def test_the_live_text_is_redacted_as_the_run_will_be(tmp_path: Path) -> None:
    def mask(run: dict[str, Any]) -> dict[str, Any]:
        for step in run.get("steps") or []:
            if isinstance(step.get("response_text"), str):
                step["response_text"] = step["response_text"].replace("4242", "****")
        if isinstance(run.get("text"), str):
            run["text"] = run["text"].replace("4242", "****")
        return run

    gate = threading.Event()
    target = prompt("card", system="Answer.", prompt=lambda i: "Which card?")
    model = ScriptedModel(["card 4242 was used", "x"], chunk=9, before_chunk=lambda i: gate.wait(WAIT) if i == 1 else None)
    store = RunStore.for_project(tmp_path, create=False)

    async def main() -> Any:
        with record_runs(tmp_path, redact=mask):
            return await agenerate(target, model=model, on_text=lambda piece: None)

    done: list[Any] = []
    thread = threading.Thread(target=lambda: done.append(asyncio.run(main())), daemon=True)
    thread.start()
    until(lambda: bool(store.live_runs()) and store.live_runs()[0]["live"]["text"] != "", "the first piece is live")
    assert store.live_runs()[0]["live"]["text"] == "card ****"
    gate.set()
    thread.join(WAIT)
    (summary,) = store.list()
    assert summary["text"] == "card **** was used" and store.live_runs() == []
    store.close()
