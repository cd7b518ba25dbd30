"""MemoryStore on real SQLite files: remember/recall, isolation, schema versions, bad files, WAL."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from crux_devtools import MemoryStore, MemoryStoreError
from crux_devtools.core.memory.schema import SCHEMA_VERSION

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    s = MemoryStore(tmp_path / "memory.sqlite3")
    yield s
    s.close()


def test_recall_ranks_the_entry_matching_more_terms_first(store: MemoryStore) -> None:
    store.remember("s", "Acme Corp pays by invoice every month")
    best = store.remember("s", "Acme CSV export times out on large reports", entry_type="lesson")
    store.remember("s", "Globex prefers email over phone")
    found = store.recall("s", "Acme CSV export timeout")
    assert [e.id for e in found][0] == best
    assert found[0].entry_type == "lesson" and found[0].section == "lessons"
    assert found[0].score > found[1].score > 0
    assert "Globex" not in " ".join(e.content for e in found)


def test_recall_respects_the_limit_and_returns_json_ready_evidence(store: MemoryStore) -> None:
    for i in range(15):
        store.remember("s", f"sync error number {i} on the desktop client")
    found = store.recall("s", "sync error", limit=4)
    assert len(found) == 4
    data = found[0].to_dict()
    assert set(data) == {"id", "content", "entry_type", "section", "score", "created_at"}
    assert data["created_at"].endswith("+00:00")


@pytest.mark.parametrize(
    "query",
    ['"', "'", "AND OR NOT", "a*b", "(unclosed", "col:value", "NEAR(a b)", "^start", "-minus", "!!!", "", "   ", "é ü ß", "😀", "x_y-z"],
)
def test_punctuation_and_fts_syntax_in_a_query_never_raise(store: MemoryStore, query: str) -> None:
    store.remember("s", "AND OR NOT are words here, with col:value and x_y-z")
    assert isinstance(store.recall("s", query), list)
    assert store.get_context("s", query).empty_reason in ("", "recency_fallback")


def test_sessions_never_see_each_others_entries(store: MemoryStore) -> None:
    store.remember("alice", "Alice's invoice INV-1 was refunded")
    store.remember("bob", "Bob's invoice INV-2 is overdue")
    assert [e.content for e in store.recall("alice", "invoice")] == ["Alice's invoice INV-1 was refunded"]
    block = store.get_context("bob", "invoice refunded").context_block
    assert "Bob" in block and "Alice" not in block
    assert store.get_context("carol", "invoice").empty_reason == "no_evidence"
    assert store.count("alice") == 1


def test_entries_survive_closing_and_reopening_the_file(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite3"
    with MemoryStore(path) as first:
        entry = first.remember("s", "The customer uses the Linux client")
    with MemoryStore(path) as second:
        assert [e.id for e in second.recall("s", "linux")] == [entry]


def test_an_unknown_entry_type_is_kept_under_other(store: MemoryStore) -> None:
    store.remember("s", "a custom note about quotas", entry_type="note")
    (found,) = store.recall("s", "quotas")
    assert (found.entry_type, found.section) == ("note", "other")


def test_bad_entry_values_raise_with_the_value(store: MemoryStore) -> None:
    with pytest.raises(ValueError, match="importance"):
        store.remember("s", "x", importance=3)
    with pytest.raises(ValueError, match="content"):
        store.remember("s", "   ")
    with pytest.raises(ValueError, match="session_id"):
        store.remember("", "x")
    with pytest.raises(ValueError, match="limit"):
        store.recall("s", "x", limit=0)


def test_the_schema_is_versioned_with_user_version(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite3"
    with MemoryStore(path) as s:
        assert s.schema_version == SCHEMA_VERSION >= 1
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_an_empty_sqlite_file_is_migrated_in_place(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    sqlite3.connect(path).close()
    with MemoryStore(path) as s:
        s.remember("s", "migrated")
        assert s.schema_version == SCHEMA_VERSION


def test_a_file_from_a_newer_release_is_refused_with_its_name(tmp_path: Path) -> None:
    path = tmp_path / "future.sqlite3"
    with sqlite3.connect(path) as raw:
        raw.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    with pytest.raises(MemoryStoreError, match="newer") as info:
        MemoryStore(path)
    assert str(path) in str(info.value)


def test_a_corrupt_file_raises_an_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "garbage.sqlite3"
    path.write_bytes(b"this is not a database at all\x00\xff" * 200)
    with pytest.raises(MemoryStoreError) as info:
        MemoryStore(path)
    assert str(path) in str(info.value)
    assert "not a valid memory database" in str(info.value)


def test_a_locked_file_raises_an_error_naming_the_file_instead_of_losing_the_write(tmp_path: Path) -> None:
    path = tmp_path / "locked.sqlite3"
    store = MemoryStore(path, busy_timeout=0.2)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(MemoryStoreError, match="locked") as info:
            store.remember("s", "blocked write")
        assert str(path) in str(info.value)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    store.remember("s", "after the lock is released")
    assert store.count("s") == 1
    store.close()


def test_a_closed_store_refuses_calls(tmp_path: Path) -> None:
    s = MemoryStore(tmp_path / "m.sqlite3")
    s.close()
    with pytest.raises(MemoryStoreError, match="closed"):
        s.recall("s", "x")


def test_a_missing_folder_gives_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "no" / "such" / "dir" / "m.sqlite3"
    with pytest.raises(MemoryStoreError, match="cannot open") as info:
        MemoryStore(path)
    assert str(path) in str(info.value)


def test_an_in_memory_store_works_without_a_file() -> None:
    with MemoryStore(":memory:") as s:
        s.remember("s", "in memory only")
        assert s.recall("s", "memory")[0].content == "in memory only"


WRITER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {repo!r})
    from crux_devtools.core.memory import MemoryStore
    store = MemoryStore(sys.argv[1], busy_timeout=30)
    for i in range(1000):
        store.remember("shared", f"writer {{sys.argv[2]}} entry {{i}}")
    store.close()
    """
)


def test_two_processes_writing_a_thousand_entries_each_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite3"
    MemoryStore(path).close()  # create the schema once; the writers then race on inserts only
    script = tmp_path / "writer.py"
    script.write_text(WRITER.format(repo=str(REPO)))
    procs = [subprocess.Popen([sys.executable, str(script), str(path), name]) for name in ("a", "b")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    with MemoryStore(path) as s:
        assert s.count("shared") == 2000
        assert len(s.recall("shared", "writer a entry", limit=5)) == 5
    with sqlite3.connect(path) as raw:
        contents = {r[0] for r in raw.execute("SELECT content FROM entries")}
    assert contents == {f"writer {w} entry {i}" for w in "ab" for i in range(1000)}


def test_the_schema_has_every_index_the_ranking_relies_on(store: MemoryStore) -> None:
    names = {row[0] for row in store._conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert {"entries_by_session", "entries_by_section", "entry_meta_by_section"} <= names


@pytest.mark.parametrize(
    ("created_at", "error", "message"),
    [
        (1_700_000_000_000, ValueError, r"created_at must be seconds since 1970-01-01 UTC.*got 1700000000000; it looks like milliseconds: divide by 1000"),
        (float("inf"), ValueError, r"created_at must be .*finite number from 0 to 253402300799.*got inf"),
        (1e20, ValueError, r"created_at must be .*got 1e\+20"),
        (-1.0, ValueError, r"created_at must be .*from 0 to .*got -1.0"),
        (-1e12, ValueError, r"created_at must be .*got -1000000000000.0"),
        (float("nan"), ValueError, r"created_at must be .*got nan"),
        ("2024-01-01", TypeError, r"created_at must be seconds since .*got str '2024-01-01'"),
        (True, TypeError, r"created_at must be .*got bool True"),
    ],
)
def test_a_timestamp_that_no_read_could_show_is_refused_when_written(
    store: MemoryStore, created_at: object, error: type[Exception], message: str
) -> None:
    store.remember("s", "kept before")
    with pytest.raises(error, match=message):
        store.remember_many("s", [{"content": "the bad one", "created_at": created_at}])
    assert store.count("s") == 1
    assert [e.content for e in store.recent("s")] == ["kept before"]
    assert [e.content for e in store.recall("s", "kept")] == ["kept before"]


def test_timestamps_at_both_ends_of_the_range_are_written_and_read_back(store: MemoryStore) -> None:
    store.remember_many("s", [{"content": "epoch start", "created_at": 0}, {"content": "year 9999", "created_at": 253_402_300_799}])
    assert [e.created_at for e in store.recent("s")] == ["9999-12-31T23:59:59.000000+00:00", "1970-01-01T00:00:00.000000+00:00"]


def test_an_entry_stored_out_of_range_by_an_older_release_does_not_break_reading_its_session(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite3"
    with MemoryStore(path) as s:
        s.remember("s", "old entry about invoices")
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE entries SET created_at = 1.7e12")
    with MemoryStore(path) as s:
        (found,) = s.recall("s", "invoices")
        assert found.created_at == "1700000000000.0"
        assert [e.content for e in s.recent("s")] == ["old entry about invoices"]


@pytest.mark.parametrize("method", ["count", "recall", "recent", "get_context", "remember", "remember_many", "forget"])
@pytest.mark.parametrize(
    ("session_id", "error", "message"),
    [
        (None, TypeError, "session_id must be a non-empty string, got NoneType None"),
        ("", ValueError, "session_id must be a non-empty string, got ''"),
        (7, TypeError, "session_id must be a non-empty string, got int 7"),
    ],
)
def test_every_method_refuses_a_missing_session_id_the_same_way(
    store: MemoryStore, method: str, session_id: object, error: type[Exception], message: str
) -> None:
    calls = {
        "count": lambda: store.count(session_id),  # type: ignore[arg-type]
        "recall": lambda: store.recall(session_id, "x"),  # type: ignore[arg-type]
        "recent": lambda: store.recent(session_id),  # type: ignore[arg-type]
        "get_context": lambda: store.get_context(session_id, "x"),  # type: ignore[arg-type]
        "remember": lambda: store.remember(session_id, "x"),  # type: ignore[arg-type]
        "remember_many": lambda: store.remember_many(session_id, ["x"]),  # type: ignore[arg-type]
        "forget": lambda: store.forget(session_id, "e1"),  # type: ignore[arg-type]
    }
    with pytest.raises(error) as info:
        calls[method]()
    assert str(info.value) == message


@pytest.mark.parametrize("method", ["recall", "get_context"])
def test_a_query_that_is_not_text_is_a_type_error_naming_the_query(store: MemoryStore, method: str) -> None:
    store.remember("s", "123 apples")
    call = getattr(store, method)
    with pytest.raises(TypeError, match="query must be a string or None, got int 123"):
        call("s", 123)
    assert call("s", None) is not None  # None means "no query", as in get_context


@pytest.mark.parametrize("method", ["recall", "recent"])
def test_limits_and_lanes_are_checked_the_same_way_by_every_read(store: MemoryStore, method: str) -> None:
    call = (lambda **kw: store.recall("s", "x", **kw)) if method == "recall" else (lambda **kw: store.recent("s", **kw))
    with pytest.raises(ValueError, match=r"limit must be a positive int \(1 to \d+\), got 0"):
        call(limit=0)
    with pytest.raises(TypeError, match="limit must be a positive int, got str '5'"):
        call(limit="5")
    with pytest.raises(ValueError, match="limit must be a positive int"):
        call(limit=2**70)
    if method == "recent":
        with pytest.raises(TypeError, match="lane must be a string or None, got int 5"):
            store.recent("s", lane=5)  # type: ignore[arg-type]


def test_entry_values_of_the_wrong_type_are_type_errors_and_out_of_range_ones_value_errors(store: MemoryStore) -> None:
    with pytest.raises(TypeError, match="memory entry content must be a non-empty string, got int 5"):
        store.remember("s", 5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="importance must be a number from 0.0 to 1.0, got str 'high'"):
        store.remember("s", "x", importance="high")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="importance must be a number from 0.0 to 1.0, got nan"):
        store.remember("s", "x", importance=float("nan"))
    with pytest.raises(TypeError, match="entry_id must be a non-empty string, got int 3"):
        store.forget("s", 3)  # type: ignore[arg-type]
    assert store.count("s") == 0
