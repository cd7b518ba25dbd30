"""History in DIR/.crux/devtools.sqlite3: distinct reports by content hash, every run, previous versions."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from crux_devtools.inspector.history import History


def report(digest: str, text: str, prompt_id: str = "p", example: str = "basic") -> dict[str, Any]:
    inspection = {"system": text}
    return {"hash": digest, "duration_ms": 1.0, "prompts": [{"id": prompt_id, "examples": [{"name": example, "inspection": inspection}]}]}


def test_the_state_folder_is_created_and_kept_out_of_git(tmp_path: Path) -> None:
    History(tmp_path).close()
    assert (tmp_path / ".crux" / ".gitignore").read_text(encoding="utf-8") == "*\n"
    with sqlite3.connect(tmp_path / ".crux" / "devtools.sqlite3") as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_each_distinct_report_is_stored_once_and_every_run_is_recorded(tmp_path: Path) -> None:
    history = History(tmp_path)
    history.record(report("a", "one"), ok=True, errors=[])
    history.record(report("a", "one"), ok=True, errors=[], changed_files=["x.py"])
    history.record(report("b", "two"), ok=True, errors=[])
    history.record(report("b", "two"), ok=False, errors=[{"type": "SyntaxError"}])
    assert [r["hash"] for r in history.reports()] == ["b", "a"]
    runs = history.runs()
    assert [(r["hash"], r["ok"]) for r in runs] == [("a", True), ("a", True), ("b", True), ("b", False)]
    assert runs[1]["changed_files"] == ["x.py"] and runs[3]["errors"] == [{"type": "SyntaxError"}]
    history.close()


def test_previous_system_skips_versions_where_this_prompt_did_not_change(tmp_path: Path) -> None:
    history = History(tmp_path)
    history.record(report("a", "old text"), ok=True, errors=[])
    history.record(report("b", "new text"), ok=True, errors=[])
    # Another prompt changed; this one did not: its previous version is still "old text".
    other = report("c", "new text")
    other["prompts"].append({"id": "q", "examples": []})
    history.record(other, ok=True, errors=[])
    assert history.previous_system("c", "p", "basic") == "old text"
    assert history.previous_system("a", "p", "basic") is None
    assert history.previous_system("c", "p", "missing-example") is None
    history.close()


def test_a_reverted_report_counts_as_the_newest_version(tmp_path: Path) -> None:
    history = History(tmp_path)
    history.record(report("a", "one"), ok=True, errors=[])
    history.record(report("b", "two"), ok=True, errors=[])
    history.record(report("a", "one"), ok=True, errors=[])
    assert history.previous_system("a", "p", "basic") == "two"
    history.close()


def test_history_survives_reopening_the_file(tmp_path: Path) -> None:
    first = History(tmp_path)
    first.record(report("a", "one"), ok=True, errors=[])
    first.record(report("b", "two"), ok=True, errors=[])
    first.close()
    again = History(tmp_path)
    assert again.previous_system("b", "p", "basic") == "one"
    again.close()
