"""Schema migrations for the SQLite stores (memory, runs): one loop, safe with several processes.

Each store keeps its schema version in ``PRAGMA user_version`` and a tuple of migration steps,
step ``i`` taking version ``i`` to ``i + 1``: a SQL script, or a function of the connection for a
step SQL alone does badly (it runs inside the step's transaction and must not commit). Only the
standard library is imported here, so the runs store stays light enough for the inspector's session
process.
"""

from __future__ import annotations

import sqlite3
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
