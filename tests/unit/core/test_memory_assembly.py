"""get_context: section order, budgets, empty reasons, modes and filters, on real SQLite files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crux_devtools import ContextAssembly, MemoryStore, default_counter
from crux_devtools.core.memory import SECTION_ORDER

S = "nimbus:ari:ticket-1043"


def bullets(block: str) -> int:
    return sum(1 for line in block.splitlines() if line.startswith("- "))


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    s = MemoryStore(tmp_path / "memory.sqlite3")
    yield s
    s.close()


@pytest.fixture
def acme(store: MemoryStore) -> MemoryStore:
    store.remember(S, "Acme log: export job 77 started", entry_type="log")
    store.remember(S, "Acme fact: Acme Corp is on the Business plan", entry_type="fact")
    store.remember(S, "Acme rule: never promise an export deadline", entry_type="rule")
    store.remember(S, "Acme lesson: a CSV export over 2 GB times out; split it by month", entry_type="lesson")
    store.remember(S, "Acme profile: large enterprise, exports every Monday", entry_type="mental_model")
    store.remember(S, "Current ticket is about a failing export", entry_type="working_memory")
    store.remember(S, "Acme archive: 'export failed at 1.9 GB' (ticket 988)", entry_type="archive")
    return store


def test_sections_appear_in_the_fixed_order_distilled_knowledge_first(acme: MemoryStore) -> None:
    block = acme.get_context(S, "Acme export").context_block
    titles = [line for line in block.splitlines() if line.startswith("## ")]
    assert titles == ["## Mental Models", "## Active Rules", "## Lessons", "## Archive Blocks", "## Facts", "## Current State", "## Logs"]
    names = [s.section_name for s in acme.get_context(S, "Acme export").section_summaries]
    assert names == sorted(names, key=SECTION_ORDER.index)


def test_items_inside_a_section_sort_by_descending_score(store: MemoryStore) -> None:
    store.remember(S, "refund mentioned once")
    store.remember(S, "refund refund refund: the refund policy for refund requests")
    block = store.get_context(S, "refund policy").context_block
    assert block.index("refund policy") < block.index("mentioned once")


def test_every_matching_entry_is_considered_without_a_top_k_cap(store: MemoryStore) -> None:
    store.remember_many(S, [f"sync conflict report number {i}" for i in range(120)])
    store.remember(S, "unrelated billing note")
    result = store.get_context(S, "sync conflict")
    assert result.evidence_candidates_considered == 120
    assert result.evidence_dropped_by_budget == 0
    assert bullets(result.context_block) == 120
    assert result.empty_reason == ""


def test_the_budget_is_never_exceeded_and_the_rest_is_counted_as_dropped(store: MemoryStore) -> None:
    store.remember_many(S, [{"content": f"lesson {i}: exports need patience", "entry_type": "lesson"} for i in range(30)])
    store.remember_many(S, [{"content": f"log {i}: export retried", "entry_type": "log"} for i in range(30)])
    counter = default_counter()
    for budget in (5, 12, 40, 99, 150, 301, 700):
        result = store.get_context(S, "export", max_token_budget=budget)
        assert result.token_estimate <= budget
        assert result.token_estimate == counter.count(result.context_block)
        assert result.budget_used == result.token_estimate
        assert result.budget_remaining == budget - result.token_estimate
        kept = bullets(result.context_block)
        assert kept + result.evidence_dropped_by_budget == result.evidence_candidates_considered == 60


def test_a_lower_section_never_displaces_a_higher_one(store: MemoryStore) -> None:
    store.remember_many(S, [{"content": f"rule {i} about export handling, stated at length " * 3, "entry_type": "rule"} for i in range(10)])
    store.remember_many(S, [{"content": "tiny export log", "entry_type": "log"} for _ in range(10)])
    result = store.get_context(S, "export", max_token_budget=120)
    assert "## Active Rules" in result.context_block
    assert "## Logs" not in result.context_block
    assert result.evidence_dropped_by_budget > 10


def test_a_zero_budget_means_no_limit(acme: MemoryStore) -> None:
    result = acme.get_context(S, "Acme export", max_token_budget=0)
    assert result.evidence_dropped_by_budget == 0
    assert result.budget_remaining == 0
    assert result.token_estimate > 0


def test_an_empty_session_reports_no_evidence(store: MemoryStore) -> None:
    result = store.get_context(S, "anything at all")
    assert (result.context_block, result.empty_reason, result.evidence_candidates_considered) == ("", "no_evidence", 0)


def test_a_query_matching_nothing_falls_back_to_the_most_recent_entries(acme: MemoryStore) -> None:
    result = acme.get_context(S, "zebra giraffe")
    assert result.empty_reason == "recency_fallback"
    assert "Acme Corp is on the Business plan" in result.context_block
    assert result.evidence_candidates_considered == 7


def test_a_budget_too_small_for_anything_reports_budget_exhausted(acme: MemoryStore) -> None:
    result = acme.get_context(S, "Acme export", max_token_budget=3)
    assert result.context_block == ""
    assert result.empty_reason == "budget_exhausted"
    assert result.evidence_dropped_by_budget == result.evidence_candidates_considered > 0


def test_summary_mode_returns_only_section_summaries(acme: MemoryStore) -> None:
    acme.remember(S, "Acme lesson: " + "a very long explanation about exports " * 10, entry_type="lesson")
    result = acme.get_context(S, "Acme explanation export", mode="summary")
    assert result.context_block == "" and result.token_estimate == 0
    lessons = next(s for s in result.section_summaries if s.section_name == "lessons")
    assert lessons.item_count == 2
    assert lessons.top_item_preview.endswith("…") and len(lessons.top_item_preview) == 81
    assert lessons.estimated_tokens > 50
    short = next(s for s in result.section_summaries if s.section_name == "mental_models")
    assert short.top_item_preview == "Acme profile: large enterprise, exports every Monday"


def test_sections_mode_assembles_only_the_named_sections(acme: MemoryStore) -> None:
    result = acme.get_context(S, "Acme export", mode="sections", sections=["lessons", "archive_blocks"], max_token_budget=800)
    titles = [line for line in result.context_block.splitlines() if line.startswith("## ")]
    assert titles == ["## Lessons", "## Archive Blocks"]
    assert result.exact_references_surfaced == 1
    assert result.evidence_candidates_considered == 2


def test_an_unknown_section_key_raises_listing_the_valid_ones(acme: MemoryStore) -> None:
    with pytest.raises(ValueError, match="'lesson'.*mental_models, active_rules"):
        acme.get_context(S, "x", mode="sections", sections=["lesson"])


def test_an_unknown_entry_type_raises_listing_the_valid_ones(acme: MemoryStore) -> None:
    with pytest.raises(ValueError, match="'lessons'.*mental_model, rule, lesson"):
        acme.get_context(S, "x", entry_types=["lessons"])


def test_bad_mode_and_budget_values_are_rejected(acme: MemoryStore) -> None:
    with pytest.raises(ValueError, match="'brief'.*full, summary, sections"):
        acme.get_context(S, "x", mode="brief")
    with pytest.raises(ValueError, match="sections=\\[...\\]"):
        acme.get_context(S, "x", mode="sections")
    for bad in (-1, 1.5, True, "100"):
        with pytest.raises(TypeError, match="max_token_budget"):
            acme.get_context(S, "x", max_token_budget=bad)


def test_entry_types_filter_keeps_working_memory_riding_along(acme: MemoryStore) -> None:
    result = acme.get_context(S, "Acme export", entry_types=["rule", "lesson"])
    titles = [line for line in result.context_block.splitlines() if line.startswith("## ")]
    assert titles == ["## Active Rules", "## Lessons", "## Current State"]
    without = acme.get_context(S, "Acme export", entry_types=["rule", "lesson"], include_working_memory=False)
    assert "## Current State" not in without.context_block


def test_working_memory_rides_along_even_when_it_does_not_match(acme: MemoryStore) -> None:
    acme.remember(S, "Waiting on the customer's reply", entry_type="working_memory")
    result = acme.get_context(S, "Business plan")
    assert "Waiting on the customer's reply" in result.context_block
    assert result.empty_reason == ""


def test_a_lane_restricts_assembly_to_entries_of_that_lane(store: MemoryStore) -> None:
    store.remember(S, "billing lane: invoice disputed", lane="billing")
    store.remember(S, "sync lane: invoice folder not syncing", lane="sync")
    block = store.get_context(S, "invoice", lane="billing").context_block
    assert "disputed" in block and "syncing" not in block


def test_the_assembly_serialises_to_plain_json(acme: MemoryStore) -> None:
    result = acme.get_context(S, "Acme export", max_token_budget=1500)
    assert isinstance(result, ContextAssembly)
    data = json.loads(json.dumps(result.to_dict()))
    assert set(data) == {
        "context_block",
        "token_estimate",
        "budget_used",
        "budget_remaining",
        "evidence_candidates_considered",
        "evidence_dropped_by_budget",
        "exact_references_surfaced",
        "section_summaries",
        "empty_reason",
    }
    assert set(data["section_summaries"][0]) == {"section_name", "item_count", "top_item_preview", "estimated_tokens"}


def test_multiline_entries_stay_inside_their_bullet(store: MemoryStore) -> None:
    store.remember(S, "Steps to restore:\n1. open history\n2. pick a version")
    block = store.get_context(S, "restore").context_block
    assert block == "## Facts\n- Steps to restore:\n  1. open history\n  2. pick a version"

ENTRY = st.tuples(
    st.sampled_from(["fact", "rule", "lesson", "log", "working_memory", "note"]),
    st.text(alphabet="abc xyz.!\n", min_size=1, max_size=60).filter(lambda t: t.strip()),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=st.lists(ENTRY, min_size=1, max_size=25), budget=st.integers(min_value=1, max_value=200), query=st.text(max_size=12))
def test_the_block_never_exceeds_the_budget_and_every_candidate_is_accounted_for(
    tmp_path: Path, entries: list[tuple[str, str]], budget: int, query: str
) -> None:
    with MemoryStore(":memory:") as s:
        s.remember_many(S, [{"content": text, "entry_type": kind} for kind, text in entries])
        result = s.get_context(S, query, max_token_budget=budget)
        assert result.token_estimate == default_counter().count(result.context_block) <= budget
        assert bullets(result.context_block) + result.evidence_dropped_by_budget == result.evidence_candidates_considered
        titles = [line[3:] for line in result.context_block.splitlines() if line.startswith("## ")]
        assert len(titles) == len(set(titles))
        assert result.empty_reason in ("", "recency_fallback", "budget_exhausted")


def test_query_words_found_in_no_entry_change_nothing(acme: MemoryStore) -> None:
    for budget in (0, 40, 120):
        plain = acme.get_context(S, "Acme export", max_token_budget=budget)
        padded = acme.get_context(S, "Acme export qzx9917 vok2666 unheardofword", max_token_budget=budget)
        assert padded == plain


def test_counts_tokens_and_top_items_match_a_brute_force_reference(store: MemoryStore) -> None:
    words = "sync export refund quota invoice backup".split()
    kinds = ["fact", "rule", "lesson", "log", "mental_model", "trace", "note"]
    rows = []
    for i in range(400):
        # Distinct lengths keep bm25 scores mostly distinct; a few words repeat to vary frequency.
        text = " ".join(words[(i * 7 + k * 3) % len(words)] for k in range(1 + i % 5)) + f" item{i}" + " filler" * (i % 9)
        rows.append({"content": text, "entry_type": kinds[i % len(kinds)], "created_at": i})
    store.remember_many(S, rows)
    store.remember(S, "export unrelated to this session", entry_type="rule")  # other sessions never count
    store.remember("other:session", "export export export", entry_type="rule")
    every = store.recall(S, "export quota", limit=10_000)
    result = store.get_context(S, "export quota", max_token_budget=300, include_working_memory=False)
    assert result.evidence_candidates_considered == len(every)
    counter = default_counter()
    for summary in result.section_summaries:
        members = [e for e in every if e.section == summary.section_name]
        assert summary.item_count == len(members)
        best = max(e.score for e in members)
        tops = [e for e in members if e.score == best]
        newest = max(tops, key=lambda e: e.created_at)
        assert summary.top_item_preview == " ".join(newest.content.split())[:80] + ("…" if len(newest.content) > 80 else "")
        lines = sum(counter.count("- " + e.content + "\n") for e in members)
        assert lines < summary.estimated_tokens <= lines + 10  # plus the section header
    assert [s.section_name for s in result.section_summaries] == sorted(
        {e.section for e in every}, key=SECTION_ORDER.index
    )
