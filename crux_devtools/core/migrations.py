"""Schema migrations for the SQLite stores (memory, runs): one loop, safe with several processes.

Each store keeps its schema version in ``PRAGMA user_version`` and a tuple of migration steps,
step ``i`` taking version ``i`` to ``i + 1``: a SQL script, or a function of the connection for a
step SQL alone does badly (it runs inside the step's transaction and must not commit). Only the
standard library is imported here, so the runs store stays light enough for the inspector's session
process.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Sequence

Migration = str | Callable[[sqlite3.Connection], None]


def split_script(script: str) -> list[str]:
    """The statements of ``script``. ``executescript()`` would commit the caller's transaction, so
    split on statement ends instead (a trigger keeps its inner statements: ``complete_statement``
    needs its closing ``END;``)."""
    out, buf = [], ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    if buf.strip():
        out.append(buf.strip())
    return out


def use_wal(conn: sqlite3.Connection, timeout: float) -> None:
    """Switch ``conn``'s file to write-ahead logging, waiting up to ``timeout`` seconds for others.

    Switching needs the file to itself for a moment. When several processes open a new file at
    once, SQLite may refuse with "database is locked" at once rather than wait (waiting could
    deadlock two readers that both want to write), so the busy timeout does not cover it: retry
    here, with a growing pause, until the deadline.
    """
    deadline = time.monotonic() + timeout
    pause = 0.005
    while True:
        try:
            (mode,) = conn.execute("PRAGMA journal_mode = WAL").fetchone()
        except sqlite3.OperationalError as exc:
            low = str(exc).lower()
            if ("locked" not in low and "busy" not in low) or time.monotonic() + pause > deadline:
                raise
            time.sleep(pause)
            pause = min(pause * 2, 0.1)
            continue
        if str(mode).lower() != "wal":
            raise sqlite3.OperationalError(f"could not switch to WAL mode (got {mode!r})")
        return


def apply_migrations(conn: sqlite3.Connection, migrations: Sequence[Migration]) -> None:
    """Bring the file from its ``user_version`` to ``len(migrations)``, one step per transaction.

    Each step runs under ``BEGIN IMMEDIATE`` and re-reads the version inside the transaction, so two
    processes opening a new file at once migrate it exactly once.
    """
    target = len(migrations)
    (version,) = conn.execute("PRAGMA user_version").fetchone()
    while version < target:
        conn.execute("BEGIN IMMEDIATE")
        try:
            (version,) = conn.execute("PRAGMA user_version").fetchone()
            if version < target:
                step = migrations[version]
                if callable(step):
                    step(conn)
                else:
                    for statement in split_script(step):
                        conn.execute(statement)
                version += 1
                conn.execute(f"PRAGMA user_version = {version}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
