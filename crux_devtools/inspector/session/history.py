"""Prompt history in ``DIR/.crux/devtools.sqlite3``: each version of each prompt's system text, and each load.

What is kept, per prompt and example: the system text as resolved at the report's own budget
(``inspection["system"]``, the text the prompt page diffs against, ``session.previous_system``), one
row per *change*: a save that leaves a prompt's text as it was writes nothing for it. Texts are
content-addressed (``blobs``: sha-256 -> text), so a text that comes back (A -> B -> A) is stored once.
Each load (``runs``) keeps its time, report hash, whether it was good, its errors and the files that
changed. A load that failed in one module still adds the versions of the prompts that did load;
the failed module's prompts are its last good ones, marked stale, and add nothing.

    blobs(hash PRIMARY KEY, size, text)
    versions(seq, prompt_id, example, system_hash -> blobs, report_hash, seen_at)  index (prompt_id, example, seq)
    runs(id, started_at, hash, ok, duration_ms, errors, changed_files)

``previous_system`` is one indexed query: the newest version of that prompt and example whose text
differs from the text shown now. Consecutive versions differ, so it reads at most two rows.

Retention, set in ``pyproject.toml`` and read when the inspector starts::

    [tool.crux-devtools]
    history_keep = 200     # versions kept per prompt and example (at least 2); default 200
    history_max_mb = 50    # size of the file's content in MB (more than 0); default 50

A save trims the versions of the prompts it changed to ``history_keep``; when the file's content
passes ``history_max_mb``, the oldest versions of any prompt go first, but the two newest of each
prompt and example (the text shown and the one its diff compares with) always stay. A text no version
uses any more is deleted with its last version, and freed pages are given back to the file system.
The newest ``RUNS_KEPT`` loads are kept.

The schema version is ``PRAGMA user_version`` (``core.migrations``): version 1 is the store of
earlier releases (a whole report JSON per distinct report); opening such a file turns its reports
into versions and blobs, keeping every previous-version answer, and drops the old table. A file from
a newer release is refused, like a damaged file.

History is a convenience, never a reason not to start: ``open_history`` gives ``None`` and one
warning when the file is damaged, from a newer release, the folder is read-only, or the settings
are wrong; a store that fails later (disk full, file replaced) turns itself off with one warning
instead of failing the page that asked.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import sqlite3
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..report_types import LoadErrorDict, Report

if TYPE_CHECKING:
    from ...core.migrations import Migration

log = logging.getLogger(__name__)
HISTORY_FILE = "devtools.sqlite3"
RUNS_KEPT = 1000
DEFAULT_KEEP = 200
DEFAULT_MAX_MB = 50.0

# Version 1: the store of earlier releases (kept as it was, so an old file and a new one meet here).
_V1 = """
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

# Version 2: versions per prompt and example over content-addressed texts.
_V2_TABLES = """
CREATE TABLE blobs (
    hash TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    text TEXT NOT NULL
);
CREATE TABLE versions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    prompt_id TEXT NOT NULL,
    example TEXT NOT NULL,
    system_hash TEXT NOT NULL REFERENCES blobs(hash),
    report_hash TEXT,
    seen_at TEXT NOT NULL
);
CREATE INDEX versions_by_key ON versions(prompt_id, example, seq);
CREATE INDEX versions_by_text ON versions(system_hash);
"""


def _reports_to_versions(conn: sqlite3.Connection) -> None:
    """Version 1 -> 2: each stored report, in ``seq`` order (the order ``previous_system`` walked
    them), adds a version of each prompt and example whose text differs from its version before;
    then the reports go. In Python, one report at a time: SQLite's JSON functions are several times
    slower on reports of megabytes, and a temporary table of every text would hold them all at once."""
    from ...core.migrations import split_script

    for statement in split_script(_V2_TABLES):
        conn.execute(statement)
    newest: dict[tuple[str, str], str] = {}
    stored: set[str] = set()
    # the order first, then each report by its key: sorting the reports themselves would copy them all
    for digest, seen_at in conn.execute("SELECT hash, first_seen FROM reports ORDER BY seq").fetchall():
        (body,) = conn.execute("SELECT report FROM reports WHERE hash = ?", (digest,)).fetchone()
        try:
            texts = texts_of(json.loads(body))
        except (ValueError, TypeError, KeyError, AttributeError):
            log.warning("history: a stored report (%s) could not be read while migrating; it is left out", digest)
            continue
        for key, text in texts.items():
            address = text_hash(text)
            if newest.get(key) == address:
                continue
            newest[key] = address
            if address not in stored:
                stored.add(address)
                conn.execute("INSERT OR IGNORE INTO blobs(hash, size, text) VALUES (?, ?, ?)", (address, _size(text), to_db(text)))
            conn.execute(
                "INSERT INTO versions(prompt_id, example, system_hash, report_hash, seen_at) VALUES (?, ?, ?, ?, ?)",
                (to_db(key[0]), to_db(key[1]), address, digest, seen_at),
            )
    # The file is vacuumed right after: zeroing hundreds of megabytes of freed pages first (Debian
    # builds SQLite with secure_delete on) would only make this step ten times slower.
    (secure,) = conn.execute("PRAGMA secure_delete").fetchone()
    conn.execute("PRAGMA secure_delete = OFF")
    conn.execute("DROP TABLE reports")
    conn.execute(f"PRAGMA secure_delete = {int(secure)}")


MIGRATIONS: tuple[Migration, ...] = (_V1, _reports_to_versions)
SCHEMA_VERSION = len(MIGRATIONS)


class HistoryUnavailable(Exception):
    """The history file cannot be used as it is (from a newer release, or bad settings)."""


@dataclass(frozen=True, slots=True)
class Retention:
    """How much history is kept: ``keep`` versions per prompt and example, ``max_mb`` of content."""

    keep: int = DEFAULT_KEEP
    max_mb: float = DEFAULT_MAX_MB

    @property
    def max_bytes(self) -> int:
        return int(self.max_mb * 1024 * 1024)


def read_retention(root: Path) -> Retention:
    """``history_keep`` and ``history_max_mb`` of ``[tool.crux-devtools]``, checked; the defaults when
    unset. A bad value raises ``HistoryUnavailable`` naming ``pyproject.toml:LINE`` and what is allowed.
    An unreadable ``pyproject.toml`` is reported by discovery; history then uses the defaults."""
    from .discovery import _TomlLines, tool_section

    section = tool_section(root)
    if section is None:
        return Retention()
    path = Path(root) / "pyproject.toml"
    keep, max_mb = section.get("history_keep", DEFAULT_KEEP), section.get("history_max_mb", DEFAULT_MAX_MB)

    def bad(key: str, wanted: str, value: Any) -> HistoryUnavailable:
        line = _TomlLines(path).find("tool.crux-devtools", key)
        where = f"pyproject.toml:{line}" if line else "pyproject.toml"
        return HistoryUnavailable(f"{where}: [tool.crux-devtools] {key} must be {wanted}, got {value!r}")

    if isinstance(keep, bool) or not isinstance(keep, int) or keep < 2:
        raise bad("history_keep", f"a whole number of versions kept per prompt and example, at least 2 (default {DEFAULT_KEEP})", keep)
    if isinstance(max_mb, bool) or not isinstance(max_mb, int | float) or not math.isfinite(max_mb) or max_mb <= 0:
        raise bad("history_max_mb", f"a size in megabytes above 0, such as 50 (default {DEFAULT_MAX_MB:g})", max_mb)
    return Retention(keep, float(max_mb))


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


def text_hash(text: str) -> str:
    """The content address of a text in ``blobs``."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def to_db(text: str) -> str | bytes:
    """A text as SQLite can take it. SQLite stores UTF-8, and a lone surrogate (a file read with
    ``surrogateescape``, a string cut in the middle of a pair) has none: such a text is stored as its
    bytes with the surrogate passed through, and ``from_db`` gives back the same text."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")
    return text


def from_db(value: Any) -> Any:
    """A text stored by ``to_db``, as it was (bytes come back as the text with its surrogates)."""
    return value.decode("utf-8", "surrogatepass") if isinstance(value, bytes) else value


def texts_of(report: Mapping[str, Any]) -> dict[tuple[str, str], str]:
    """Every (prompt id, example name) of a report with its system text, but for stale prompts (their
    module failed to load: they repeat their last good version)."""
    found: dict[tuple[str, str], str] = {}
    for prompt in report.get("prompts", []):
        if prompt.get("stale"):
            continue
        for ex in prompt.get("examples") or []:
            inspection = ex.get("inspection")
            if inspection and isinstance(inspection.get("system"), str):
                found[(prompt["id"], ex["name"])] = inspection["system"]
    return found


def open_history(root: Path) -> tuple[History | None, str | None]:
    """The history store of ``root``, or ``(None, warning)`` when it cannot be used (a damaged file,
    one from a newer release, a read-only ``.crux``, bad settings): the inspector then runs without
    history, and says so once."""
    where = Path(root) / ".crux" / HISTORY_FILE
    try:
        return History(root, retention=read_retention(Path(root))), None
    except HistoryUnavailable as exc:
        warning = f"history is off: {exc}; diffs against earlier versions are unavailable"
    except (OSError, sqlite3.Error, ValueError) as exc:  # ValueError: a text no encoding takes
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

    Opening raises ``OSError``, ``sqlite3.Error`` or ``HistoryUnavailable`` when the store cannot be
    used (``open_history`` turns that into a warning). A failure after that logs one warning and turns
    the store off: writes are dropped, reads find nothing."""

    def __init__(self, root: Path, *, busy_timeout: float = 5.0, retention: Retention | None = None) -> None:
        self.path = state_dir(Path(root)) / HISTORY_FILE
        self.retention = retention or Retention()
        self._lock = threading.Lock()
        self._off = False
        # (prompt id, example) -> hash of its newest stored text; reloaded when another process writes
        self._newest: dict[tuple[str, str], str] = {}
        self._digests: dict[int, tuple[str, str]] = {}  # id(text) -> (text, digest) of the last record
        self._seen_data = -1
        self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=busy_timeout, isolation_level=None)
        try:
            fresh = self._db.execute("PRAGMA page_count").fetchone()[0] == 0  # a damaged file fails here
            if fresh:  # freed pages go back to the file system (must be set before the first table)
                self._db.execute("PRAGMA auto_vacuum = INCREMENTAL")
            from ...core.migrations import apply_migrations, use_wal  # here: importing the session loads no core

            use_wal(self._db, busy_timeout)
            self._db.execute("PRAGMA synchronous = NORMAL")
            (version,) = self._db.execute("PRAGMA user_version").fetchone()
            if version > SCHEMA_VERSION:
                raise HistoryUnavailable(
                    f"{self.path} was written by a newer release of crux_devtools (schema version {version}; this one "
                    f"reads up to {SCHEMA_VERSION}): upgrade crux_devtools, or move the file away to start a new history"
                )
            apply_migrations(self._db, MIGRATIONS)
            if not fresh and version < SCHEMA_VERSION:
                self._compact()
            self._load_newest()
        except BaseException:
            self._db.close()
            raise

    def _compact(self) -> None:
        """After a migration: give the old reports' pages back (and switch to incremental vacuum)."""
        try:
            self._db.execute("PRAGMA auto_vacuum = INCREMENTAL")
            self._db.execute("VACUUM")
        except sqlite3.OperationalError as exc:  # another process has the file open: next time
            log.info("history: compacting %s after migrating it was put off (%s)", self.path, exc)

    def _load_newest(self) -> None:
        """The newest text hash of every prompt and example (SQLite takes bare columns from the MAX row)."""
        rows = self._db.execute("SELECT prompt_id, example, system_hash, MAX(seq) FROM versions GROUP BY prompt_id, example").fetchall()
        self._newest = {(from_db(p), from_db(e)): h for p, e, h, _ in rows}
        self._seen_data = self._db.execute("PRAGMA data_version").fetchone()[0]

    def _failed(self, exc: Exception) -> None:
        """Turn the store off after a failure (called with the lock held)."""
        if not self._off:
            self._off = True
            log.warning("history is off from now on: %s failed (%s)", self.path, exc)
            with contextlib.suppress(sqlite3.Error):
                self._db.close()

    def record(self, report: Report | None, *, ok: bool, errors: list[LoadErrorDict], changed_files: list[str] = ()) -> None:  # type: ignore[assignment]
        """Store one run and the texts of the report that changed since their newest version."""
        now = datetime.now(UTC).isoformat()
        texts = texts_of(report) if report is not None else {}
        # A text an incremental load handed on unchanged is the same object as last time: reuse its
        # digest, so hashing costs what the save changed, not the size of the project.
        known = self._digests
        hashed: dict[tuple[str, str], str] = {}
        for key, text in texts.items():
            hit = known.get(id(text))
            hashed[key] = hit[1] if hit is not None and hit[0] is text else text_hash(text)
        self._digests = {id(text): (text, hashed[key]) for key, text in texts.items()}
        with self._lock:
            if self._off:
                return
            try:
                if self._db.execute("PRAGMA data_version").fetchone()[0] != self._seen_data:
                    self._load_newest()  # another process wrote since
                changed = [key for key, digest in hashed.items() if self._newest.get(key) != digest]
                digest = report["hash"] if report is not None else None
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    for key in changed:
                        self._db.execute(
                            "INSERT OR IGNORE INTO blobs(hash, size, text) VALUES (?, ?, ?)",
                            (hashed[key], _size(texts[key]), to_db(texts[key])),
                        )
                        self._db.execute(
                            "INSERT INTO versions(prompt_id, example, system_hash, report_hash, seen_at) VALUES (?, ?, ?, ?, ?)",
                            (to_db(key[0]), to_db(key[1]), hashed[key], digest, now),
                        )
                    self._db.execute(
                        "INSERT INTO runs(started_at, hash, ok, duration_ms, errors, changed_files) VALUES (?, ?, ?, ?, ?, ?)",
                        (now, digest, int(ok), report.get("duration_ms") if report else None, json.dumps(errors), json.dumps(list(changed_files))),
                    )
                    trimmed = self._trim(changed)
                    self._db.execute("COMMIT")
                except BaseException:
                    self._db.execute("ROLLBACK")
                    self._load_newest()
                    raise
                for key in changed:
                    self._newest[key] = hashed[key]
                if trimmed:
                    self._db.execute("PRAGMA incremental_vacuum").fetchall()  # one page per step: run it to the end
                self._seen_data = self._db.execute("PRAGMA data_version").fetchone()[0]
            except (sqlite3.Error, ValueError) as exc:  # a text SQLite refused: off, never a failed load
                self._failed(exc)

    # -- retention (inside the write transaction) ----------------------------------------------
    def _trim(self, changed: list[tuple[str, str]]) -> bool:
        """Apply the retention settings; True when anything was deleted."""
        gone: set[str] = set()
        for prompt_id, example in changed:
            rows = self._db.execute(
                "DELETE FROM versions WHERE prompt_id = ? AND example = ? AND seq <= "
                "(SELECT seq FROM versions WHERE prompt_id = ? AND example = ? ORDER BY seq DESC LIMIT 1 OFFSET ?) "
                "RETURNING system_hash",
                (to_db(prompt_id), to_db(example), to_db(prompt_id), to_db(example), self.retention.keep),
            ).fetchall()
            gone.update(h for (h,) in rows)
        runs = self._db.execute("DELETE FROM runs WHERE id <= (SELECT id FROM runs ORDER BY id DESC LIMIT 1 OFFSET ?)", (RUNS_KEPT,))
        deleted = bool(gone) or runs.rowcount > 0
        self._drop_unused(gone)
        while self._content_bytes() > self.retention.max_bytes:
            oldest = self._db.execute(
                "SELECT seq, system_hash FROM versions AS v WHERE "
                "(SELECT COUNT(*) FROM versions AS w WHERE w.prompt_id = v.prompt_id AND w.example = v.example AND w.seq > v.seq) >= 2 "
                "ORDER BY seq LIMIT 64"
            ).fetchall()
            if not oldest:
                break  # only the two newest of each are left: they stay, over the limit or not
            self._db.executemany("DELETE FROM versions WHERE seq = ?", [(seq,) for seq, _ in oldest])
            self._drop_unused({h for _, h in oldest})
            deleted = True
        return deleted

    def _drop_unused(self, hashes: set[str]) -> None:
        self._db.executemany(
            "DELETE FROM blobs WHERE hash = ? AND NOT EXISTS (SELECT 1 FROM versions WHERE system_hash = blobs.hash)",
            [(h,) for h in hashes],
        )

    def _content_bytes(self) -> int:
        """Bytes of the file in use (its pages less the free ones)."""
        pages = self._db.execute("PRAGMA page_count").fetchone()[0] - self._db.execute("PRAGMA freelist_count").fetchone()[0]
        return int(pages * self._db.execute("PRAGMA page_size").fetchone()[0])

    # -- reading -------------------------------------------------------------------------------
    def _select(self, sql: str, args: tuple[Any, ...] = ()) -> list[Any]:
        """Rows of a query, or none once the store is off (called with the lock held)."""
        if self._off:
            return []
        try:
            return self._db.execute(sql, args).fetchall()
        except sqlite3.Error as exc:
            self._failed(exc)
            return []

    def versions(self, prompt_id: str, example: str) -> list[dict[str, Any]]:
        """The stored versions of one prompt and example, newest first."""
        with self._lock:
            rows = self._select(
                "SELECT v.seq, v.seen_at, v.report_hash, b.text FROM versions AS v JOIN blobs AS b ON b.hash = v.system_hash "
                "WHERE v.prompt_id = ? AND v.example = ? ORDER BY v.seq DESC",
                (to_db(prompt_id), to_db(example)),
            )
        return [{"seq": r[0], "seen_at": r[1], "report_hash": r[2], "system": from_db(r[3])} for r in rows]

    def runs(self) -> list[dict[str, Any]]:
        """The kept loads, oldest first."""
        with self._lock:
            rows = self._select("SELECT id, started_at, hash, ok, duration_ms, errors, changed_files FROM runs ORDER BY id")
        return [
            {"id": r[0], "started_at": r[1], "hash": r[2], "ok": bool(r[3]), "duration_ms": r[4], "errors": json.loads(r[5]), "changed_files": json.loads(r[6])}
            for r in rows
        ]

    def previous_system(self, prompt_id: str, example: str, current_text: str | None) -> str | None:
        """The newest stored system text of this prompt and example that differs from ``current_text``
        (the text shown now); with no current text, the newest stored one."""
        current = text_hash(current_text) if current_text is not None else ""
        with self._lock:
            rows = self._select(
                "SELECT b.text FROM versions AS v JOIN blobs AS b ON b.hash = v.system_hash "
                "WHERE v.prompt_id = ? AND v.example = ? AND v.system_hash != ? ORDER BY v.seq DESC LIMIT 1",
                (to_db(prompt_id), to_db(example), current),
            )
        return from_db(rows[0][0]) if rows else None

    def close(self) -> None:
        with self._lock:
            self._off = True
            self._db.close()
