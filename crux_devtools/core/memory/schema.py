"""The SQLite schema of a memory store, versioned with ``PRAGMA user_version``.

Each migration moves the file from version ``n`` to ``n + 1`` and runs in its own transaction, so a
later release appends to ``MIGRATIONS`` and old files upgrade in place when opened.
"""

from __future__ import annotations

import sqlite3

from ..migrations import apply_migrations
from .sections import SECTION_ORDER

# Version 1: entries plus an external-content FTS5 index kept in sync by triggers. (Its covering index
# entries_meta goes with the table in version 2.)
_V1 = """
CREATE TABLE entries (
    id          INTEGER PRIMARY KEY,
    entry_id    TEXT    NOT NULL UNIQUE,
    session_id  TEXT    NOT NULL,
    content     TEXT    NOT NULL,
    entry_type  TEXT    NOT NULL,
    section     TEXT    NOT NULL,
    lane        TEXT,
    importance  REAL    NOT NULL,
    created_at  REAL    NOT NULL,
    tokens      INTEGER NOT NULL
);
CREATE INDEX entries_by_session ON entries (session_id, id);
CREATE INDEX entries_by_section ON entries (session_id, section, id);
CREATE INDEX entries_meta ON entries (id, session_id, section, tokens, lane);
CREATE VIRTUAL TABLE entries_fts USING fts5 (
    content,
    content = 'entries',
    content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER entries_after_insert AFTER INSERT ON entries BEGIN
    INSERT INTO entries_fts (rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER entries_after_delete AFTER DELETE ON entries BEGIN
    INSERT INTO entries_fts (entries_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
"""

# Where a session's entries live in rowid space: session slot ``s`` owns ids ``s << SLOT_BITS`` up to
# ``((s + 1) << SLOT_BITS) - 1``, numbered in the order they were remembered. A query for one session
# is then a rowid range that FTS5 seeks to, so other sessions' entries are never scored.
SLOT_BITS = 32
MAX_SEQ = (1 << SLOT_BITS) - 1


def slot_range(slot: int) -> tuple[int, int]:
    """The first and last rowid a session slot may use."""
    return slot << SLOT_BITS, (slot << SLOT_BITS) | MAX_SEQ


def session_slot(conn: sqlite3.Connection, session_id: str) -> int | None:
    """The rowid slot of ``session_id`` (see ``slot_range``), or ``None`` if it never stored anything."""
    row = conn.execute("SELECT slot FROM sessions WHERE session_id = ?", (session_id,)).fetchone()
    return None if row is None else int(row[0])


def _section_rank(column: str) -> str:
    cases = " ".join(f"WHEN '{name}' THEN {rank}" for rank, name in enumerate(SECTION_ORDER))
    return f"CASE {column} {cases} ELSE {len(SECTION_ORDER) - 1} END"


# Version 2: rowids laid out per session (``slot_range``) and ``entry_meta``, a narrow table of what
# assembly reads for every match (section rank, token cost, lane): joining FTS5 matches to it reads
# a few bytes per entry instead of the entry's whole row. Existing entries are renumbered in order
# and the FTS5 index is rebuilt; ``entry_id``, the public id, never changes. (The entries table is
# spelled out again on purpose: a migration is a frozen record of one step, not shared with others.)
_V2 = f"""
CREATE TABLE sessions (
    slot        INTEGER PRIMARY KEY,
    session_id  TEXT    NOT NULL UNIQUE
);
INSERT INTO sessions (session_id) SELECT session_id FROM entries GROUP BY session_id ORDER BY min(id);
CREATE TABLE entries_v2 (
    id          INTEGER PRIMARY KEY,
    entry_id    TEXT    NOT NULL UNIQUE,
    session_id  TEXT    NOT NULL,
    content     TEXT    NOT NULL,
    entry_type  TEXT    NOT NULL,
    section     TEXT    NOT NULL,
    lane        TEXT,
    importance  REAL    NOT NULL,
    created_at  REAL    NOT NULL,
    tokens      INTEGER NOT NULL
);
INSERT INTO entries_v2 (id, entry_id, session_id, content, entry_type, section, lane, importance, created_at, tokens)
    SELECT (s.slot << {SLOT_BITS}) + row_number() OVER (PARTITION BY e.session_id ORDER BY e.id),
           e.entry_id, e.session_id, e.content, e.entry_type, e.section, e.lane, e.importance, e.created_at, e.tokens
    FROM entries e JOIN sessions s ON s.session_id = e.session_id;
DROP TRIGGER entries_after_insert;
DROP TRIGGER entries_after_delete;
DROP TABLE entries_fts;
DROP TABLE entries;
ALTER TABLE entries_v2 RENAME TO entries;
CREATE INDEX entries_by_session ON entries (session_id, id);
CREATE INDEX entries_by_section ON entries (session_id, section, id);
CREATE TABLE entry_meta (
    id          INTEGER PRIMARY KEY,
    sec         INTEGER NOT NULL,
    tokens      INTEGER NOT NULL,
    lane        TEXT
);
CREATE INDEX entry_meta_by_section ON entry_meta (sec, id);
INSERT INTO entry_meta (id, sec, tokens, lane) SELECT id, {_section_rank("section")}, tokens, lane FROM entries;
CREATE VIRTUAL TABLE entries_fts USING fts5 (
    content,
    content = 'entries',
    content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO entries_fts (entries_fts) VALUES ('rebuild');
CREATE TRIGGER entries_after_insert AFTER INSERT ON entries BEGIN
    INSERT INTO entries_fts (rowid, content) VALUES (new.id, new.content);
    INSERT INTO entry_meta (id, sec, tokens, lane) VALUES (new.id, {_section_rank("new.section")}, new.tokens, new.lane);
END;
CREATE TRIGGER entries_after_delete AFTER DELETE ON entries BEGIN
    INSERT INTO entries_fts (entries_fts, rowid, content) VALUES ('delete', old.id, old.content);
    DELETE FROM entry_meta WHERE id = old.id;
END;
"""

MIGRATIONS: tuple[str, ...] = (_V1, _V2)
SCHEMA_VERSION = len(MIGRATIONS)


def migrate(conn: sqlite3.Connection) -> int:
    """Bring the file to ``SCHEMA_VERSION``; returns the version it had before.

    Runs under ``BEGIN IMMEDIATE`` and re-reads the version inside the transaction, so two processes
    opening a new file at once migrate it exactly once.
    """
    (version,) = conn.execute("PRAGMA user_version").fetchone()
    if version > SCHEMA_VERSION:
        raise sqlite3.DatabaseError(
            f"memory schema version {version} is newer than this release supports ({SCHEMA_VERSION}); upgrade crux_devtools"
        )
    apply_migrations(conn, MIGRATIONS)
    return version
