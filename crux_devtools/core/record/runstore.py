"""Recorded runs in ``<project>/.crux/runs.sqlite3``: what the application really sent, step by step.

One SQLite file per project, in WAL mode with a busy timeout, written with ``BEGIN IMMEDIATE``, so
several processes (the application, inspectors, the CLI) may write and read at once and lose
nothing. The schema is versioned with ``PRAGMA user_version`` like the memory store's.

A run is a JSON object: ``id, target, kind, file, line, origin, started_at, duration_ms, status,
error, model, input, text, usage, steps`` (each step ``Step.to_dict()``). ``write`` never trusts it: any value that is not JSON
(an object, a set, bytes, NaN, a non-string key) is stored as its ``repr``, and a string longer
than ``TEXT_CAP`` characters is cut, ending with a marker that names its true size (but in a
step's ``sent`` request, kept whole: it is what the model received). Every SQLite
failure is translated once, here, into a ``RunStoreError`` that names the file and says what to do.

This module imports only the standard library (and ``errors``), so the inspector's light session
process can read the store without loading pydantic, tiktoken or the planner.
"""

from __future__ import annotations

import builtins
import hashlib
import json
import math
import os
import re
import sqlite3
import sys
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, get_args

from ..errors import DamagedRunError, RunStoreError
from ..migrations import apply_migrations, split_script, use_wal

RUNS_FILE = Path(".crux") / "runs.sqlite3"
TEXT_CAP = 1_000_000  # characters kept of any one string in a run
SEARCH_CAP = 100_000  # characters of each searchable field that go into the text index
MAX_DEPTH = 64  # deeper nesting is stored as a repr
SQLITE_MAX_INT = 2**63 - 1  # a limit or offset beyond it means "all" or "past the end"
RunStatus = Literal["ok", "error", "max_steps"]  # how a run ended: every filter and look table reads these
RUN_STATUSES: tuple[RunStatus, ...] = get_args(RunStatus)
RUN_ORIGINS = ("app", "inspector", "otel")

# Version 1. ``seq`` is the write order (never reused); listing order is ``started`` (seconds since
# the epoch, from ``started_at``) then ``seq``, newest first, through one index per filter. ``runs``
# holds only what filters and counts read (narrow rows: a count reads a few bytes per run); each
# run's summary JSON is in ``run_summaries`` and its steps in ``steps``, read only for the page shown.
_V1 = """
CREATE TABLE runs (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    id           TEXT    NOT NULL UNIQUE,
    started      REAL    NOT NULL,
    target       TEXT    NOT NULL,
    status       TEXT    NOT NULL,
    origin       TEXT    NOT NULL,
    step_count   INTEGER NOT NULL,
    input_tokens INTEGER NOT NULL
);
CREATE INDEX runs_newest ON runs (started, seq);
CREATE INDEX runs_by_target ON runs (target, started, seq);
CREATE INDEX runs_by_target_status ON runs (target, status, started, seq);
CREATE INDEX runs_by_status ON runs (status, started, seq);
CREATE INDEX runs_by_origin ON runs (origin, started, seq);
CREATE TABLE run_summaries (
    seq      INTEGER PRIMARY KEY,
    summary  TEXT    NOT NULL
);
CREATE TABLE run_counts (
    target  TEXT    NOT NULL,
    status  TEXT    NOT NULL,
    origin  TEXT    NOT NULL,
    n       INTEGER NOT NULL,
    PRIMARY KEY (target, status, origin)
) WITHOUT ROWID;
CREATE TRIGGER runs_counted AFTER INSERT ON runs BEGIN
    INSERT INTO run_counts (target, status, origin, n) VALUES (new.target, new.status, new.origin, 1)
        ON CONFLICT (target, status, origin) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER runs_uncounted AFTER DELETE ON runs BEGIN
    UPDATE run_counts SET n = n - 1 WHERE target = old.target AND status = old.status AND origin = old.origin;
    DELETE FROM run_counts WHERE target = old.target AND status = old.status AND origin = old.origin AND n <= 0;
END;
CREATE TABLE steps (
    id       INTEGER PRIMARY KEY,
    run_seq  INTEGER NOT NULL,
    idx      INTEGER NOT NULL,
    data     TEXT    NOT NULL
);
CREATE INDEX steps_by_run ON steps (run_seq, idx);
CREATE VIRTUAL TABLE runs_fts USING fts5 (
    target, model, input, text, error,
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TABLE meta (
    key    TEXT PRIMARY KEY,
    value  INTEGER NOT NULL
);
INSERT INTO meta (key, value) VALUES ('writes', 0);
"""

# Version 2: what each step's plan was made from (``plan_inputs.py``), so a step can be replayed.
# Every text is kept once in ``blobs`` (content-addressed: the steps of a run and runs of the same
# prompt share their texts and frames); ``step_plans`` holds each step's frame hash and small state.
# ``parent``/``fork_step``: a run made by replaying step ``fork_step`` of run ``parent``.
_V2 = """
CREATE TABLE blobs (
    hash  TEXT PRIMARY KEY,
    text  TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE step_plans (
    run_seq  INTEGER NOT NULL,
    idx      INTEGER NOT NULL,
    frame    TEXT    NOT NULL,
    state    TEXT    NOT NULL,
    PRIMARY KEY (run_seq, idx)
) WITHOUT ROWID;
CREATE TRIGGER runs_plans_gone AFTER DELETE ON runs BEGIN
    DELETE FROM step_plans WHERE run_seq = old.seq;
END;
ALTER TABLE runs ADD COLUMN parent TEXT;
ALTER TABLE runs ADD COLUMN fork_step INTEGER;
CREATE INDEX runs_by_parent ON runs (parent) WHERE parent IS NOT NULL;
"""

# Version 3: which texts each frame refers to (``blob_refs``), so the blobs no run refers to any more
# go with the runs that did (``_drop_unreferenced``) without reading every remaining frame.
_V3 = """
CREATE TABLE blob_refs (
    frame  TEXT NOT NULL,
    hash   TEXT NOT NULL,
    PRIMARY KEY (frame, hash)
) WITHOUT ROWID;
CREATE INDEX blob_refs_by_hash ON blob_refs (hash);
CREATE INDEX step_plans_by_frame ON step_plans (frame);
"""


def _migrate_v3(conn: sqlite3.Connection) -> None:
    """Add ``blob_refs`` (filled from the frames kept so far) and drop the blobs no frame refers to."""
    for statement in split_script(_V3):
        conn.execute(statement)
    for frame_hash, text in conn.execute("SELECT hash, text FROM blobs WHERE hash IN (SELECT frame FROM step_plans)").fetchall():
        conn.executemany("INSERT OR IGNORE INTO blob_refs (frame, hash) VALUES (?, ?)", [(frame_hash, h) for h in _text_refs(json.loads(text))])
    conn.execute("DELETE FROM blobs WHERE hash NOT IN (SELECT frame FROM step_plans) AND hash NOT IN (SELECT hash FROM blob_refs)")


# Version 4: each run's model, duration and provider-reported usage in its ``runs`` row (the values
# ``json_extract`` reads from its summary: ``_FIGURES``), and ``run_usage`` summing the usage per
# target, status, origin and model, kept by triggers like ``run_counts``: the cost of every run a
# filter matches is read from a few rows, however many runs there are (``usage_by_model``), and a
# chart's per-run figures from the narrow rows (``figures``). ``model_key`` is ``''`` for a run with
# no model, else ``'t'`` and the model's name (a key column cannot hold NULL). ``odd`` counts the runs
# whose model is not a text or whose usage holds a count that is not an integer: SQL's ``sum()``
# types those differently from ``+``, so a filter that has any is summed over its runs instead.
_USAGE_KEYS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cache_write_1h_tokens")
_USAGE_COLUMNS = ("usage_input", "usage_output", "usage_cache_read", "usage_cache_write", "usage_cache_write_1h")
_FIGURE_COLUMNS = ("model", "duration_ms", *_USAGE_COLUMNS)
_FIGURES = ", ".join(["json_extract(?1, '$.model')", "json_extract(?1, '$.duration_ms')", *(f"json_extract(?1, '$.usage.{k}')" for k in _USAGE_KEYS)])


def _model_key(row: str) -> str:
    return f"CASE WHEN {row}model IS NULL THEN '' ELSE 't' || {row}model END"


def _odd(row: str) -> str:
    return f"(typeof({row}model) NOT IN ('null', 'text')" + "".join(f" OR typeof({row}{c}) NOT IN ('null', 'integer')" for c in _USAGE_COLUMNS) + ")"


_USAGE = ", ".join(_USAGE_COLUMNS)
_V4 = "".join(f"ALTER TABLE runs ADD COLUMN {c};\n" for c in _FIGURE_COLUMNS) + f"""
CREATE TABLE run_usage (
    target     TEXT    NOT NULL,
    status     TEXT    NOT NULL,
    origin     TEXT    NOT NULL,
    model_key  TEXT    NOT NULL,
    n          INTEGER NOT NULL,
    reported   INTEGER NOT NULL,
    odd        INTEGER NOT NULL,
    {" NOT NULL, ".join(_USAGE_COLUMNS)} NOT NULL,
    PRIMARY KEY (target, status, origin, model_key)
) WITHOUT ROWID;
CREATE TRIGGER runs_usage_added AFTER INSERT ON runs BEGIN
    INSERT INTO run_usage (target, status, origin, model_key, n, reported, odd, {_USAGE})
        VALUES (new.target, new.status, new.origin, {_model_key("new.")}, 1, new.usage_input IS NOT NULL, {_odd("new.")},
                {", ".join(f"coalesce(new.{c}, 0)" for c in _USAGE_COLUMNS)})
        ON CONFLICT (target, status, origin, model_key) DO UPDATE SET
            n = n + 1, reported = reported + excluded.reported, odd = odd + excluded.odd,
            {", ".join(f"{c} = {c} + excluded.{c}" for c in _USAGE_COLUMNS)};
END;
CREATE TRIGGER runs_usage_removed AFTER DELETE ON runs BEGIN
    UPDATE run_usage SET
            n = n - 1, reported = reported - (old.usage_input IS NOT NULL), odd = odd - {_odd("old.")},
            {", ".join(f"{c} = {c} - coalesce(old.{c}, 0)" for c in _USAGE_COLUMNS)}
        WHERE target = old.target AND status = old.status AND origin = old.origin AND model_key = {_model_key("old.")};
    DELETE FROM run_usage WHERE target = old.target AND status = old.status AND origin = old.origin AND n <= 0;
END;
"""


def _migrate_v4(conn: sqlite3.Connection) -> None:
    """Add the figure columns (filled from the summaries), then ``run_usage`` (summed from them) and its triggers."""
    statements = split_script(_V4)
    triggers = [s for s in statements if s.startswith("CREATE TRIGGER")]
    for statement in statements:
        if statement not in triggers:
            conn.execute(statement)
    conn.execute(f"UPDATE runs SET ({', '.join(_FIGURE_COLUMNS)}) = (SELECT {_FIGURES.replace('?1', 's.summary')} FROM run_summaries s WHERE s.seq = runs.seq)")
    conn.execute(
        f"INSERT INTO run_usage (target, status, origin, model_key, n, reported, odd, {_USAGE})"
        f" SELECT target, status, origin, {_model_key('')}, count(*), count(usage_input), sum({_odd('')}), "
        + ", ".join(f"sum(coalesce({c}, 0))" for c in _USAGE_COLUMNS)
        + f" FROM runs GROUP BY target, status, origin, {_model_key('')}"
    )
    for statement in triggers:
        conn.execute(statement)


# Version 5: the runs being recorded right now (``live.py``): per run, its summary so far and the
# text of the step streaming, with its timing. A run's row goes when the run is written; ``meta``'s
# ``live`` counts the updates, so a page polls one number to learn the text grew.
_V5 = """
CREATE TABLE IF NOT EXISTS live_runs (
    run_id          TEXT    PRIMARY KEY,
    started         REAL    NOT NULL,
    summary         TEXT    NOT NULL,
    idx             INTEGER NOT NULL,
    text            TEXT    NOT NULL,
    first_token_ms  REAL,
    elapsed_ms      REAL,
    chunks          INTEGER NOT NULL,
    pid             INTEGER NOT NULL,
    updated         REAL    NOT NULL
) WITHOUT ROWID;
INSERT OR IGNORE INTO meta (key, value) VALUES ('live', 0);
"""

MIGRATIONS: tuple[Any, ...] = (_V1, _V2, _migrate_v3, _migrate_v4, _V5)
LIVE_VERSION = MIGRATIONS.index(_V5) + 1  # the first schema version with ``live_runs``
LIVE_BUSY_MS = 50  # how long a live update waits for another writer before it is skipped
SCHEMA_VERSION = len(MIGRATIONS)


# -- making any run storable ---------------------------------------------------------------------
def cut_text(text: str, cap: int = TEXT_CAP) -> str:
    """``text`` itself, or its first ``cap`` characters and a marker naming its true size."""
    if len(text) <= cap:
        return text
    return text[:cap] + f"\n… [cut by crux_devtools: {len(text):,} characters in all, the first {cap:,} kept]"


def _repr(value: Any) -> str:
    try:
        return repr(value)
    except Exception as exc:  # noqa: BLE001 - a broken __repr__ must not stop a run being stored
        return f"<{type(value).__name__} object: repr() raised {type(exc).__name__}>"


def storable(value: Any, cap: int = TEXT_CAP) -> Any:
    """``value`` as JSON data: containers rebuilt, strings capped, anything else its ``repr``.

    Objects with ``to_dict()`` or ``model_dump()`` (results, pydantic models) are converted first;
    a conversion that raises, a cycle, or nesting deeper than ``MAX_DEPTH`` becomes a ``repr``.
    Never raises.
    """
    return _storable(value, cap, 0, set())


def _storable(value: Any, cap: int, depth: int, active: set[int]) -> Any:
    if value is None or value is True or value is False or type(value) is int:
        return value
    if type(value) is str:
        return value if len(value) <= cap else cut_text(value, cap)
    if type(value) is float:
        return value if math.isfinite(value) else repr(value)
    if depth >= MAX_DEPTH:
        return cut_text(_repr(value), cap)
    if isinstance(value, (dict, list, tuple)):
        if id(value) in active:
            return f"<cycle: {type(value).__name__}>"
        active.add(id(value))
        try:
            if isinstance(value, dict):
                return {(k if type(k) is str else _key(k)): _storable(v, cap, depth + 1, active) for k, v in value.items()}
            return [_storable(v, cap, depth + 1, active) for v in value]
        finally:
            active.discard(id(value))
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return _storable(float(value), cap, depth, active)
    if isinstance(value, str):
        return _storable(str(value), cap, depth, active)
    for convert in ("to_dict", "model_dump"):
        method = getattr(type(value), convert, None)
        if callable(method) and not isinstance(value, type):
            try:
                converted = value.model_dump(mode="json") if convert == "model_dump" else method(value)
            except Exception:  # noqa: BLE001 - fall back to the repr below
                break
            return _storable(converted, cap, depth + 1, active)
    if isinstance(value, (set, frozenset)):
        items = [_storable(v, cap, depth + 1, active) for v in value]
        try:
            return sorted(items, key=lambda v: json.dumps(v, sort_keys=True))
        except Exception:  # noqa: BLE001
            return items
    return cut_text(_repr(value), cap)


def _key(key: Any) -> str:
    if key is None or isinstance(key, (bool, int, float)):
        return json.dumps(key) if not isinstance(key, float) or math.isfinite(key) else repr(key)
    return key if isinstance(key, str) else _repr(key)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _utf8(text: str) -> str:
    """``text`` as SQLite can store it: a lone surrogate (bytes decoded with surrogateescape) becomes
    its ``\\udcXX`` escape, which inside a JSON string reads back as the same character."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


_C1 = re.compile("[\x7f-\x9f]")


def json_text(value: Any, *, indent: int | None = None) -> str:
    """``value`` (a run read back from the store) as JSON text any UTF-8 output can take: a lone
    surrogate the store kept (a reply with broken bytes) is written as its ``\\udcXX`` escape, and
    DEL and the C1 controls (which JSON leaves raw, and a terminal obeys) as ``\\u009b``."""
    text = json.dumps(value, ensure_ascii=False, indent=indent, allow_nan=False)
    return _utf8(_C1.sub(lambda m: f"\\u{ord(m.group()):04x}", text) if _C1.search(text) else text)


def stored_json(value: Any) -> str:
    """``value`` as the JSON text ``write`` stores: ``storable(value)``, taking the fast path when the
    value is already plain JSON so short that no string in it can reach ``TEXT_CAP``."""
    try:
        text = _dumps(value)
    except (TypeError, ValueError, RecursionError):
        text = None
    if text is None or len(text) > TEXT_CAP:
        text = _dumps(storable(value))
    return _utf8(text)


def stored_step(step: Any) -> str:
    """A step as ``write`` stores it: like ``stored_json``, but its ``sent`` request is kept whole
    however long its texts are (the record of what the model received, which replay compares
    with); the step's other strings are capped at ``TEXT_CAP``."""
    if not isinstance(step, Mapping) or not isinstance(step.get("sent"), Mapping):
        return stored_json(step)
    try:
        text = _dumps(step)
    except (TypeError, ValueError, RecursionError):
        text = None
    if text is None or len(text) > TEXT_CAP:
        text = _dumps({(k if type(k) is str else _key(k)): storable(v, sys.maxsize) if k == "sent" else storable(v) for k, v in step.items()})
    return _utf8(text)


# -- search --------------------------------------------------------------------------------------
_WORD = re.compile(r"\w+", re.UNICODE)


def _match_expr(text: str) -> str | None:
    """A free-text query as an FTS5 expression: every word, quoted (inert), as a prefix, all required."""
    terms: dict[str, None] = {}
    for word in _WORD.findall(text.lower()):
        for part in word.split("_"):  # "_" separates words for FTS5's tokenizer too
            if part:
                terms.setdefault(part, None)
    if not terms:
        return None
    return " ".join('"' + t.replace('"', '""') + '"*' for t in list(terms)[:32])


def _search_text(value: Any) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else _dumps(value)
    return text[:SEARCH_CAP]


def _error_text(error: Any) -> str:
    if isinstance(error, Mapping):
        return f"{error.get('type') or ''} {error.get('message') or ''}".strip()
    return _search_text(error)


# -- run fields ----------------------------------------------------------------------------------
def iso_now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def _started(run: dict[str, Any]) -> float:
    """``started_at`` as seconds since the epoch; a missing or unreadable one becomes now."""
    value = run.get("started_at")
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
            if parsed.tzinfo is None:
                parsed = parsed.replace(tzinfo=UTC)
            return parsed.timestamp()
        except ValueError:
            pass
    run["started_at"] = iso_now()
    return time.time()


def _input_tokens(steps: list[Any]) -> int:
    total = 0
    for step in steps:
        request = step.get("request") if isinstance(step, dict) else None
        tokens = request.get("input_tokens") if isinstance(request, dict) else None
        if type(tokens) is int:
            total += tokens
    return total


class RunStore:
    """The recorded runs of one project, newest first. Safe to share between threads.

    ``create=False`` opens an existing file read-mostly: a missing file then behaves as an empty
    store (``list() == []``, ``get()`` is ``None``), and is picked up as soon as a writer creates
    it. ``busy_timeout`` (seconds) is how long a write waits for another writer before it fails.
    """

    def __init__(self, path: str | os.PathLike[str], *, create: bool = True, busy_timeout: float = 5.0) -> None:
        self.path = os.fspath(path)
        self.create = create
        self._busy_timeout = busy_timeout
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._closed = False
        self._readonly = False
        self._batched = False  # inside ``batch()``: writes join its transaction
        if create:
            self._open()

    @classmethod
    def for_project(cls, root: str | os.PathLike[str], *, create: bool = True, busy_timeout: float = 5.0) -> RunStore:
        """The store of the project in ``root``: ``root/.crux/runs.sqlite3``."""
        return cls(Path(root) / RUNS_FILE, create=create, busy_timeout=busy_timeout)

    # -- opening -----------------------------------------------------------------------------
    def _open(self) -> sqlite3.Connection | None:
        """The connection, opened on first need; ``None`` while a ``create=False`` file is missing."""
        if self._closed:
            raise RunStoreError(self.path, "the store is closed")
        if self._conn is not None:
            return self._conn
        if not self.create and not os.path.exists(self.path):
            return None
        if self.create:
            self._make_folder()
        with self._translate("open"):
            conn = self._connect()
            try:
                self._migrate(conn)
            except BaseException:
                conn.close()
                raise
        self._conn = conn
        return conn

    def _make_folder(self) -> None:
        folder = Path(self.path).parent
        existing = next((p for p in (folder, *folder.parents) if p.exists()), None)
        if existing is not None and not existing.is_dir():
            raise RunStoreError(self.path, f"{str(existing)!r} is a file, not a folder; remove or rename it so runs can be recorded there")
        try:
            new = not folder.exists()
            folder.mkdir(parents=True, exist_ok=True)
            if new and folder.name == ".crux":
                (folder / ".gitignore").write_text("*\n", encoding="utf-8")  # keep recorded runs out of git
        except OSError as exc:
            raise RunStoreError(self.path, f"cannot create the folder {str(folder)!r} ({exc.strerror or exc}); check that it is writable") from exc

    def _connect(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=self._busy_timeout)
        except sqlite3.OperationalError:
            if self.create:
                raise
            return self._connect_readonly()
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout * 1000)}")
            use_wal(conn, self._busy_timeout)
            conn.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.OperationalError as exc:
            conn.close()
            if self.create or not _is_readonly(exc):
                raise
            return self._connect_readonly()
        except BaseException:
            conn.close()
            raise
        return conn

    def _connect_readonly(self) -> sqlite3.Connection:
        """A read-only view of a file this process cannot write (e.g. in a read-only folder)."""
        uri = Path(os.path.abspath(self.path)).as_uri() + "?mode=ro"
        try:
            conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False, timeout=self._busy_timeout)
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.Error:
            # WAL needs a writable -shm file; an immutable snapshot still shows what was committed.
            conn = sqlite3.connect(uri.replace("mode=ro", "immutable=1"), uri=True, isolation_level=None, check_same_thread=False)
        self._readonly = True
        return conn

    def _migrate(self, conn: sqlite3.Connection) -> None:
        (version,) = conn.execute("PRAGMA user_version").fetchone()
        if version > SCHEMA_VERSION:
            raise RunStoreError(
                self.path,
                f"schema version {version} is newer than this release of crux_devtools supports ({SCHEMA_VERSION}); "
                "upgrade crux_devtools (or record into another folder)",
            )
        if version == SCHEMA_VERSION or (not self.create and version == 0):
            return  # a brand-new file being created by a writer right now reads as empty
        if self._readonly and version >= 1:
            return  # a file this process cannot write is read as it is (the readers handle older versions)
        apply_migrations(conn, MIGRATIONS)

    def _ready(self, conn: sqlite3.Connection) -> bool:
        """Whether the file has its tables (a ``create=False`` view of a file still being created may not)."""
        if self.create:
            return True
        (version,) = conn.execute("PRAGMA user_version").fetchone()
        if version > SCHEMA_VERSION:
            raise RunStoreError(self.path, f"schema version {version} is newer than this release of crux_devtools supports ({SCHEMA_VERSION}); upgrade crux_devtools")
        if 0 < version < SCHEMA_VERSION:
            # first seen empty, now part-made by a writer (one migration step per transaction): finish
            # it here, each step once whoever takes it, rather than read tables that are not there yet
            # (``_migrate`` leaves a file this process cannot write as it is)
            self._migrate(conn)
        return version >= 1

    # -- plumbing ----------------------------------------------------------------------------
    @contextmanager
    def _translate(self, action: str) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            raise self._error(action, exc) from exc

    def _error(self, action: str, exc: sqlite3.Error) -> RunStoreError:
        text = str(exc)
        low = text.lower()
        if "locked" in low or "busy" in low:
            hint = f"the database is locked by another process (waited {self._busy_timeout:g} s); retry later"
        elif "not a database" in low or "malformed" in low or "corrupt" in low:
            hint = f"the file is not a valid runs database ({text}); move it aside or delete it and a new one is created"
        elif "readonly" in low or "read-only" in low:
            hint = f"the file or its folder is read-only ({text}); make it writable or record into another folder"
        elif "unable to open" in low:
            hint = f"cannot open the file ({text}); check that its folder exists and is writable"
        elif "no such module: fts5" in low:
            hint = "this Python's SQLite has no FTS5 module; recording runs needs SQLite built with FTS5"
        else:
            hint = text
        return RunStoreError(self.path, f"{action} failed: {hint}")

    @contextmanager
    def _reading(self, action: str) -> Iterator[sqlite3.Connection | None]:
        """One read transaction (a consistent snapshot even while others write); ``None`` when empty."""
        with self._lock:
            conn = self._open()
            with self._translate(action):
                if conn is None or not self._ready(conn):
                    yield None
                    return
                if self._batched:
                    yield conn  # inside ``batch()``: read within its transaction
                    return
                conn.execute("BEGIN")
                try:
                    yield conn
                finally:
                    conn.execute("COMMIT")

    @contextmanager
    def _writing(self, action: str) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._batched and self._conn is not None:
                yield self._conn  # the transaction of the enclosing ``batch()``
                return
            if not self.create:
                raise RunStoreError(self.path, f"{action} failed: the store was opened with create=False (read-only)")
            conn = self._open()
            assert conn is not None
            with self._translate(action):
                conn.execute("BEGIN IMMEDIATE")
                try:
                    yield conn
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Every write inside is one transaction: many runs at once cost one commit, and either all
        of them are stored or none. Other writers wait meanwhile: keep a batch to a few hundred runs."""
        with self._writing("write runs") as _conn:
            self._batched = True
            try:
                yield
            finally:
                self._batched = False

    def close(self) -> None:
        """Close the connection. Further calls raise ``RunStoreError``."""
        with self._lock:
            self._closed = True
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RunStore({self.path!r})"

    @property
    def schema_version(self) -> int:
        """The schema version of the file (``PRAGMA user_version``); 0 for a missing file."""
        with self._lock:
            conn = self._open()
            if conn is None:
                return 0
            with self._translate("read the schema version"):
                return int(conn.execute("PRAGMA user_version").fetchone()[0])

    # -- writing -----------------------------------------------------------------------------
    def write(self, run: Mapping[str, Any], *, keep: int | None = None) -> str:
        """Store one whole run (the shape above) and return its id.

        Writing a run whose id is already stored replaces it. With ``keep``, only the newest
        ``keep`` runs remain afterwards (older ones go with their steps), in the same transaction.
        """
        if not isinstance(run, Mapping):
            raise TypeError(f"a run must be a dict, got {type(run).__name__}")
        if keep is not None and (isinstance(keep, bool) or not isinstance(keep, int) or keep < 1):
            raise ValueError(f"keep must be a positive int or None, got {keep!r}")
        data = dict(run)
        plan_inputs = data.pop("plan_inputs", None)
        steps = data.pop("steps", None) or []
        if not isinstance(steps, list):
            steps = [steps]
        data = storable(data)
        run_id = data.get("id")
        if not isinstance(run_id, str) or not run_id:
            run_id = data["id"] = new_run_id()
        started = _started(data)
        target = _utf8(str(data.get("target") or ""))
        status = _utf8(str(data.get("status") or "ok"))
        origin = _utf8(str(data.get("origin") or "app"))
        data["target"], data["status"], data["origin"] = target, status, origin
        step_count, input_tokens = len(steps), _input_tokens(steps)
        summary = _utf8(_dumps(data))  # already made storable above
        step_rows = [stored_step(step) for step in steps]
        search = tuple(_utf8(t) for t in (target, _search_text(data.get("model")), _search_text(data.get("input")), _search_text(data.get("text")), _error_text(data.get("error"))))
        with self._writing("write a run") as conn:
            old = conn.execute("SELECT seq FROM runs WHERE id = ?", (run_id,)).fetchone()
            if old is not None:
                self._delete(conn, [old[0]])
            cur = conn.execute(
                f"INSERT INTO runs (id, started, target, status, origin, step_count, input_tokens, {', '.join(_FIGURE_COLUMNS)})"
                f" VALUES (?2, ?3, ?4, ?5, ?6, ?7, ?8, {_FIGURES})",
                (summary, run_id, started, target, status, origin, step_count, input_tokens),
            )
            seq = cur.lastrowid
            conn.execute("INSERT INTO run_summaries (seq, summary) VALUES (?, ?)", (seq, summary))
            conn.executemany("INSERT INTO steps (run_seq, idx, data) VALUES (?, ?, ?)", [(seq, i, row) for i, row in enumerate(step_rows)])
            conn.execute("INSERT INTO runs_fts (rowid, target, model, input, text, error) VALUES (?, ?, ?, ?, ?, ?)", (seq, *search))
            _write_replay_data(conn, seq, data, plan_inputs)
            if conn.execute("DELETE FROM live_runs WHERE run_id = ?", (run_id,)).rowcount:
                conn.execute("UPDATE meta SET value = value + 1 WHERE key = 'live'")
            if keep is not None:
                self._prune(conn, keep)
            conn.execute("UPDATE meta SET value = value + 1 WHERE key = 'writes'")
        return run_id

    def delete(self, run_ids: builtins.list[str]) -> int:
        """Delete the runs with these ids (with everything of theirs); returns how many there were."""
        with self._writing("delete runs") as conn:
            seqs = [seq for chunk, marks in _chunks(list(run_ids)) for (seq,) in conn.execute(f"SELECT seq FROM runs WHERE id IN ({marks})", chunk)]
            if seqs:
                self._delete(conn, seqs)
                conn.execute("UPDATE meta SET value = value + 1 WHERE key = 'writes'")
        return len(seqs)

    def prune(self, keep: int) -> int:
        """Delete all but the newest ``keep`` runs (with their steps); returns how many went."""
        if isinstance(keep, bool) or not isinstance(keep, int) or keep < 0:
            raise ValueError(f"keep must be a non-negative int, got {keep!r}")
        with self._writing("prune runs") as conn:
            gone = self._prune(conn, keep)
            if gone:
                conn.execute("UPDATE meta SET value = value + 1 WHERE key = 'writes'")
        return gone

    @staticmethod
    def _prune(conn: sqlite3.Connection, keep: int) -> int:
        (total,) = conn.execute("SELECT coalesce(sum(n), 0) FROM run_counts").fetchone()
        if total <= keep:
            return 0
        victims = [row[0] for row in conn.execute("SELECT seq FROM runs ORDER BY started, seq LIMIT ?", (total - keep,))]
        RunStore._delete(conn, victims)
        return len(victims)

    @staticmethod
    def _delete(conn: sqlite3.Connection, seqs: list[int]) -> None:
        """Delete runs with everything of theirs, the plan inputs' blobs no other run refers to included."""
        frames: set[str] = set()
        for chunk, marks in _chunks(seqs):
            frames.update(h for (h,) in conn.execute(f"SELECT DISTINCT frame FROM step_plans WHERE run_seq IN ({marks})", chunk))
            conn.execute(f"DELETE FROM steps WHERE run_seq IN ({marks})", chunk)
            conn.execute(f"DELETE FROM runs_fts WHERE rowid IN ({marks})", chunk)
            conn.execute(f"DELETE FROM run_summaries WHERE seq IN ({marks})", chunk)
            conn.execute(f"DELETE FROM runs WHERE seq IN ({marks})", chunk)  # their step_plans go by trigger
        if frames:
            _drop_unreferenced(conn, frames)

    # -- reading -----------------------------------------------------------------------------
    @staticmethod
    def _where(
        target: str | None, status: str | None, origin: str | None, text: str | None, *, table: str = "", at_most: int | None = None
    ) -> tuple[str, list[Any]]:
        """The WHERE clause and its arguments for the filters of ``list`` and ``count`` (``table``:
        a prefix for the column names, such as ``"runs."`` in a join). ``at_most`` (with ``text``):
        only the ``at_most`` matching runs written last (``_last_matches``)."""
        if at_most is not None and text is not None and text.strip():
            sql, last_args = RunStore._last_matches(target, status, origin, text, at_most)
            return f" WHERE {table}seq IN ({sql})", last_args
        clauses: list[str] = []
        args: list[Any] = []
        for column, value in (("target", target), ("status", status), ("origin", origin)):
            if value is not None:
                clauses.append(f"{table}{column} = ?")
                args.append(value)
        if text is not None and text.strip():
            expr = _match_expr(text)
            if expr is None:
                # Only punctuation: fall back to a plain substring test on the summary.
                clauses.append("seq IN (SELECT seq FROM run_summaries WHERE instr(lower(summary), ?) > 0)")
                args.append(text.strip().lower())
            else:
                clauses.append("seq IN (SELECT rowid FROM runs_fts WHERE runs_fts MATCH ?)")
                args.append(expr)
        return (" WHERE " + " AND ".join(clauses) if clauses else ""), args

    @staticmethod
    def _last_matches(target: str | None, status: str | None, origin: str | None, text: str, at_most: int) -> tuple[str, list[Any]]:
        """A query of the ``seq`` of the ``at_most`` runs written last that match the filters and ``text``.

        The text index gives its matches newest written first (by rowid, ``seq``), so the query
        stops after ``at_most`` of them: its cost is that of ``at_most`` runs, not of every match.
        """
        limit = min(max(at_most, 0), SQLITE_MAX_INT)
        clause, args = RunStore._where(target, status, origin, None, table="runs.")
        joined = clause.replace(" WHERE ", " AND ", 1)
        expr = _match_expr(text)
        if expr is None:  # only punctuation: the substring test of ``_where``, newest written first
            return (
                f"SELECT s.seq FROM run_summaries s CROSS JOIN runs ON runs.seq = s.seq WHERE instr(lower(s.summary), ?) > 0{joined}"
                " ORDER BY s.seq DESC LIMIT ?"
            ), [text.strip().lower(), *args, limit]
        if not clause:
            return "SELECT rowid FROM runs_fts WHERE runs_fts MATCH ? ORDER BY rowid DESC LIMIT ?", [expr, limit]
        return (
            f"SELECT runs.seq FROM runs_fts CROSS JOIN runs ON runs.seq = runs_fts.rowid WHERE runs_fts MATCH ?{joined}"
            " ORDER BY runs_fts.rowid DESC LIMIT ?"
        ), [expr, *args, limit]

    def list(
        self,
        *,
        target: str | None = None,
        status: str | None = None,
        origin: str | None = None,
        text: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> list[dict[str, Any]]:
        """Run summaries, newest first: each run without ``steps``, plus ``step_count`` and ``input_tokens``.

        ``text`` matches words (as prefixes) of the target, model, input, final text and error.
        """
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise ValueError(f"limit must be a non-negative int, got {limit!r}")
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise ValueError(f"offset must be a non-negative int, got {offset!r}")
        limit, offset = min(limit, SQLITE_MAX_INT), min(offset, SQLITE_MAX_INT)
        searching = text is not None and bool(text.strip())
        clause, args = self._where(target, status, origin, None if searching else text)
        with self._reading("list runs") as conn:
            if conn is None:
                return []
            if searching:
                assert text is not None
                page = _searched_page(conn, clause, args, text, limit, offset)
            else:
                page = conn.execute(
                    f"SELECT seq, step_count, input_tokens FROM runs{clause} ORDER BY started DESC, seq DESC LIMIT ? OFFSET ?", (*args, limit, offset)
                ).fetchall()
            rows = self._with_summaries(conn, page)
        out = []
        for summary, step_count, input_tokens in rows:
            run = json.loads(summary)
            run["step_count"] = step_count
            run["input_tokens"] = input_tokens
            out.append(run)
        return out

    @staticmethod
    def _with_summaries(conn: sqlite3.Connection, rows: builtins.list[tuple[int, int, int]]) -> builtins.list[tuple[str, int, int]]:
        """``(summary, step_count, input_tokens)`` for ``(seq, step_count, input_tokens)`` rows, in order."""
        if not rows:
            return []
        marks = ",".join("?" * len(rows))
        found = dict(conn.execute(f"SELECT seq, summary FROM run_summaries WHERE seq IN ({marks})", [r[0] for r in rows]).fetchall())
        return [(found[seq], steps, tokens) for seq, steps, tokens in rows if seq in found]

    def count(
        self, *, target: str | None = None, status: str | None = None, origin: str | None = None, text: str | None = None, at_most: int | None = None
    ) -> int:
        """How many runs match the filters (the same filters as ``list``), or ``at_most`` when more do.

        Without ``text`` the answer comes from a small table of counts per target, status and origin,
        so it costs the same with 100 runs or 100,000. With ``text`` it reads every match, unless
        ``at_most`` is given: then it stops at the ``at_most``-th (a page asks one more than it shows,
        to learn whether there are more).
        """
        if at_most is not None and (isinstance(at_most, bool) or not isinstance(at_most, int) or at_most < 0):
            raise ValueError(f"at_most must be a non-negative int or None, got {at_most!r}")
        expr = _match_expr(text) if text is not None and text.strip() else None
        if at_most is not None and text is not None and text.strip():
            sql, args = self._last_matches(target, status, origin, text, at_most)
            sql = f"SELECT count(*) FROM ({sql})"
        elif expr is not None and target is None and status is None and origin is None:
            sql, args = "SELECT count(*) FROM runs_fts WHERE runs_fts MATCH ?", [expr]  # one row per run
        elif text is not None and text.strip():
            clause, args = self._where(target, status, origin, text)
            sql = f"SELECT count(*) FROM runs{clause}"
        else:
            clause, args = self._where(target, status, origin, None)
            sql = f"SELECT coalesce(sum(n), 0) FROM run_counts{clause}"
        with self._reading("count runs") as conn:
            if conn is None:
                return 0
            found = int(conn.execute(sql, args).fetchone()[0])
        return found if at_most is None else min(found, at_most)

    def usage_by_model(
        self, *, target: str | None = None, status: str | None = None, origin: str | None = None, text: str | None = None, at_most: int | None = None
    ) -> builtins.list[dict[str, Any]]:
        """The provider-reported usage of every run matching the filters (those of ``list``), summed
        per model: ``{"model", "runs", "reported" (runs with usage), "input_tokens", "output_tokens",
        "cache_read_tokens", "cache_write_tokens", "cache_write_1h_tokens"}``, ordered by model, so a
        caller can price a whole filter at once (and ``sum(row["runs"])`` is ``count()``'s answer).

        Without ``text`` the sums come from ``run_usage`` (kept as runs are written and deleted), so
        they cost the same with 100 runs or 100,000; with ``text``, from the matching runs' rows:
        with ``at_most``, those of the ``at_most`` matching runs written last (``count(at_most=...)``).
        """
        searching = text is not None and bool(text.strip())
        with self._reading("sum usage") as conn:
            if conn is None:
                return []
            if int(conn.execute("PRAGMA user_version").fetchone()[0]) < 4:  # a file this process may not migrate
                rows = self._usage_from_summaries(conn, target, status, origin, text, at_most)
            else:
                clause, args = self._where(target, status, origin, None)
                sums = ", ".join(f"sum({c})" for c in _USAGE_COLUMNS)
                kept = conn.execute(
                    f"SELECT model_key, sum(n), sum(reported), sum(odd), {sums} FROM run_usage{clause} GROUP BY model_key ORDER BY model_key", args
                ).fetchall()
                odd = any(row[3] for row in kept)  # a model or count SQL's sum() types otherwise: sum the runs themselves
                if searching:
                    one_model = None if odd or len(kept) != 1 else kept[0][0]
                    rows = self._usage_from_runs(conn, target, status, origin, text, one_model=one_model, at_most=at_most)
                elif odd:
                    rows = self._usage_from_runs(conn, target, status, origin, None)
                else:
                    rows = [(key[1:] if key else None, n, reported, *values) for key, n, reported, _odd, *values in kept]
        return [{"model": row[0], "runs": row[1], "reported": row[2], **dict(zip(_USAGE_KEYS, row[3:], strict=True))} for row in rows]

    def _usage_from_runs(
        self, conn: sqlite3.Connection, target: str | None, status: str | None, origin: str | None, text: str | None, *,
        one_model: str | None = None, at_most: int | None = None,
    ) -> builtins.list[Any]:
        """The sums over the matching runs' own rows (a text filter; a filter with odd values).
        ``one_model``: the ``model_key`` of every run the other filters match, when they all have one
        model: then the sums need no grouping (a sort of every match). ``at_most``: as ``_where``'s."""
        expr = _match_expr(text) if text is not None and text.strip() else None
        if expr is None or at_most is not None:
            clause, args = self._where(target, status, origin, text, table="runs.", at_most=at_most)
            source = f"runs{clause}"
        else:  # the text index's matches drive, each run's row read by its key
            clause, args = self._where(target, status, origin, None, table="runs.")
            source = "runs_fts JOIN runs ON runs.seq = runs_fts.rowid WHERE runs_fts MATCH ?" + clause.replace(" WHERE ", " AND ", 1)
            args = [expr, *args]
        sums = ", ".join(f"coalesce(sum(runs.{c}), 0)" for c in _USAGE_COLUMNS)
        if one_model is not None:
            (row,) = conn.execute(f"SELECT count(*), count(runs.usage_input), {sums} FROM {source}", args).fetchall()
            return [(one_model[1:] if one_model else None, *row)] if row[0] else []
        return conn.execute(
            f"SELECT runs.model, count(*), count(runs.usage_input), {sums} FROM {source} GROUP BY runs.model ORDER BY runs.model", args
        ).fetchall()

    def figures(
        self, *, target: str | None = None, status: str | None = None, origin: str | None = None, text: str | None = None, limit: int = 1000
    ) -> builtins.list[dict[str, Any]]:
        """Per-run figures of the newest ``limit`` runs matching the filters (those of ``list``), for
        charts: ``{"id", "started" (seconds since the epoch), "target", "status", "origin", "model",
        "duration_ms", "step_count", "input_tokens" (planned), "usage"}``, read from the runs' own
        narrow rows (no JSON is parsed). ``usage`` holds the counts of the summary's ``usage`` under
        their canonical names (``input_tokens``, ``output_tokens``, the cache counts), or is None;
        ``Prices.run_cost(figure)`` then prices it as a list row is priced."""
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise ValueError(f"limit must be a non-negative int, got {limit!r}")
        clause, args = self._where(target, status, origin, text)
        table = "runs INDEXED BY runs_newest" if text is not None and text.strip() else "runs"
        with self._reading("read run figures") as conn:
            if conn is None:
                return []
            if int(conn.execute("PRAGMA user_version").fetchone()[0]) < 4:
                raise RunStoreError(self.path, "reading run figures needs the store's schema version 4; open it once with write access to migrate it")
            rows = conn.execute(
                f"SELECT id, started, target, status, origin, step_count, input_tokens, {', '.join(_FIGURE_COLUMNS)} FROM {table}{clause}"
                " ORDER BY started DESC, seq DESC LIMIT ?",
                (*args, min(limit, SQLITE_MAX_INT)),
            ).fetchall()
        out = []
        for run_id, started, target_, status_, origin_, step_count, input_tokens, model, duration, *counts in rows:
            usage = {k: v for k, v in zip(_USAGE_KEYS, counts, strict=True) if v is not None}
            out.append({
                "id": run_id, "started": started, "target": target_, "status": status_, "origin": origin_, "model": model,
                "duration_ms": duration, "step_count": step_count, "input_tokens": input_tokens, "usage": usage or None,
            })
        return out

    def _usage_from_summaries(
        self, conn: sqlite3.Connection, target: str | None, status: str | None, origin: str | None, text: str | None, at_most: int | None = None
    ) -> builtins.list[Any]:
        """The same sums read from each run's summary JSON (a file older than the usage columns)."""
        clause, args = self._where(target, status, origin, text, at_most=at_most)
        sql = (
            "SELECT json_extract(summary, '$.model') AS model, count(*), count(json_extract(summary, '$.usage.input_tokens')), "
            + ", ".join(f"coalesce(sum(json_extract(summary, '$.usage.{k}')), 0)" for k in _USAGE_KEYS)
            + f" FROM run_summaries WHERE seq IN (SELECT seq FROM runs{clause}) GROUP BY model ORDER BY model"
        )
        return conn.execute(sql, args).fetchall()

    def buckets(self, count: int, *, target: str | None = None, status: str | None = None, origin: str | None = None,
                text: str | None = None, at_most: int | None = None) -> builtins.list[dict[str, Any]]:
        """The runs matching the filters (those of ``list``), oldest first, cut into at most ``count``
        buckets of consecutive runs, in one query: each bucket's ``runs``, ``first`` and ``last`` start
        times (epoch seconds), the mean, min and max of its input tokens (every run counted), and the
        ``duration_ms``, ``model`` and ``usage`` of one run of it (its last written), read from that
        run's row alone, so the cost stays that of the index however many runs match. With
        ``text`` and ``at_most``: of the ``at_most`` matching runs written last (``count(at_most=...)``)."""
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ValueError(f"count must be a positive int, got {count!r}")
        clause, args = self._where(target, status, origin, text, at_most=at_most)
        with self._reading("chart runs") as conn:
            if conn is None:
                return []
            columns, table = self._picked(conn)
            sql = (
                f"WITH f AS (SELECT seq, started, input_tokens, row_number() OVER (ORDER BY started, seq) - 1 AS rn, count(*) OVER () AS n FROM runs{clause}),"
                " b AS (SELECT rn * ? / n AS bucket, count(*) AS runs, min(started) AS first, max(started) AS last, avg(input_tokens) AS mean,"
                " min(input_tokens) AS low, max(input_tokens) AS high, max(seq) AS pick FROM f GROUP BY bucket)"
                f" SELECT b.runs, b.first, b.last, b.mean, b.low, b.high, {columns} FROM b JOIN {table} p ON p.seq = b.pick ORDER BY b.bucket"
            )
            rows = conn.execute(sql, (*args, count)).fetchall()
        return [self._bucket_row(row) for row in rows]

    @staticmethod
    def _picked(conn: sqlite3.Connection) -> tuple[str, str]:
        """The columns of a picked run ``p``'s ``duration_ms``, ``model`` and usage counts, and the
        table they are read from: the run's own row (the values ``_FIGURES`` took from its summary
        when it was written), or, in a file older than those columns, its summary."""
        if int(conn.execute("PRAGMA user_version").fetchone()[0]) >= 4:
            return ", ".join(f"p.{c}" for c in ("duration_ms", "model", *_USAGE_COLUMNS)), "runs"
        usage = ", ".join(f"json_extract(p.summary, '$.usage.{k}')" for k in _USAGE_KEYS)
        return f"json_extract(p.summary, '$.duration_ms'), json_extract(p.summary, '$.model'), {usage}", "run_summaries"

    def sampled(self, count: int, *, target: str | None = None, status: str | None = None, origin: str | None = None) -> builtins.list[dict[str, Any]]:
        """At most ``count`` runs matching the filters, oldest first: the first run at or after each of
        ``count`` evenly spaced instants between the oldest and the newest match, in one query that
        seeks the filters' index once an instant, so it costs the same with 1,000 runs or 100,000.
        Each row as ``buckets`` gives it, one run a row (``runs`` 1)."""
        if isinstance(count, bool) or not isinstance(count, int) or count < 2:
            raise ValueError(f"count must be an int of at least 2, got {count!r}")
        clause, args = self._where(target, status, origin, None)
        after = clause + (" AND " if clause else " WHERE ") + "started >= span.lo + (span.hi - span.lo) * ticks.i / ?"
        usage = ", ".join(f"json_extract(s.summary, '$.usage.{k}')" for k in _USAGE_KEYS)
        sql = (
            f"WITH RECURSIVE span AS (SELECT min(started) AS lo, max(started) AS hi FROM runs{clause}),"
            " ticks(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM ticks WHERE i + 1 < ?),"
            f" picks AS (SELECT DISTINCT (SELECT seq FROM runs{after} ORDER BY started, seq LIMIT 1) AS seq FROM ticks, span)"
            " SELECT 1, r.started, r.started, r.input_tokens, r.input_tokens, r.input_tokens, json_extract(s.summary, '$.duration_ms'),"
            f" json_extract(s.summary, '$.model'), {usage} FROM picks JOIN runs r ON r.seq = picks.seq JOIN run_summaries s ON s.seq = r.seq"
            " ORDER BY r.started, r.seq"
        )
        with self._reading("chart runs") as conn:
            if conn is None:
                return []
            rows = conn.execute(sql, (*args, count, *args, count - 1)).fetchall()
        return [self._bucket_row(row) for row in rows]

    @staticmethod
    def _bucket_row(row: tuple[Any, ...]) -> dict[str, Any]:
        reported = dict(zip(_USAGE_KEYS, row[8:], strict=True))
        return {
            "runs": row[0], "first": row[1], "last": row[2], "mean_input_tokens": row[3], "min_input_tokens": row[4],
            "max_input_tokens": row[5], "duration_ms": row[6], "model": row[7],
            "usage": {k: v for k, v in reported.items() if v is not None} if reported["input_tokens"] is not None else None,
        }

    def targets(self) -> builtins.list[str]:
        """Every target that has a recorded run, sorted (for a filter menu)."""
        with self._reading("list targets") as conn:
            if conn is None:
                return []
            return [row[0] for row in conn.execute("SELECT DISTINCT target FROM run_counts ORDER BY target")]

    def get(self, run_id: str) -> dict[str, Any] | None:
        """The whole run with its steps, or ``None`` when no run has that id."""
        with self._reading("read a run") as conn:
            if conn is None:
                return None
            row = conn.execute("SELECT r.seq, s.summary FROM runs r JOIN run_summaries s ON s.seq = r.seq WHERE r.id = ?", (run_id,)).fetchone()
            if row is None:
                return None
            steps = [json.loads(data) for (data,) in conn.execute("SELECT data FROM steps WHERE run_seq = ? ORDER BY idx", (row[0],))]
        run = json.loads(row[1])
        run["steps"] = steps
        return run

    def known_ids(self, run_ids: builtins.list[str]) -> set[str]:
        """Those of ``run_ids`` that are stored."""
        with self._reading("look up run ids") as conn:
            if conn is None:
                return set()
            return {rid for chunk, marks in _chunks(list(run_ids)) for (rid,) in conn.execute(f"SELECT id FROM runs WHERE id IN ({marks})", chunk)}

    def ids_starting(self, prefix: str, *, limit: int = 10_000) -> builtins.list[str]:
        """The ids of stored runs that start with ``prefix`` (through the id index), at most ``limit``."""
        with self._reading("look up run ids") as conn:
            if conn is None or not prefix:
                return []
            upper = prefix[:-1] + chr(ord(prefix[-1]) + 1)
            return [rid for (rid,) in conn.execute("SELECT id FROM runs WHERE id >= ? AND id < ? ORDER BY id LIMIT ?", (prefix, upper, limit))]

    def written_since(self, mark: int | None, *, limit: int = 100) -> tuple[int, builtins.list[dict[str, Any]]]:
        """Runs written after ``mark`` (oldest first, as summaries) and the new mark.

        ``mark=None`` returns the current mark and no runs: start there, then pass the mark back
        to learn what other processes wrote since (``--follow``, live updates). Runs written
        beyond ``limit`` are skipped (the mark still moves past them).
        """
        with self._reading("read new runs") as conn:
            if conn is None:
                return (0 if mark is None else mark), []
            (top,) = conn.execute("SELECT coalesce(max(seq), 0) FROM runs").fetchone()
            if mark is None or top <= mark:
                return max(top, mark or 0), []
            rows = conn.execute("SELECT seq, step_count, input_tokens FROM runs WHERE seq > ? ORDER BY seq DESC LIMIT ?", (mark, limit)).fetchall()
            rows = self._with_summaries(conn, rows)
        out = []
        for summary, step_count, input_tokens in reversed(rows):
            run = json.loads(summary)
            run["step_count"], run["input_tokens"] = step_count, input_tokens
            out.append(run)
        return top, out

    # -- the runs being recorded (``live.py`` writes them) ----------------------------------------
    def write_live(self, row: Mapping[str, Any]) -> bool:
        """Write a run's live row (its step's text so far); ``False`` when skipped: the run is
        already written, or another writer held the file for more than ``LIVE_BUSY_MS``."""
        summary = stored_json(row.get("summary") or {})
        text = _utf8(cut_text(str(row.get("text") or "")))
        values = (
            row["run_id"], float(row.get("started") or time.time()), summary, int(row.get("index") or 0), text,
            row.get("first_token_ms"), row.get("elapsed_ms"), int(row.get("chunks") or 0), int(row.get("pid") or 0), time.time(),
        )
        with self._lock:
            conn = self._open()
            assert conn is not None
            conn.execute(f"PRAGMA busy_timeout = {LIVE_BUSY_MS}")
            try:
                with self._writing("write a live step") as conn:
                    cur = conn.execute(
                        "INSERT INTO live_runs (run_id, started, summary, idx, text, first_token_ms, elapsed_ms, chunks, pid, updated) "
                        "SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM runs WHERE id = ?) "
                        "ON CONFLICT (run_id) DO UPDATE SET summary = excluded.summary, idx = excluded.idx, text = excluded.text, "
                        "first_token_ms = excluded.first_token_ms, elapsed_ms = excluded.elapsed_ms, chunks = excluded.chunks, updated = excluded.updated",
                        (*values, row["run_id"]),
                    )
                    if cur.rowcount:
                        conn.execute("UPDATE meta SET value = value + 1 WHERE key = 'live'")
                    return bool(cur.rowcount)
            except RunStoreError:
                return False
            finally:
                conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout * 1000)}")

    def live_runs(self) -> builtins.list[dict[str, Any]]:
        """The runs being recorded now, oldest first: each its summary so far plus ``live`` (``index``,
        ``text``, ``first_token_ms``, ``elapsed_ms``, ``chunks``, ``updated``). Rows of a process that
        is gone are left out."""
        return self._live("")

    def live_run(self, run_id: str) -> dict[str, Any] | None:
        """The run ``run_id`` while it is being recorded (as ``live_runs`` gives it), else ``None``."""
        found = self._live(" WHERE run_id = ?", run_id)
        return found[0] if found else None

    def live_token(self) -> int:
        """A number that grows whenever a live row changes (a step's text grew, a run started or was written)."""
        with self._reading("read the live token") as conn:
            if conn is None:
                return 0
            row = conn.execute("SELECT value FROM meta WHERE key = 'live'").fetchone()
            return int(row[0]) if row else 0

    def _live(self, clause: str, *args: Any) -> builtins.list[dict[str, Any]]:
        with self._reading("read the runs being recorded") as conn:
            if conn is None or int(conn.execute("PRAGMA user_version").fetchone()[0]) < LIVE_VERSION:
                return []  # no live table yet: a file being created one step at a time, or an older release's
            rows = conn.execute(
                f"SELECT run_id, summary, idx, text, first_token_ms, elapsed_ms, chunks, pid, updated FROM live_runs{clause} ORDER BY started, run_id", args
            ).fetchall()
        out = []
        for run_id, summary, idx, text, first, elapsed, chunks, pid, updated in rows:
            if not _alive(pid):
                continue
            run = json.loads(summary)
            run.update(id=run_id, status="running")
            run["live"] = {"index": idx, "text": text, "first_token_ms": first, "elapsed_ms": elapsed, "chunks": chunks, "updated": updated}
            out.append(run)
        return out

    def change_token(self) -> int:
        """A number that grows whenever any process writes (or prunes) runs; cheap to poll."""
        with self._reading("read the change token") as conn:
            if conn is None:
                return 0
            row = conn.execute("SELECT value FROM meta WHERE key = 'writes'").fetchone()
            return int(row[0]) if row else 0


# -- one page of a text search -------------------------------------------------------------------
SEARCH_CHUNK = 64  # runs of the newest-first index a search page reads first (then twice as many a time)
SEARCH_CHUNK_MAX = 65_536


def _searched_page(conn: sqlite3.Connection, clause: str, args: builtins.list[Any], text: str, limit: int, offset: int) -> builtins.list[tuple[int, int, int]]:
    """``(seq, step_count, input_tokens)`` of one page of the runs matching ``text`` and the other
    filters (``clause``), newest first.

    The newest-first index is walked in chunks, and each chunk is tested against the matches of
    its own range of ``seq`` alone (the text index reads a rowid range without the rest), so page
    1 of a search that most runs match reads one chunk, however many runs match. A chunk whose
    runs are far apart in ``seq`` (other filters; runs written out of their start order) is tested
    against every match instead, read once for the rest of the walk.
    """
    expr = _match_expr(text)
    if expr is None:  # only punctuation: a plain substring test on the summary
        term: str = text.strip().lower()
        ranged = "SELECT seq FROM run_summaries WHERE seq BETWEEN :lo AND :hi AND instr(lower(summary), :q) > 0"
        every = "SELECT seq FROM run_summaries WHERE instr(lower(summary), :q) > 0"
    else:
        term = expr
        ranged = "SELECT rowid FROM runs_fts WHERE runs_fts MATCH :q AND rowid BETWEEN :lo AND :hi"
        every = "SELECT rowid FROM runs_fts WHERE runs_fts MATCH :q"
    walk = f"SELECT seq, started, step_count, input_tokens FROM runs INDEXED BY runs_newest{clause}"
    after = walk + (" AND " if clause else " WHERE ") + "(started, seq) < (?, ?)"
    order = " ORDER BY started DESC, seq DESC LIMIT ?"
    page: builtins.list[tuple[int, int, int]] = []
    every_match: set[int] | None = None
    cursor: tuple[float, int] | None = None
    size, skip = min(max(offset + limit, SEARCH_CHUNK), SEARCH_CHUNK_MAX), offset
    while len(page) < limit:
        rows = conn.execute((walk if cursor is None else after) + order, (*args, *(cursor or ()), size)).fetchall()
        if not rows:
            break
        low, high = min(r[0] for r in rows), max(r[0] for r in rows)
        if every_match is None and high - low >= 4 * len(rows):
            every_match = {seq for (seq,) in conn.execute(every, {"q": term})}
        hits = every_match if every_match is not None else {seq for (seq,) in conn.execute(ranged, {"q": term, "lo": low, "hi": high})}
        for seq, _started, step_count, input_tokens in rows:
            if seq not in hits:
                continue
            if skip:
                skip -= 1
                continue
            page.append((seq, step_count, input_tokens))
            if len(page) >= limit:
                break
        if len(rows) < size:
            break
        cursor, size = (rows[-1][1], rows[-1][0]), min(size * 2, SEARCH_CHUNK_MAX)
    return page


# -- replay data: plan inputs and lineage (``plan_inputs.py`` builds them, ``replay.py`` reads them) --
def _write_replay_data(conn: sqlite3.Connection, seq: int | None, run: dict[str, Any], plan_inputs: Any) -> None:
    parent = run.get("parent")
    if isinstance(parent, str) and parent:
        fork_step = run.get("fork_step")
        conn.execute("UPDATE runs SET parent = ?, fork_step = ? WHERE seq = ?", (parent, fork_step if type(fork_step) is int else None, seq))
    if not isinstance(plan_inputs, Mapping):
        return
    texts, steps = plan_inputs.get("texts"), plan_inputs.get("steps")
    if not isinstance(texts, Mapping) or not isinstance(steps, list):
        return
    blobs = [(h, _utf8(t)) for h, t in texts.items() if isinstance(h, str) and isinstance(t, str)]
    rows = []
    frames: dict[int, str] = {}  # a frame repeated by the next step is the same object: serialised once
    refs: dict[str, set[str]] = {}  # each frame's texts (``blob_refs``)
    for step in steps:
        if not isinstance(step, Mapping) or type(step.get("index")) is not int or not isinstance(step.get("frame"), Mapping):
            continue
        frame_hash = frames.get(id(step["frame"]))
        if frame_hash is None:
            frame = stored_json({"format": plan_inputs.get("format"), **step["frame"]})
            frame_hash = frames[id(step["frame"])] = hashlib.sha256(frame.encode("utf-8")).hexdigest()[:32]
            blobs.append((frame_hash, frame))
            refs[frame_hash] = _text_refs(step["frame"])
        rows.append((seq, step["index"], frame_hash, stored_json(step.get("state") or {})))
    marks = ",".join("?" * len(blobs))
    have = {h for (h,) in conn.execute(f"SELECT hash FROM blobs WHERE hash IN ({marks})", [h for h, _t in blobs])} if 0 < len(blobs) <= 500 else set()
    conn.executemany("INSERT OR IGNORE INTO blobs (hash, text) VALUES (?, ?)", [b for b in blobs if b[0] not in have])  # known texts are not bound again
    conn.executemany("INSERT OR IGNORE INTO blob_refs (frame, hash) VALUES (?, ?)", [(f, h) for f, hs in refs.items() if f not in have for h in hs])
    conn.executemany("INSERT OR REPLACE INTO step_plans (run_seq, idx, frame, state) VALUES (?, ?, ?, ?)", rows)


def _chunks(values: builtins.list[Any], size: int = 500) -> Iterator[tuple[builtins.list[Any], str]]:
    """``values`` in chunks an ``IN (...)`` can take, each with its ``?`` marks."""
    for start in range(0, len(values), size):
        chunk = values[start : start + size]
        yield chunk, ",".join("?" * len(chunk))


def _drop_unreferenced(conn: sqlite3.Connection, frames: set[str]) -> None:
    """Drop the frames (of runs just deleted) no step refers to any more, and the texts only they
    referred to. Costs a few index lookups per frame and text, however many runs remain."""
    gone = [f for f in sorted(frames) if conn.execute("SELECT 1 FROM step_plans WHERE frame = ? LIMIT 1", (f,)).fetchone() is None]
    texts: set[str] = set()
    for chunk, marks in _chunks(gone):
        texts.update(h for (h,) in conn.execute(f"SELECT hash FROM blob_refs WHERE frame IN ({marks})", chunk))
        conn.execute(f"DELETE FROM blob_refs WHERE frame IN ({marks})", chunk)
        conn.execute(f"DELETE FROM blobs WHERE hash IN ({marks})", chunk)
    for chunk, marks in _chunks(sorted(texts)):
        conn.execute(
            f"DELETE FROM blobs WHERE hash IN ({marks}) AND NOT EXISTS (SELECT 1 FROM blob_refs r WHERE r.hash = blobs.hash)"
            " AND NOT EXISTS (SELECT 1 FROM step_plans p WHERE p.frame = blobs.hash)",
            chunk,
        )


def read_step_plan(store: RunStore, run_id: str, index: int) -> dict[str, Any] | None:
    """What step ``index`` of run ``run_id`` was planned from: ``{"frame", "state", "texts"}`` (every
    text the frame refers to, by hash), or ``None`` when the step kept none (a run recorded before
    plan inputs were kept, or an unknown run or step). Raises ``DamagedRunError`` when a text the
    step's plan inputs refer to is missing from the file."""
    with store._reading("read a step's plan inputs") as conn:
        if conn is None or int(conn.execute("PRAGMA user_version").fetchone()[0]) < 2:
            return None
        row = conn.execute(
            "SELECT p.frame, p.state FROM step_plans p JOIN runs r ON r.seq = p.run_seq WHERE r.id = ? AND p.idx = ?", (run_id, index)
        ).fetchone()
        if row is None:
            return None
        found = conn.execute("SELECT text FROM blobs WHERE hash = ?", (row[0],)).fetchone()
        if found is None:
            raise _damaged(store, run_id, index, [row[0]])
        frame = json.loads(found[0])
        wanted = sorted(_text_refs(frame))
        texts: dict[str, str] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            texts.update(conn.execute(f"SELECT hash, text FROM blobs WHERE hash IN ({marks})", chunk).fetchall())
    missing = [h for h in wanted if h not in texts]
    if missing:
        raise _damaged(store, run_id, index, missing)
    return {"frame": frame, "state": json.loads(row[1]), "texts": texts}


def _damaged(store: RunStore, run_id: str, index: int, missing: builtins.list[str]) -> DamagedRunError:
    more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
    return DamagedRunError(
        str(store.path), f"run {run_id!r} is damaged: step {index}'s plan inputs refer to a stored text that is missing "
        f"(blob {missing[0]}{more}), so it cannot be replayed from its recording; --source current plans it from the project's source",
    )


def _text_refs(frame: Mapping[str, Any]) -> set[str]:
    """The hashes of the texts a frame refers to (blocks, rungs, tool schemas); tolerant of a bad frame."""
    refs = {slot["text"] for slot in frame.get("slots") or [] if isinstance(slot, Mapping) and isinstance(slot.get("text"), str)}
    tools = frame.get("tools")
    refs.update(h for h in (tools.values() if isinstance(tools, Mapping) else ()) if isinstance(h, str))
    if isinstance(frame.get("support_tool"), str):
        refs.add(frame["support_tool"])
    for c in frame.get("contributors") or []:
        if isinstance(c, Mapping):
            refs.update(h for h in [c.get("full"), *(r.get("text") for r in c.get("rungs") or [] if isinstance(r, Mapping))] if isinstance(h, str))
    return refs


def child_runs(store: RunStore, parent: str) -> builtins.list[dict[str, Any]]:
    """The runs made by replaying a step of run ``parent`` (summaries with ``fork_step``), oldest first."""
    with store._reading("list child runs") as conn:
        if conn is None or int(conn.execute("PRAGMA user_version").fetchone()[0]) < 2:
            return []
        rows = conn.execute(
            "SELECT s.summary, r.fork_step, r.step_count, r.input_tokens FROM runs r JOIN run_summaries s ON s.seq = r.seq WHERE r.parent = ? ORDER BY r.seq",
            (parent,),
        ).fetchall()
    out = []
    for summary, fork_step, step_count, input_tokens in rows:
        run = json.loads(summary)
        run.update(fork_step=fork_step, step_count=step_count, input_tokens=input_tokens)
        out.append(run)
    return out


def _is_readonly(exc: sqlite3.Error) -> bool:
    low = str(exc).lower()
    return any(word in low for word in ("readonly", "read-only", "unable to open", "attempt to write", "could not switch"))


def is_locked(exc: BaseException) -> bool:
    """Whether ``exc`` (or what caused it) is SQLite's "database is locked/busy": a transient state
    while another connection holds the write lock, not a fault of the file."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, sqlite3.OperationalError):
            name = str(getattr(seen, "sqlite_errorname", "") or "")
            if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "database is locked" in str(seen) or "database is busy" in str(seen):
                return True
        seen = seen.__cause__ or seen.__context__
    return False


def _alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (a live row of a process that died is stale)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists, owned by another user
        return True
    return True


def new_run_id() -> str:
    """A fresh run id: sortable by time, unique across processes."""
    return f"{time.time_ns() // 1000:x}-{uuid.uuid4().hex[:8]}"


__all__ = ["RUNS_FILE", "RunStore", "RunStoreError", "TEXT_CAP", "cut_text", "new_run_id", "storable"]
