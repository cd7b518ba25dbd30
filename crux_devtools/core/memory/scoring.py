"""Scoring a session's matches once, inside SQLite, so assembly reads back only what it shows.

``get_context`` must count every match, sum each section's tokens, find each section's top item and
order the sections the budget reaches. All of that needs every match scored (bm25), which is most of
the cost; what is left is kept inside SQLite: the matches of one rowid range (part of one session, see
``schema.slot_range``) go into a per-connection temp table keyed by ``(sec, score, id)``, and assembly
then asks it for per-section counts, one top row per section, or a section's rows best first. Nothing
per match crosses into Python.

A large session is split in two rowid halves scored at the same time on two connections (SQLite
releases the GIL while it works); each half is a complete, exact answer for its rows, and
``merge``-style reads combine them. Both connections must read the same snapshot: each reads the
FTS5 statistics record and the newest rowid after starting its transaction, and a mismatch (a write
landed in between) makes the caller score everything on one connection instead.
"""

from __future__ import annotations

import heapq
import os
import sqlite3
from collections.abc import Generator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

from .sections import SECTION_RANK

WORKING_MEMORY = SECTION_RANK["working_memory"]

# One b-tree keyed in reading order: per-section counts stream from it without a sort, a section's
# best rows are its last keys. (A rowid table plus an index on the same key costs two inserts a match.)
_SETUP = (
    "CREATE TEMP TABLE crux_scored (sec INTEGER NOT NULL, score REAL NOT NULL, id INTEGER NOT NULL, tokens INTEGER NOT NULL,"
    " PRIMARY KEY (sec, score, id)) WITHOUT ROWID",
)
# The FTS5 statistics record (row count and total size) changes with every write to the index; with
# the newest rowid it tells two connections whether they read the same snapshot.
_FINGERPRINT = "SELECT (SELECT block FROM entries_fts_data WHERE id = 1), (SELECT max(id) FROM entries)"

Hit = tuple[int, float, int]  # (rowid, score, tokens)


@dataclass(frozen=True, slots=True)
class Scope:
    """What one ``get_context`` call scores: an FTS5 query over a rowid range, filtered."""

    match: str
    lo: int
    hi: int
    secs: tuple[int, ...] | None  # section ranks in scope; None = all
    lane: str | None
    working_memory: bool  # unmatched working-memory entries ride along with score 0

    def meta_filters(self) -> tuple[str, list[object]]:
        """SQL conditions (``AND ...``) on ``entry_meta m`` for the lane and the sections, with their parameters."""
        sql, params = "", list[object]()
        if self.lane is not None:
            sql += " AND m.lane = ?"
            params.append(self.lane)
        if self.secs is not None:
            sql += f" AND m.sec IN ({', '.join('?' * len(self.secs))})"
            params.extend(self.secs)
        return sql, params

    def split(self, at: int) -> tuple[Scope, Scope]:
        return replace(self, hi=at), replace(self, lo=at + 1)


@dataclass(slots=True)
class Scored:
    """One connection's scored rows for one range: per-section ``[count, tokens]`` and how many matched."""

    conn: sqlite3.Connection
    sections: dict[int, list[int]]
    matched: int


class Helper:
    """A second read connection and the one thread that scores on it."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.pid = os.getpid()
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="crux-memory-scoring")

    def close(self) -> None:
        self.pool.shutdown(wait=True)
        self.conn.close()


def fingerprint(conn: sqlite3.Connection) -> tuple[object, ...]:
    """What identifies the snapshot ``conn``'s open transaction reads."""
    return tuple(conn.execute(_FINGERPRINT).fetchone())


def score_in_new_transaction(conn: sqlite3.Connection, scope: Scope) -> tuple[Scored, tuple[object, ...]]:
    """``score`` on a connection with no open transaction: begins one (the caller ends it)."""
    conn.execute("BEGIN")
    return score(conn, scope), fingerprint(conn)


def prepare(conn: sqlite3.Connection) -> None:
    """Create the connection's temp table for ``score`` (once, when the connection opens)."""
    for statement in _SETUP:
        conn.execute(statement)


def score(conn: sqlite3.Connection, scope: Scope) -> Scored:
    """Score every match of ``scope`` into the connection's temp table (inside its open transaction)."""
    conn.execute("DELETE FROM temp.crux_scored")
    filters, params = scope.meta_filters()
    # ``rank`` is FTS5's bm25 (negated: higher is better).
    matched = conn.execute(
        "INSERT INTO temp.crux_scored (sec, score, id, tokens)"
        " SELECT m.sec, -f.rank, f.rowid, m.tokens FROM entries_fts f CROSS JOIN entry_meta m ON m.id = f.rowid"
        " WHERE entries_fts MATCH ? AND f.rowid BETWEEN ? AND ?" + filters,
        [scope.match, scope.lo, scope.hi, *params],
    ).rowcount
    if scope.working_memory and (scope.secs is None or WORKING_MEMORY in scope.secs):
        # Only the working-memory entries that did not match: a match keeps its score.
        lane = "" if scope.lane is None else " AND lane = ?"
        conn.execute(
            "INSERT INTO temp.crux_scored (sec, score, id, tokens)"
            " SELECT sec, 0.0, id, tokens FROM entry_meta WHERE sec = ? AND id BETWEEN ? AND ?" + lane
            + " AND id NOT IN (SELECT id FROM temp.crux_scored WHERE sec = ?)",
            [WORKING_MEMORY, scope.lo, scope.hi, *([] if scope.lane is None else [scope.lane]), WORKING_MEMORY],
        )
    sections = {sec: [count, tokens] for sec, count, tokens in conn.execute("SELECT sec, count(*), sum(tokens) FROM temp.crux_scored GROUP BY sec")}
    return Scored(conn, sections, matched)


def top(parts: Sequence[Scored], sec: int) -> Hit:
    """The best row of a section across ``parts``: highest score, newest on a tie."""
    best: Hit | None = None
    for part in parts:
        if sec not in part.sections:
            continue
        row = part.conn.execute(
            "SELECT id, score, tokens FROM temp.crux_scored WHERE sec = ? ORDER BY score DESC, id DESC LIMIT 1", [sec]
        ).fetchone()
        if best is None or (row[1], row[0]) > (best[1], best[0]):
            best = row
    assert best is not None, f"section {sec} has no rows"
    return best


def ranked(parts: Sequence[Scored], sec: int) -> Generator[Hit, None, None]:
    """A section's rows across ``parts``, best first (score descending, newest first on a tie).

    Each part reads its rows lazily in index order; the caller stops when the budget is spent.
    """
    cursors = [
        part.conn.execute("SELECT id, score, tokens FROM temp.crux_scored WHERE sec = ? ORDER BY score DESC, id DESC", [sec])
        for part in parts
        if sec in part.sections
    ]
    try:
        if len(cursors) == 1:
            yield from cursors[0]
        else:
            yield from heapq.merge(*cursors, key=lambda hit: (-hit[1], -hit[0]))
    finally:
        for cursor in cursors:
            cursor.close()
