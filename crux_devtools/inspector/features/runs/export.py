"""Recorded runs out of the store: JSON Lines (whole runs, steps included) and CSV (one row per run),
for ``crux-devtools runs --format``. Both carry each run's ``cost_usd`` (``null``/empty: unpriced).

A CSV file is opened in spreadsheets, which run a cell that starts like a formula. A text cell comes
from the application, its model and its tools, so it is made inert as the OWASP guidance on CSV
injection says: a cell starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a
single quote in front (``'=HYPERLINK(...)``), and every control character but the newline (a tab
and a carriage return included, wherever they are) is written as its escape (``\\x1b``, ``\\t``,
``\\r``), as the terminal output shows it. Numbers are left as they are.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from typing import Any

from ....core.record.runstore import json_text
from ..shown.visible import visible_csv

CSV_COLUMNS = (
    "id", "started_at", "target", "kind", "status", "origin", "model", "steps", "input_tokens",
    "usage_input_tokens", "usage_output_tokens", "cache_read_tokens", "cache_write_tokens",
    "cost_usd", "duration_ms", "error_type", "error_message", "text",
)


def jsonl_line(run: Mapping[str, Any]) -> str:
    """One run as one line of JSON (a lone surrogate the store kept written as its escape)."""
    return json_text(run)


def csv_row(run: Mapping[str, Any]) -> list[Any]:
    """One run's CSV cells, in ``CSV_COLUMNS`` order (an unknown value is an empty cell)."""
    raw_usage, raw_error = run.get("usage"), run.get("error")
    usage: Mapping[str, Any] = raw_usage if isinstance(raw_usage, Mapping) else {}
    error: Mapping[str, Any] = raw_error if isinstance(raw_error, Mapping) else {}
    steps = run.get("step_count")
    if not isinstance(steps, int):
        steps = len(run.get("steps") or [])
    values = {
        **{k: run.get(k) for k in ("id", "started_at", "target", "kind", "status", "origin", "model", "input_tokens", "cost_usd", "duration_ms", "text")},
        "steps": steps,
        "usage_input_tokens": usage.get("input_tokens"),
        "usage_output_tokens": usage.get("output_tokens"),
        "cache_read_tokens": usage.get("cache_read_tokens"),
        "cache_write_tokens": usage.get("cache_write_tokens"),
        "error_type": error.get("type"),
        "error_message": error.get("message"),
    }
    return [cell(values[c]) for c in CSV_COLUMNS]


def cell(value: Any) -> Any:
    """One CSV cell: empty for an unknown value, a text made ``inert``, a number as it is."""
    if value is None:
        return ""
    return inert(value) if isinstance(value, str) else value


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def inert(cell: str) -> str:
    """A text cell a spreadsheet shows and never runs: control characters escaped, a formula's
    first character behind a single quote."""
    cell = visible_csv(cell)
    return "'" + cell if cell.startswith(FORMULA_STARTS) else cell


def csv_lines(runs: list[Mapping[str, Any]], *, header: bool = True) -> str:
    """``runs`` as CSV text (RFC 4180 quoting, ``\\r\\n`` line ends), with the header row first."""
    out = io.StringIO()
    writer = csv.writer(out)
    if header:
        writer.writerow(CSV_COLUMNS)
    writer.writerows(csv_row(r) for r in runs)
    text = out.getvalue()
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate the store kept: its escape, as the JSON outputs write it
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


__all__ = ["CSV_COLUMNS", "csv_lines", "csv_row", "jsonl_line"]
