"""``MemoryStore``: remembered entries per session in one SQLite file, ranked with FTS5 bm25.

The file runs in WAL mode with a busy timeout, so several processes may write at once without
losing entries. Every SQLite failure is translated once, here, into a ``MemoryStoreError`` that
names the file: a corrupt or locked database is never read as an empty memory.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from ..errors import MemoryStoreError
from ..migrations import use_wal
from ..tokens import TokenCounter, default_counter
from .checks import (
    check_content,
    check_created_at,
    check_entry_type,
    check_importance,
    check_lane,
    check_limit,
    check_query,
    check_session,
    check_text,
)
from .assembly import Source, assemble
from .query import fts_query
from .results import ContextAssembly, Evidence
from .schema import MAX_SEQ, SCHEMA_VERSION, migrate, session_slot, slot_range
from .scoring import Helper, prepare as prepare_scoring
from .sections import check_entry_types, render_line, section_for

MEMORY = ":memory:"


def iso(ts: float) -> str:
    """``created_at`` as ISO 8601 UTC. Writes are checked (``check_created_at``); a value stored out
    of range by an older release reads back as the number itself instead of failing the read."""
    try:
        return datetime.fromtimestamp(ts, UTC).isoformat(timespec="microseconds")
    except (OverflowError, ValueError, OSError):
        return repr(float(ts))


class MemoryStore:
    """Remembered entries in a SQLite file (or ``":memory:"``), isolated per ``session_id``.

    ``busy_timeout`` is how long (seconds) a write waits for another writer before it fails with a
    ``MemoryStoreError`` saying the file is locked.
    """

    def __init__(self, path: str | os.PathLike[str] = MEMORY, *, busy_timeout: float = 10.0, counter: TokenCounter | None = None) -> None:
        self.path = MEMORY if str(path) == MEMORY else os.fspath(path)
        self.counter = counter or default_counter()
        self._lock = threading.RLock()
        self._closed = False
        self._busy_timeout = busy_timeout
        self._helper: Helper | None = None  # a second read connection and its thread (get_context)
        with self._translate("open"):
            self._conn = self._connect()
            try:
                migrate(self._conn)
            except BaseException:
                self._conn.close()
                raise

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=self._busy_timeout)
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout * 1000)}")
            if self.path != MEMORY:
                use_wal(conn, self._busy_timeout)
                conn.execute("PRAGMA synchronous = NORMAL")
                conn.execute("PRAGMA mmap_size = 268435456")
            conn.execute("PRAGMA cache_size = -65536")
            conn.execute("PRAGMA temp_store = MEMORY")
            prepare_scoring(conn)  # the temp table get_context scores into
        except BaseException:
            conn.close()
            raise
        return conn

    # -- plumbing --------------------------------------------------------------------------------
    @contextmanager
    def _translate(self, action: str) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            raise self._error(action, exc) from exc

    def _error(self, action: str, exc: sqlite3.Error) -> MemoryStoreError:
        text = str(exc)
        low = text.lower()
        if "locked" in low or "busy" in low:
            hint = "the database is locked by another connection or process; retry later or raise busy_timeout"
        elif "not a database" in low or "malformed" in low or "corrupt" in low:
            hint = f"the file is not a valid memory database ({text}); move it aside or delete it to start a new one"
        elif "no such module: fts5" in low:
            hint = "this Python's SQLite has no FTS5 module; memory needs SQLite built with FTS5"
        elif "unable to open" in low:
            hint = f"cannot open the file ({text}); check that its folder exists and is writable"
        else:
            hint = text
        return MemoryStoreError(self.path, f"{action} failed: {hint}")

    @contextmanager
    def _reading(self, action: str) -> Iterator[sqlite3.Connection]:
        with self._lock, self._translate(action):
            self._check_open()
            yield self._conn

    @contextmanager
    def _snapshot(self, action: str) -> Iterator[sqlite3.Connection]:
        """Like ``_reading``, inside one read transaction: several statements see the same data
        even while another process writes."""
        with self._reading(action) as conn:
            conn.execute("BEGIN")
            try:
                yield conn
            finally:
                conn.execute("COMMIT")

    @contextmanager
    def _writing(self, action: str) -> Iterator[sqlite3.Connection]:
        with self._lock, self._translate(action):
            self._check_open()
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def _check_open(self) -> None:
        if self._closed:
            raise MemoryStoreError(self.path, "the store is closed")

    def close(self) -> None:
        """Close the connection(s). Further calls raise ``MemoryStoreError``."""
        with self._lock:
            if not self._closed:
                self._closed = True
                if self._helper is not None:
                    self._helper.close()
                self._conn.close()

    def _scoring_helper(self) -> Helper | None:
        """The second read connection that scores half of a large session, opened on first use.
        ``None`` for ``":memory:"`` (a second connection would see another database) and one CPU."""
        if self.path == MEMORY or (os.cpu_count() or 1) < 2:
            return None
        if self._helper is not None and self._helper.pid != os.getpid():
            # A forked child inherits the parent's helper without its thread; never touch the
            # parent's connection from here, open our own.
            self._helper = None
        if self._helper is None:
            self._helper = Helper(self._connect())
        return self._helper

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"MemoryStore({self.path!r})"

    @property
    def schema_version(self) -> int:
        """The schema version of the open file (``PRAGMA user_version``)."""
        with self._reading("read the schema version") as conn:
            return int(conn.execute("PRAGMA user_version").fetchone()[0])

    # -- writing ---------------------------------------------------------------------------------
    def _row(self, session_id: str, item: Any) -> tuple[Any, ...]:
        if isinstance(item, str):
            item = {"content": item}
        if not isinstance(item, Mapping):
            raise TypeError(f"memory entries must be strings or dicts with 'content', got {type(item).__name__}")
        content = check_content(item.get("content"))
        entry_type = check_entry_type(item.get("entry_type", "fact"))
        lane = check_lane(item.get("lane"))
        importance = check_importance(item.get("importance", 0.5))
        created_at = item.get("created_at")
        created = time.time() if created_at is None else check_created_at(created_at)
        tokens = self.counter.count(render_line(content) + "\n")
        return (uuid.uuid4().hex, session_id, content, entry_type, section_for(entry_type), lane, importance, created, tokens)

    def remember(self, session_id: str, content: str, *, entry_type: str = "fact", lane: str | None = None, importance: float = 0.5) -> str:
        """Store one entry in ``session_id`` and return its id. Unknown entry types go to ``other``."""
        return self.remember_many(
            session_id, [{"content": content, "entry_type": entry_type, "lane": lane, "importance": importance}]
        )[0]

    def remember_many(self, session_id: str, entries: Iterable[str | Mapping[str, Any]]) -> list[str]:
        """Store many entries in one transaction (all or nothing). Each is a string or a dict with
        ``content`` and optionally ``entry_type``, ``lane``, ``importance``, ``created_at`` (epoch seconds)."""
        check_session(session_id)
        rows = [self._row(session_id, item) for item in entries]
        if not rows:
            return []
        with self._writing("remember") as conn:
            conn.execute("INSERT OR IGNORE INTO sessions (session_id) VALUES (?)", (session_id,))
            lo, hi = slot_range(session_slot(conn, session_id))  # type: ignore[arg-type]
            (last,) = conn.execute("SELECT max(id) FROM entries WHERE id BETWEEN ? AND ?", (lo, hi)).fetchone()
            first = (last or lo) + 1
            if first + len(rows) - 1 > hi:
                raise MemoryStoreError(self.path, f"session {session_id!r} is full ({MAX_SEQ:,} entries); start a new session")
            conn.executemany(
                "INSERT INTO entries (id, entry_id, session_id, content, entry_type, section, lane, importance, created_at, tokens)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(first + i, *row) for i, row in enumerate(rows)],
            )
        return [row[0] for row in rows]

    def forget(self, session_id: str, entry_id: str) -> bool:
        """Delete one entry of ``session_id``; returns whether it existed."""
        check_session(session_id)
        check_text("entry_id", entry_id)
        with self._writing("forget") as conn:
            cur = conn.execute("DELETE FROM entries WHERE session_id = ? AND entry_id = ?", (session_id, entry_id))
            return cur.rowcount > 0

    # -- reading ---------------------------------------------------------------------------------
    def count(self, session_id: str) -> int:
        """How many entries ``session_id`` holds."""
        check_session(session_id)
        with self._reading("count") as conn:
            return int(conn.execute("SELECT count(*) FROM entries WHERE session_id = ?", (session_id,)).fetchone()[0])

    def recall(self, session_id: str, query: str, *, limit: int = 10) -> list[Evidence]:
        """The ``limit`` entries of ``session_id`` that best match ``query`` (bm25), best first.
        A query with no word in it (or ``None``), or no match, returns ``[]``."""
        check_session(session_id)
        check_limit(limit)
        match = fts_query(check_query(query))
        if match is None:
            return []
        with self._reading("recall") as conn:
            slot = session_slot(conn, session_id)
            if slot is None:
                return []
            rows = conn.execute(
                "SELECT e.entry_id, e.content, e.entry_type, e.section, -bm25(entries_fts) AS score, e.created_at"
                " FROM entries_fts CROSS JOIN entries e ON e.id = entries_fts.rowid"
                " WHERE entries_fts MATCH ? AND entries_fts.rowid BETWEEN ? AND ?"
                " ORDER BY score DESC, e.id DESC LIMIT ?",
                (match, *slot_range(slot), limit),
            ).fetchall()
        return [Evidence(r[0], r[1], r[2], r[3], float(r[4]), iso(r[5])) for r in rows]

    def recent(self, session_id: str, *, limit: int = 10, entry_types: Sequence[str] | None = None, lane: str | None = None) -> list[Evidence]:
        """The ``limit`` most recent entries of ``session_id``, newest first."""
        check_session(session_id)
        check_limit(limit)
        check_lane(lane)
        sql = "SELECT entry_id, content, entry_type, section, created_at FROM entries WHERE session_id = ?"
        params: list[Any] = [session_id]
        types = check_entry_types(entry_types)
        if types is not None:
            wanted = sorted({section_for(t) for t in types})
            sql += f" AND section IN ({', '.join('?' * len(wanted))})"
            params.extend(wanted)
        if lane is not None:
            sql += " AND lane = ?"
            params.append(lane)
        sql += " ORDER BY id DESC LIMIT ?"
        params.append(limit)
        with self._reading("read recent entries") as conn:
            rows = conn.execute(sql, params).fetchall()
        return [Evidence(r[0], r[1], r[2], r[3], 0.0, iso(r[4])) for r in rows]

    def get_context(
        self,
        session_id: str,
        query: str | None,
        *,
        max_token_budget: int = 0,
        mode: str = "full",
        sections: Sequence[str] | None = None,
        entry_types: Sequence[str] | None = None,
        include_working_memory: bool = True,
        lane: str | None = None,
    ) -> ContextAssembly:
        """Assemble one budgeted, sectioned block for ``query`` (see ``assembly.assemble``)."""
        return assemble(
            Source(lambda: self._snapshot("get_context"), self._scoring_helper, self.counter),
            session_id,
            query,
            max_token_budget=max_token_budget,
            mode=mode,
            sections=sections,
            entry_types=entry_types,
            include_working_memory=include_working_memory,
            lane=lane,
        )


__all__ = ["MEMORY", "SCHEMA_VERSION", "MemoryStore", "MemoryStoreError"]
