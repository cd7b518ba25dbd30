"""Report history in ``DIR/.crux/devtools.sqlite3``: each distinct report (by content hash) and each run.

A later view can diff a prompt against its previous version: ``previous_system`` walks back through
distinct reports, newest first, to the first whose system text for that prompt and example differs.

History is a convenience, never a reason not to start: ``open_history`` gives ``None`` and one
warning when the file is damaged or the folder is read-only, and a store that fails later (disk
full, file replaced) turns itself off with one warning instead of failing the page that asked.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .report_types import LoadErrorDict, Report

SCHEMA = """
CREATE TABLE IF NOT EXISTS reports (
    hash TEXT PRIMARY KEY,
    first_seen TEXT NOT NULL,
    seq INTEGER NOT NULL,
    report TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    started_at TEXT NOT NULL,
    hash TEXT,
    ok INTEGER NOT NULL,
    duration_ms REAL,
    errors TEXT NOT NULL,
    changed_files TEXT NOT NULL
);
"""


log = logging.getLogger(__name__)
HISTORY_FILE = "devtools.sqlite3"


def state_dir(root: Path) -> Path:
    """``DIR/.crux/``, created with a ``.gitignore`` that keeps it out of version control."""
    folder = root / ".crux"
    folder.mkdir(exist_ok=True)
    ignore = folder / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n", encoding="utf-8")
    return folder


def system_of(report: Report, prompt_id: str, example: str) -> str | None:
    for prompt in report["prompts"]:
        if prompt["id"] != prompt_id:
            continue
        for ex in prompt["examples"]:
            if ex["name"] == example and ex["inspection"] is not None:
                return str(ex["inspection"]["system"])
    return None


def open_history(root: Path) -> tuple[History | None, str | None]:
    """The history store of ``root``, or ``(None, warning)`` when it cannot be used (a damaged file,
    a read-only ``.crux``): the inspector then runs without history, and says so once."""
    try:
        return History(root), None
    except (OSError, sqlite3.Error) as exc:
        where = Path(root) / ".crux" / HISTORY_FILE
        fix = (
            "move the damaged file away to start a new history"
            if isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError)
            else "make .crux writable to keep history"
        )
        warning = f"history is off: cannot use {where} ({_reason(exc)}); diffs against earlier versions are unavailable ({fix})"
        log.warning(warning)
        return None, warning


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


class History:
    """A small SQLite store (WAL mode). Safe to call from one event loop thread at a time.

    Opening raises ``OSError`` or ``sqlite3.Error`` when the store cannot be used (``open_history``
    turns that into a warning). A failure after that logs one warning and turns the store off:
    writes are dropped, reads find nothing."""

    def __init__(self, root: Path, *, busy_timeout: float = 5.0) -> None:
        self.path = state_dir(root) / HISTORY_FILE
        self._lock = threading.Lock()
        self._off = False
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=busy_timeout)
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.executescript(SCHEMA)
            self._db.execute("SELECT COUNT(*) FROM reports").fetchone()  # a damaged file fails here, not later
        except sqlite3.Error:
            self._db.close()
            raise

    def _failed(self, exc: sqlite3.Error) -> None:
        """Turn the store off after a failure (called with the lock held)."""
        if not self._off:
            self._off = True
            log.warning("history is off from now on: %s failed (%s)", self.path, exc)
            with contextlib.suppress(sqlite3.Error):
                self._db.close()

    def record(self, report: Report | None, *, ok: bool, errors: list[LoadErrorDict], changed_files: list[str] = ()) -> None:  # type: ignore[assignment]
        """Store one run, and its report if this content hash is new."""
        now = datetime.now(UTC).isoformat()
        with self._lock:
            if self._off:
                return
            try:
                with self._db:
                    digest = report["hash"] if report is not None else None
                    if report is not None and ok:
                        seq = self._db.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM reports").fetchone()[0]
                        self._db.execute(
                            "INSERT INTO reports(hash, first_seen, seq, report) VALUES (?, ?, ?, ?) "
                            "ON CONFLICT(hash) DO UPDATE SET seq = excluded.seq",
                            (digest, now, seq, json.dumps(report)),
                        )
                    self._db.execute(
                        "INSERT INTO runs(started_at, hash, ok, duration_ms, errors, changed_files) VALUES (?, ?, ?, ?, ?, ?)",
                        (now, digest, int(ok), report.get("duration_ms") if report else None, json.dumps(errors), json.dumps(list(changed_files))),
                    )
            except sqlite3.Error as exc:
                self._failed(exc)

    def _select(self, sql: str, args: tuple[Any, ...] = ()) -> list[Any]:
        """Rows of a query, or none once the store is off (called with the lock held)."""
        if self._off:
            return []
        try:
            return self._db.execute(sql, args).fetchall()
        except sqlite3.Error as exc:
            self._failed(exc)
            return []

    def reports(self) -> list[dict[str, Any]]:
        """Distinct reports, most recently seen first."""
        with self._lock:
            rows = self._select("SELECT report FROM reports ORDER BY seq DESC")
        return [json.loads(row[0]) for row in rows]

    def runs(self) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._select("SELECT id, started_at, hash, ok, duration_ms, errors, changed_files FROM runs ORDER BY id")
        return [
            {"id": r[0], "started_at": r[1], "hash": r[2], "ok": bool(r[3]), "duration_ms": r[4], "errors": json.loads(r[5]), "changed_files": json.loads(r[6])}
            for r in rows
        ]

    def previous_system(self, current_hash: str | None, prompt_id: str, example: str, current_text: str | None = None) -> str | None:
        """The system text for this prompt and example in the newest report older than ``current_hash``
        where it differs from ``current_text`` (by default, the text in the current report)."""
        with self._lock:
            seq = None
            if current_hash is not None:
                found = self._select("SELECT seq, report FROM reports WHERE hash = ?", (current_hash,))
                if found:
                    seq = found[0][0]
                    if current_text is None:
                        current_text = system_of(json.loads(found[0][1]), prompt_id, example)
            limit = seq if seq is not None else 1 << 62
            rows = self._select("SELECT hash, report FROM reports WHERE seq <= ? ORDER BY seq DESC", (limit,))
        for digest, text in rows:
            if digest == current_hash:
                continue
            system = system_of(json.loads(text), prompt_id, example)
            if system is not None and system != current_text:
                return system
        return None

    def close(self) -> None:
        with self._lock:
            self._off = True
            self._db.close()
