"""The runs store's text search (``RunStore.list``/``count``/``usage_by_model``/``buckets`` with
``text``) against the same search worked out here, run by run, in Python: random stores in real
SQLite files, written in and out of their start order, with runs replaced and deleted; queries of
words, parts of words, other cases, accents, ids, underscores, FTS5 syntax and punctuation alone.
Then: the work of one page of a search does not grow with its matches, and runs written by another
connection (appended while a page is open, or recorded live first) are found at once."""

from __future__ import annotations

import json
import os
import random
import re
import unicodedata
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from crux_devtools.core.record.runstore import RunStore

WORDS = ["refund", "Refunded", "invoice", "INV-1042", "café", "Café", "naïve", "versions", "version", "sync_job", "gpt-4o", "über", "quota", "42", "x"]
MARKS = ["—", "?!", "#", "$$", ":", ", ", ". ", " (", ") "]
QUERIES = [
    "refund", "REFUND", "refun", "ref", "Refunded", "invoice inv", "INV-1042", "inv_1042", "1042", "café", "cafe", "CAF", "naive", "NAÏVE",
    "über", "uber", "versions", "version", "vers", "sync_job", "sync job", "job", "gpt-4o", "4o", "billing-agent", "support_bot", "triage",
    "TimeoutError", "timeout", "question", "r0003-alpha", "r0003", "alpha", "—", "?!", "#", "$$", "x", "42", "quota refund",
    "refund AND quota", '"refund"', "refund*", "NEAR(refund quota)", "-refund", "col:refund", "zzz", "", "   ",
]
FILTERS: list[dict[str, str]] = [{}, {"target": "support_bot"}, {"status": "ok"}, {"target": "Triage", "origin": "otel"}]
BEGIN = datetime(2026, 3, 1, tzinfo=UTC)


# -- the search worked out in Python ------------------------------------------------------------
def fold(word: str) -> str:
    """A word as the text index keeps it: lower case, accents removed."""
    return "".join(c for c in unicodedata.normalize("NFD", word.lower()) if not unicodedata.combining(c))


def words(text: str) -> list[str]:
    """The words of ``text``: runs of letters and digits (``_`` and punctuation separate them)."""
    return [fold(w) for w in re.findall(r"[^\W_]+", text)]


def field_text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def searched_words(run: dict[str, Any]) -> list[str]:
    """The words a search looks in: the target, model, input, final text and error of a run."""
    error = run.get("error")
    error_text = f"{error.get('type') or ''} {error.get('message') or ''}".strip() if isinstance(error, dict) else field_text(error)
    return [w for value in (run["target"], field_text(run.get("model")), field_text(run.get("input")), field_text(run.get("text")), error_text) for w in words(value)]


def ascii_lower(text: str) -> str:
    return "".join(c.lower() if c.isascii() else c for c in text)


def summary_text(run: dict[str, Any]) -> str:
    """The run's stored summary, its ASCII letters in lower case: where punctuation alone is looked for."""
    return ascii_lower(json.dumps({k: v for k, v in run.items() if k != "steps"}, ensure_ascii=False, separators=(",", ":")))


def matches(found: list[str], summary: str, query: str) -> bool:
    """Every word of the query starts a word of the run (``found``: its ``searched_words``); a query
    of punctuation alone is looked for as it is in the run's stored summary (``summary_text``)."""
    if not query.strip():
        return True
    terms = list(dict.fromkeys(words(query)))[:32]
    if not terms:
        return query.strip().lower() in summary
    return all(any(w.startswith(t) for w in found) for t in terms)


class Model:
    """The runs of a store as this test wrote them: each with its write order (a replaced run is
    written anew), listed newest first by start time, then by write order. What a query looks in is
    worked out once per run written, not once per query."""

    def __init__(self) -> None:
        # run id -> (write order, the run, its searched words, its summary text)
        self.runs: dict[str, tuple[int, dict[str, Any], list[str], str]] = {}
        self.writes = 0

    def write(self, run: dict[str, Any]) -> None:
        self.writes += 1
        self.runs[run["id"]] = (self.writes, run, searched_words(run), summary_text(run))

    def delete(self, run_id: str) -> None:
        self.runs.pop(run_id, None)

    def search(self, query: str, **wanted: str) -> list[tuple[int, dict[str, Any]]]:
        """The matching runs, newest first, each with its write order."""
        found = [
            (order, run) for order, run, run_words, summary in self.runs.values()
            if all(run[key] == value for key, value in wanted.items()) and matches(run_words, summary, query)
        ]
        return sorted(found, key=lambda item: (datetime.fromisoformat(item[1]["started_at"]).timestamp(), item[0]), reverse=True)


# -- random stores -------------------------------------------------------------------------------
def phrase(rng: random.Random, count: int) -> str:
    out = ""
    for _ in range(count):
        out += rng.choice(WORDS) + (rng.choice(MARKS) if rng.random() < 0.3 else " ")
    return out.strip()


def random_run(rng: random.Random, n: int, started: datetime) -> dict[str, Any]:
    run: dict[str, Any] = {
        "id": f"r{n:04d}-{rng.choice(['alpha', 'beta'])}",
        "target": rng.choice(["billing-agent", "support_bot", "Triage"]),
        "kind": "agent",
        "status": rng.choice(["ok", "ok", "error", "max_steps"]),
        "origin": rng.choice(["app", "inspector", "otel"]),
        "started_at": started.isoformat(),
        "model": rng.choice([None, "gpt-4o", "claude-3.5", "nimbus-scripted"]),
        "input": rng.choice([None, phrase(rng, 3), {"question": phrase(rng, 4), "n": rng.randint(0, 99)}, [phrase(rng, 2), 7]]),
        "text": phrase(rng, rng.randint(0, 8)),
        "error": rng.choice([None, None, {"type": "TimeoutError", "message": phrase(rng, 2)}, phrase(rng, 2)]),
        "usage": {"input_tokens": rng.randint(0, 900)} if rng.random() < 0.8 else None,
    }
    return run


def fill(path: Path, seed: int, count: int, *, in_order: bool) -> Model:
    """A store of ``count`` runs (some replaced, some deleted). ``in_order``: written in their start
    order (ties included), as an application records them; else in a random order."""
    rng = random.Random(seed)
    model = Model()
    with RunStore(path) as store, store.batch():
        for n in range(count):
            started = BEGIN + timedelta(seconds=n // 3 if in_order else rng.randint(0, count))
            run = random_run(rng, n, started)
            store.write({**run, "steps": []})
            model.write(run)
            if rng.random() < 0.05 and model.runs:  # a run written again, in its place
                again_id = rng.choice(sorted(model.runs))
                again = {**random_run(rng, n, started), "id": again_id}
                store.write({**again, "steps": []})
                model.write(again)
            if rng.random() < 0.03 and model.runs:
                gone = rng.choice(sorted(model.runs))
                assert store.delete([gone]) == 1
                model.delete(gone)
    return model


@pytest.mark.parametrize(("seed", "in_order"), [(1, True), (2, False), (3, True)])
def test_the_search_finds_and_counts_what_the_runs_say_word_by_word(tmp_path: Path, seed: int, in_order: bool) -> None:
    path = tmp_path / "runs.sqlite3"
    model = fill(path, seed, 320, in_order=in_order)
    with RunStore(path, create=False) as store:
        for query in QUERIES:
            for wanted in FILTERS:
                expected = model.search(query, **wanted)
                ids = [run["id"] for _order, run in expected]
                label = (query, wanted)
                assert [r["id"] for r in store.list(text=query, limit=10**6, **wanted)] == ids, label
                assert store.count(text=query, **wanted) == len(ids), label
                for limit, offset in ((7, 0), (7, 7), (50, 13), (64, 64), (3, max(len(ids) - 2, 0)), (5, len(ids) + 9)):
                    assert [r["id"] for r in store.list(text=query, limit=limit, offset=offset, **wanted)] == ids[offset:offset + limit], (label, limit, offset)
                for at_most in (0, 1, 5, 37, 10**6):
                    assert store.count(text=query, at_most=at_most, **wanted) == min(len(ids), at_most), (label, at_most)
                if query.strip():
                    check_last_written(store, query, wanted, expected)


def check_last_written(store: RunStore, query: str, wanted: dict[str, str], expected: list[tuple[int, dict[str, Any]]]) -> None:
    """``usage_by_model`` and ``buckets`` with ``at_most`` read the matches written last."""
    for at_most in (1, 23):
        last = sorted(expected, key=lambda item: item[0], reverse=True)[:at_most]
        rows = store.usage_by_model(text=query, at_most=at_most, **wanted)
        assert sum(row["runs"] for row in rows) == len(last), (query, wanted, at_most)
        assert sum(row["input_tokens"] for row in rows) == sum((run.get("usage") or {}).get("input_tokens", 0) for _order, run in last)
        groups = store.buckets(10, text=query, at_most=at_most, **wanted)
        assert sum(group["runs"] for group in groups) == len(last)
        if last:
            starts = [datetime.fromisoformat(run["started_at"]).timestamp() for _order, run in last]
            assert (groups[0]["first"], groups[-1]["last"]) == (min(starts), max(starts))


# -- the work of a page --------------------------------------------------------------------------
def same_runs(path: Path, count: int) -> None:
    """``count`` runs that all match "versions", written in their start order."""
    with RunStore(path) as store, store.batch():
        for n in range(count):
            store.write({
                "id": f"run-{n:05d}", "target": "support-agent", "started_at": (BEGIN + timedelta(seconds=n)).isoformat(),
                "input": {"question": "Which plan keeps 30 days of versions?"}, "text": f"The Team plan (run {n})", "steps": [],
            })


def page_work(path: Path) -> int:
    """SQLite's virtual machine steps (in thousands) of what ``/runs?q=versions`` asks the store for
    the list: its first page, and the count up to one past a thousand."""
    with RunStore(path, create=False) as store:
        assert store.count() > 0
        conn = store._conn
        assert conn is not None
        steps = [0]

        def tick() -> int:
            steps[0] += 1
            return 0

        conn.set_progress_handler(tick, 1000)
        store.list(text="versions", limit=50)
        store.count(text="versions", at_most=1001)
        buckets = store.buckets(200, text="versions", at_most=1000)
        usage = store.usage_by_model(text="versions", at_most=1000)
        conn.set_progress_handler(None, 0)
        assert sum(b["runs"] for b in buckets) == sum(row["runs"] for row in usage) == min(store.count(), 1000)
    return steps[0]


def test_a_page_of_a_search_does_not_read_every_match(tmp_path: Path) -> None:
    small, large = tmp_path / "small.sqlite3", tmp_path / "large.sqlite3"
    same_runs(small, 1_200)
    same_runs(large, 4_800)
    few, many = page_work(small), page_work(large)
    assert many <= few * 1.25 + 2, f"{few}k steps with 1,200 matches, {many}k with 4,800"


# -- runs written while a page is open -----------------------------------------------------------
def test_runs_appended_by_another_connection_and_runs_recorded_live_are_found_at_once(tmp_path: Path) -> None:
    path = tmp_path / ".crux" / "runs.sqlite3"
    with RunStore(path) as writer, RunStore(path, create=False) as reader:
        for n in range(150):
            writer.write({"id": f"old-{n}", "target": "t", "text": "versions kept", "steps": []})
        assert reader.count(text="versions", at_most=1001) == 150
        assert [r["id"] for r in reader.list(text="versions", limit=2)] == ["old-149", "old-148"]
        writer.write({"id": "appended", "target": "t", "text": "an appended versions run", "steps": []})
        assert reader.list(text="appended versions", limit=5)[0]["id"] == "appended"
        assert reader.count(text="versions", at_most=1001) == 151
        assert reader.usage_by_model(text="appended", at_most=1000)[0]["runs"] == 1
        # A run recorded live: its row while it streams, then the run written whole.
        assert writer.write_live({"run_id": "streamed", "summary": {"target": "t"}, "text": "versions so far", "pid": os.getpid()})
        assert [r["id"] for r in reader.live_runs()] == ["streamed"]
        writer.write({"id": "streamed", "target": "t", "text": "the streamed versions answer", "steps": []})
        assert reader.live_runs() == []
        assert reader.list(text="streamed", limit=5)[0]["id"] == "streamed"
        assert reader.count(text="versions", at_most=1001) == 152
        assert reader.buckets(5, text="streamed", at_most=1000)[0]["runs"] == 1
