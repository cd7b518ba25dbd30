"""Switching a store's file to write-ahead logging while other processes hold it."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from crux_devtools.core.migrations import use_wal


class Refusing:
    """A real connection whose first ``refusals`` switches to WAL are refused the way SQLite refuses
    them while another process creates or tidies up the file: at once, with "database is locked"."""

    def __init__(self, path: Path, refusals: int, message: str = "database is locked") -> None:
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.refusals = refusals
        self.message = message
        self.tries = 0

    def execute(self, sql: str) -> Any:
        if "journal_mode" in sql:
            self.tries += 1
            if self.tries <= self.refusals:
                raise sqlite3.OperationalError(self.message)
        return self.conn.execute(sql)


def _mode(path: Path) -> str:
    with sqlite3.connect(path) as conn:
        return str(conn.execute("PRAGMA journal_mode").fetchone()[0])


def test_a_refused_switch_is_tried_again_until_it_takes(tmp_path: Path) -> None:
    conn = Refusing(tmp_path / "a.sqlite3", refusals=3)
    use_wal(conn, timeout=5.0)  # type: ignore[arg-type]
    assert conn.tries == 4
    assert _mode(tmp_path / "a.sqlite3") == "wal"


def test_a_switch_still_refused_at_the_deadline_raises_the_lock_error(tmp_path: Path) -> None:
    conn = Refusing(tmp_path / "b.sqlite3", refusals=10**9)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        use_wal(conn, timeout=0.05)  # type: ignore[arg-type]
    assert conn.tries >= 2


def test_an_error_that_is_not_a_lock_is_not_retried(tmp_path: Path) -> None:
    conn = Refusing(tmp_path / "c.sqlite3", refusals=1, message="disk I/O error")
    with pytest.raises(sqlite3.OperationalError, match="disk I/O"):
        use_wal(conn, timeout=5.0)  # type: ignore[arg-type]
    assert conn.tries == 1
