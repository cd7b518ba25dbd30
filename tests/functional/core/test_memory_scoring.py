"""How get_context scores: per-session rowid ranges, the schema migration that lays them out, and the
two-connection path for large sessions, which must give exactly what one connection gives."""

from __future__ import annotations

import importlib
import random
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from waits import WAIT

from crux_devtools import MemoryStore
from crux_devtools.core.memory.schema import _V1, SCHEMA_VERSION, slot_range
from crux_devtools.core.migrations import split_script

assembly = importlib.import_module("crux_devtools.core.memory.assembly")
REPO = Path(__file__).resolve().parents[3]
S = "nimbus:ari:ticket-1043"
WORDS = "sync export refund quota invoice backup csv timeout acme login".split()
KINDS = ["fact", "rule", "lesson", "log", "mental_model", "trace", "working_memory", "archive", "note"]


def fill(store: MemoryStore, n: int, seed: int = 3, session: str = S) -> None:
    """``n`` entries with many exact bm25 ties (short texts over a small vocabulary)."""
    rng = random.Random(seed)
    store.remember_many(
        session,
        [
            {
                "content": " ".join(rng.choices(WORDS, k=rng.randint(1, 6))) + f" item{i % 7}",
                "entry_type": rng.choice(KINDS),
                "lane": rng.choice([None, None, "billing"]),
                "created_at": i,
            }
            for i in range(n)
        ],
    )


CALLS = [
    dict(query="export quota", max_token_budget=0),
    dict(query="export quota", max_token_budget=60),
    dict(query="export quota", max_token_budget=400),
    dict(query="acme timeout login", max_token_budget=250, mode="summary"),
    dict(query="acme timeout", max_token_budget=300, mode="sections", sections=["facts", "working_memory", "logs"]),
    dict(query="refund", max_token_budget=200, entry_types=["rule", "fact"]),
    dict(query="refund csv", max_token_budget=200, lane="billing"),
    dict(query="sync", max_token_budget=120, include_working_memory=False),
    dict(query="export", max_token_budget=200, lane="no-such-lane"),  # matches in the file, none in scope
]


def assemble_both(store: MemoryStore, monkeypatch: pytest.MonkeyPatch, **call: object) -> tuple[object, object]:
    monkeypatch.setattr(assembly, "PARALLEL_MIN_ENTRIES", 10**9)
    one = store.get_context(S, **call)  # type: ignore[arg-type]
    monkeypatch.setattr(assembly, "PARALLEL_MIN_ENTRIES", 1)
    two = store.get_context(S, **call)  # type: ignore[arg-type]
    return one, two


@pytest.mark.parametrize("call", CALLS, ids=[f"{c.get('mode', 'full')}-{c['max_token_budget']}-{i}" for i, c in enumerate(CALLS)])
def test_two_connections_give_exactly_what_one_gives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, call: dict[str, object]) -> None:
    with MemoryStore(tmp_path / "m.sqlite3") as store:
        fill(store, 1500)
        fill(store, 300, seed=9, session="other")  # another session's matches are never counted
        one, two = assemble_both(store, monkeypatch, **call)
        assert store._helper is not None, "the two-connection path did not run"
        assert two == one
        assert not store._helper.conn.in_transaction


def test_a_write_between_the_two_snapshots_falls_back_to_one_connection(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with MemoryStore(tmp_path / "m.sqlite3") as store:
        fill(store, 800)
        one = store.get_context(S, "export quota", max_token_budget=300)
        monkeypatch.setattr(assembly, "PARALLEL_MIN_ENTRIES", 1)
        seen = iter(range(1000))
        monkeypatch.setattr(assembly, "fingerprint", lambda conn: (next(seen),))  # never equal twice
        scored: list[int] = []
        real_score = assembly.score
        monkeypatch.setattr(assembly, "score", lambda conn, where: scored.append(where.hi - where.lo) or real_score(conn, where))
        assert store.get_context(S, "export quota", max_token_budget=300) == one
        lo, hi = slot_range(1)
        assert scored[-1] == hi - lo  # the fallback scored the whole session on one connection
        assert store._helper is not None and not store._helper.conn.in_transaction


def test_closing_the_store_stops_its_scoring_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(assembly, "PARALLEL_MIN_ENTRIES", 1)
    store = MemoryStore(tmp_path / "m.sqlite3")
    fill(store, 200)
    store.get_context(S, "export", max_token_budget=100)
    assert any(t.name.startswith("crux-memory-scoring") for t in threading.enumerate())
    store.close()
    assert not any(t.name.startswith("crux-memory-scoring") for t in threading.enumerate())


def test_memory_stores_score_on_one_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(assembly, "PARALLEL_MIN_ENTRIES", 1)
    with MemoryStore(":memory:") as store:  # a second connection to ":memory:" is another database
        fill(store, 200)
        assert store.get_context(S, "export", max_token_budget=100).evidence_candidates_considered > 0
        assert store._helper is None


def test_each_session_owns_one_rowid_range(tmp_path: Path) -> None:
    with MemoryStore(tmp_path / "m.sqlite3") as store:
        store.remember("a", "one")
        store.remember("b", "two")
        store.remember_many("a", ["three", "four"])
        rows = store._conn.execute("SELECT s.slot, e.id, e.content FROM entries e JOIN sessions s USING (session_id) ORDER BY e.id").fetchall()
    for slot, rowid, _ in rows:
        lo, hi = slot_range(slot)
        assert lo < rowid <= hi
    assert [content for _, _, content in rows] == ["one", "three", "four", "two"]


def _version_1_file(path: Path) -> None:
    raw = sqlite3.connect(path, isolation_level=None)
    for statement in split_script(_V1):
        raw.execute(statement)
    raw.execute("PRAGMA user_version = 1")
    rows = []
    for i in range(30):
        session = "a" if i % 3 else "b"
        rows.append((f"e{i}", session, f"entry {i} about export" if i % 2 else f"entry {i} about refunds", "lesson" if i % 5 == 0 else "fact", "lessons" if i % 5 == 0 else "facts", None, 0.5, float(i), 7))
    raw.executemany(
        "INSERT INTO entries (entry_id, session_id, content, entry_type, section, lane, importance, created_at, tokens) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    raw.close()


def test_a_version_1_file_is_renumbered_per_session_and_keeps_every_entry(tmp_path: Path) -> None:
    path = tmp_path / "v1.sqlite3"
    _version_1_file(path)
    with MemoryStore(path) as store:
        assert store.schema_version == SCHEMA_VERSION == 2
        assert store.count("a") == 20 and store.count("b") == 10
        found = store.recall("a", "export", limit=100)
        assert sorted(e.id for e in found) == sorted(f"e{i}" for i in range(30) if i % 3 and i % 2)
        assert [e.id for e in store.recent("b", limit=3)] == ["e27", "e24", "e21"]  # order kept
        ctx = store.get_context("a", "export refunds", max_token_budget=0)
        assert ctx.evidence_candidates_considered == 20
        new = store.remember("a", "added after the migration about export")
        assert store.recent("a", limit=1)[0].id == new
        meta = store._conn.execute("SELECT count(*) FROM entry_meta").fetchone()[0]
        assert meta == 31


READER_WRITER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {repo!r})
    from crux_devtools.core.memory import MemoryStore
    store = MemoryStore(sys.argv[1], busy_timeout=30)
    for i in range(100):
        store.remember_many("{session}", [f"late export note {{i}}-{{j}}" for j in range(10)])
    store.close()
    """
)


def test_get_context_on_two_connections_while_another_process_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "m.sqlite3"
    monkeypatch.setattr(assembly, "PARALLEL_MIN_ENTRIES", 1)
    with MemoryStore(path) as store:
        fill(store, 1000)
        script = tmp_path / "writer.py"
        script.write_text(READER_WRITER.format(repo=str(REPO), session=S))
        writer = subprocess.Popen([sys.executable, str(script), str(path)])
        seen = []
        while writer.poll() is None:
            ctx = store.get_context(S, "late export", max_token_budget=200)
            assert ctx.token_estimate <= 200
            seen.append(ctx.evidence_candidates_considered)
        assert writer.wait() == 0
        final = store.get_context(S, "late export", max_token_budget=200, include_working_memory=False)
        every = [e for e in store.recall(S, "late export", limit=100_000) if e.section != "working_memory"]
        monkeypatch.setattr(assembly, "PARALLEL_MIN_ENTRIES", 10**9)
        assert store.get_context(S, "late export", max_token_budget=200, include_working_memory=False) == final
    assert seen == sorted(seen)  # a later call never sees fewer entries
    assert final.evidence_candidates_considered == len(every) > 1000


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")
def test_a_forked_child_scores_on_its_own_helper(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    monkeypatch.setattr(assembly, "PARALLEL_MIN_ENTRIES", 1)
    with MemoryStore(tmp_path / "m.sqlite3") as store:
        fill(store, 300)
        expected = store.get_context(S, "export quota", max_token_budget=150)
        parent_helper = store._helper
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # child: the inherited helper has no thread; a call must not hang or reuse it
            ok = store.get_context(S, "export quota", max_token_budget=150) == expected and store._helper is not parent_helper
            os.write(write, b"1" if ok else b"0")
            os._exit(0)
        os.close(write)
        deadline = time.monotonic() + WAIT
        while (done := os.waitpid(pid, os.WNOHANG)) == (0, 0) and time.monotonic() < deadline:
            time.sleep(0.05)
        if done == (0, 0):
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail("get_context in the forked child hung on the parent's helper")
        assert os.read(read, 1) == b"1" and done[1] == 0
        assert store.get_context(S, "export quota", max_token_budget=150) == expected
