"""get_context gives, call for call, the assemblies recorded in ``memory_recorded.json``.

The file holds what get_context returned for a seeded store before its scoring was last reworked:
which entries, in which order, and every count of the receipt. A change to how matches are scored,
stored or read back must leave all of it as recorded, on one connection and on two. Texts are short
over a small vocabulary, so many entries tie on bm25 and the newest-first tie order is checked too;
each ends in its own word, so the block shows exactly which entries were taken.

To record again (only when a change of results is intended and reviewed):
``.venv/bin/python tests/unit/core/test_memory_recorded.py``.
"""

from __future__ import annotations

import importlib
import json
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from crux_devtools import MemoryStore

assembly = importlib.import_module("crux_devtools.core.memory.assembly")
RECORDED = Path(__file__).with_name("memory_recorded.json")
S = "nimbus:ari:ticket-2207"
WORDS = "sync export refund quota invoice backup csv timeout acme login".split()
KINDS = ["fact", "fact", "rule", "lesson", "log", "log", "mental_model", "trace", "working_memory", "archive", "note", "handoff"]

CALLS: dict[str, dict[str, Any]] = {
    "no-limit": dict(query="export quota", max_token_budget=0),
    "tiny": dict(query="export quota", max_token_budget=12),
    "small": dict(query="export quota", max_token_budget=60),
    "medium": dict(query="export quota refund", max_token_budget=400),
    "large": dict(query="Ticket: the sync backup — is it broken?!", max_token_budget=1500),
    "summary": dict(query="acme timeout login", max_token_budget=250, mode="summary"),
    "sections": dict(query="acme timeout", max_token_budget=300, mode="sections", sections=["facts", "working_memory", "logs"]),
    "entry-types": dict(query="refund", max_token_budget=200, entry_types=["rule", "fact"]),
    "lane": dict(query="refund csv", max_token_budget=200, lane="billing"),
    "no-working-memory": dict(query="sync", max_token_budget=120, include_working_memory=False),
    "working-memory-only": dict(query="invoice", max_token_budget=300, sections=["working_memory"]),
    "other-session-word": dict(query="kestrel export", max_token_budget=150),
    "no-match": dict(query="kestrel", max_token_budget=150),
    "lane-out-of-scope": dict(query="export", max_token_budget=200, lane="no-such-lane"),
    "rare-word": dict(query="backup w17 w230", max_token_budget=200),
}


def seed(store: MemoryStore) -> None:
    rng = random.Random(11)
    store.remember_many(
        S,
        [
            {
                # The last word is the entry's own: it tells entries apart without changing any length.
                "content": " ".join(rng.choices(WORDS, k=rng.randint(1, 6))) + f" w{i}",
                "entry_type": rng.choice(KINDS),
                "lane": rng.choice([None, None, "billing"]),
                "created_at": i,
            }
            for i in range(1500)
        ],
    )
    store.remember_many("other:session", [f"kestrel export {i}" for i in range(300)])


def assemblies(store: MemoryStore) -> dict[str, dict[str, Any]]:
    return {name: store.get_context(S, **call).to_dict() for name, call in CALLS.items()}


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> MemoryStore:
    store = MemoryStore(tmp_path_factory.mktemp("recorded") / "memory.sqlite3")
    seed(store)
    yield store
    store.close()


@pytest.mark.parametrize("connections", ["one", "two"])
def test_get_context_returns_the_recorded_assemblies(seeded: MemoryStore, monkeypatch: pytest.MonkeyPatch, connections: str) -> None:
    monkeypatch.setattr(assembly, "PARALLEL_MIN_ENTRIES", 10**9 if connections == "one" else 1)
    recorded = json.loads(RECORDED.read_text(encoding="utf-8"))
    assert recorded.keys() == CALLS.keys(), f"{RECORDED.name} was recorded for other calls; record it again"
    got = assemblies(seeded)
    for name in CALLS:
        assert got[name] == recorded[name], f"get_context for call {name!r} differs from the recording"


def test_the_recording_covers_ties_budgets_and_fallbacks() -> None:
    """The recorded calls exercise what they are meant to: a cut budget, no limit, the fallback."""
    recorded = json.loads(RECORDED.read_text(encoding="utf-8"))
    assert recorded["no-limit"]["evidence_dropped_by_budget"] == 0
    assert recorded["small"]["evidence_dropped_by_budget"] > 0
    assert recorded["tiny"]["empty_reason"] == "budget_exhausted"
    assert recorded["no-match"]["empty_reason"] == "recency_fallback"
    assert recorded["lane-out-of-scope"]["empty_reason"] == "no_evidence"
    assert len(recorded["large"]["section_summaries"]) >= 8


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        with MemoryStore(Path(tmp) / "memory.sqlite3") as store:
            seed(store)
            RECORDED.write_text(json.dumps(assemblies(store), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    sys.stdout.write(f"recorded {len(CALLS)} assemblies in {RECORDED}\n")
