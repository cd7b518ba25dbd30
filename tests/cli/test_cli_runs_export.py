"""``crux-devtools runs --format jsonl|csv`` and the cost column, run for real as subprocesses; the
documented schema of runs.sqlite3 answers the documented queries with plain sqlite3."""

from __future__ import annotations

import csv
import io
import json
import re
import sqlite3
from pathlib import Path

from test_cli_runs import cli, fake, write_runs

REPO = Path(__file__).resolve().parents[2]
PRICED = "[tool.crux-devtools.models.m-1]\ncontext_window = 8000\ninput_price = 2.0\noutput_price = 10.0\n"


def test_jsonl_is_one_whole_run_per_line_oldest_first(tmp_path: Path) -> None:
    write_runs(tmp_path, fake(1), fake(2, status="error"), fake(3))
    done = cli("runs", str(tmp_path), "--format", "jsonl", "--limit", "2")
    assert done.returncode == 0, done.stderr
    runs = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["id"] for r in runs] == ["r2", "r3"]
    assert runs[0]["steps"] == [{"index": 0, "request": {"input_tokens": 1002}}] and runs[0]["cost_usd"] is None


def test_csv_has_a_header_and_a_row_per_run_with_usage_and_cost(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(PRICED, encoding="utf-8")
    tricky = fake(2, target="helper")
    tricky["text"] = 'a "quoted", multi\nline answer'
    write_runs(tmp_path, fake(1), tricky)
    done = cli("runs", str(tmp_path), "--format", "csv")
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    assert [r["id"] for r in rows] == ["r1", "r2"]
    assert rows[1]["text"] == 'a "quoted", multi\nline answer'
    assert (rows[0]["usage_input_tokens"], rows[0]["usage_output_tokens"], rows[0]["steps"], rows[0]["input_tokens"]) == ("120", "7", "1", "1001")
    assert float(rows[0]["cost_usd"]) == (120 * 2.0 + 7 * 10.0) / 1e6
    assert rows[0]["cache_read_tokens"] == "" and rows[0]["error_type"] == ""


def test_the_table_has_a_cost_column_and_the_filters_total_on_stderr(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(PRICED, encoding="utf-8")
    other = fake(3)
    other["model"] = "unknown-model"
    write_runs(tmp_path, fake(1), fake(2), other)
    done = cli("runs", str(tmp_path))
    header, *lines = done.stdout.splitlines()
    assert "COST" in header.split()
    each = (120 * 2.0 + 7 * 10.0) / 1e6
    assert "unpriced" in lines[0] and f"${each:.4g}" in lines[1]
    assert f"cost of every run these filters match: ${2 * each:.4g} (1 unpriced)" in done.stderr


def test_the_documented_queries_run_on_a_real_store(tmp_path: Path) -> None:
    write_runs(tmp_path, fake(1), fake(2, status="error"), fake(3, target="solo"))
    doc = (REPO / "docs" / "runs-schema.md").read_text(encoding="utf-8")
    queries = re.findall(r"```sql\n(.*?)```", doc, re.S)
    assert len(queries) >= 3
    conn = sqlite3.connect(f"file:{tmp_path / '.crux' / 'runs.sqlite3'}?mode=ro", uri=True)
    try:
        results = [conn.execute(q).fetchall() for q in queries]
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
    finally:
        conn.close()
    assert all(results), "every documented query returns rows on a store with runs"
    for table in ("runs", "run_summaries", "steps", "run_counts", "meta"):
        assert table in tables and f"`{table}`" in doc
