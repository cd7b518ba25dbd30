"""One SQLite connection, opened when first needed: the base of the summary and offload stores.

A store on a file opens it at once (a bad path fails where the store is made). An in-memory store
opens its database on the first write, and ``unwritten()`` lets reads answer "nothing" without one,
so the fresh store a ``preview`` or ``generate`` without a store plans against costs nothing.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

MEMORY = ":memory:"


class LazySQLite:
    """Subclasses set ``SCHEMA`` (run once when the connection opens) and hold ``_lock`` around use."""

    SCHEMA = ""

    def __init__(self, path: str | Path = MEMORY) -> None:
        self.path = str(path)
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._closed = False
        if self.path != MEMORY:
            self._open()

    def _open(self) -> sqlite3.Connection:
        if self._closed:
            raise sqlite3.ProgrammingError("Cannot operate on a closed database.")
        if self._db is None:
            db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            db.executescript(self.SCHEMA)
            self._db = db
        return self._db

    def _unwritten(self) -> bool:
        """An in-memory store nobody wrote to yet: every read answers "nothing" without a database."""
        return self._db is None and not self._closed

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
            self._closed = True
