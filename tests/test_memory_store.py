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

REPO = Path(__file__).resolve().parents[1]


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
