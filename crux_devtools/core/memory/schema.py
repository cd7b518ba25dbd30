"""The SQLite schema of a memory store, versioned with ``PRAGMA user_version``.

Each migration moves the file from version ``n`` to ``n + 1`` and runs in its own transaction, so a
later release appends to ``MIGRATIONS`` and old files upgrade in place when opened.
"""

from __future__ import annotations

import sqlite3

# Version 1: entries plus an external-content FTS5 index kept in sync by triggers. entries_meta is a
# narrow covering index of the per-entry columns; get_context no longer reads through it (joining on
# the primary key measured faster), a later migration may drop it.
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

MIGRATIONS: tuple[str, ...] = (_V1,)
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
    start = version
    while version < SCHEMA_VERSION:
        conn.execute("BEGIN IMMEDIATE")
        try:
            (version,) = conn.execute("PRAGMA user_version").fetchone()
            if version < SCHEMA_VERSION:
                for statement in _split(MIGRATIONS[version]):
                    conn.execute(statement)
                version += 1
                conn.execute(f"PRAGMA user_version = {version}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return start


def _split(script: str) -> list[str]:
    # executescript() would commit our transaction; split on statement ends instead (triggers keep
    # their inner statements because sqlite3.complete_statement needs the closing END;).
    out, buf = [], ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    if buf.strip():
        out.append(buf.strip())
    return out
