"""memory(...) in use: rendering, namespaces, inspection, tools, capture and flush."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic import BaseModel

from crux_devtools import CallbackError, Memory, MemoryStore, context, default_counter, facts, memory, prompt, recent_messages


class User(BaseModel):
    user_id: str


class Question(BaseModel):
    question: str


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    s = MemoryStore(tmp_path / "memory.sqlite3")
    yield s
    s.close()


def user_memory(store: MemoryStore, **kw) -> Memory:
    return memory(
        "user-memory",
        store=store,
        namespace=lambda i: f"user:{i.user_id}",
        input=User,
        query=lambda i: i.question,
        blocks=[recent_messages("recent", max_messages=3), facts("facts")],
        **kw,
    )


def test_a_memory_in_use_renders_its_blocks_into_the_system_text(store: MemoryStore) -> None:
    store.remember("user:42", "Dana's account is on the Pro plan", entry_type="fact")
    mem = user_memory(store)
    p = prompt("support", system="Answer the question.", input=Question, use=[mem], prompt=lambda i: i.question)
    resolved = p.resolve({"question": "Which plan am I on?", "user_id": "42"})
    assert resolved.system == "Answer the question.\n\n## Facts\n- Dana's account is on the Pro plan"
    assert set(p.input_model.model_fields) == {"question", "user_id"}


def test_the_memory_appears_in_inspection_with_its_kind_and_tokens(store: MemoryStore) -> None:
    store.remember("user:42", "Dana prefers email", entry_type="fact")
    p = prompt("support", system="Answer.", input=Question, use=[user_memory(store)])
    inspection = p.inspect({"question": "email", "user_id": "42"})
    part = next(part for part in inspection.parts if part.source == "user-memory")
    assert (part.kind, part.status) == ("memory", "active")
    assert part.tokens == default_counter().count(part.text) > 0
    assert "remember_fact" in inspection.tools


def test_namespaces_keep_users_apart(store: MemoryStore) -> None:
    store.remember("user:1", "User one owns the Linux laptop", entry_type="fact")
    store.remember("user:2", "User two owns the iPhone", entry_type="fact")
    p = prompt("support", input=Question, use=[user_memory(store)])
    assert "Linux" in p.resolve({"question": "devices", "user_id": "1"}).system
    assert "Linux" not in p.resolve({"question": "devices", "user_id": "2"}).system


def test_a_memory_nested_in_a_context_behaves_like_memory(store: MemoryStore) -> None:
    store.remember("user:7", "Account flagged for a chargeback", entry_type="fact")
    mem = user_memory(store)
    support = context("personalized-support", use=[mem], system="Use durable user memory when relevant.")
    p = prompt("agent", system="Answer.", input=Question, use=[support])
    inspection = p.inspect({"question": "chargeback", "user_id": "7"})
    assert [part.source for part in inspection.parts] == ["<prompt>", "user-memory", "personalized-support"]
    assert inspection.system.index("chargeback") < inspection.system.index("Use durable")
    assert "remember_fact" in inspection.tools


def test_a_low_priority_memory_is_dropped_under_budget_pressure(store: MemoryStore) -> None:
    store.remember_many("user:1", [{"content": f"fact number {i} about storage quotas", "entry_type": "fact"} for i in range(40)])
    p = prompt("support", system="Answer.", input=Question, use=[user_memory(store, priority=10)])
    inspection = p.inspect({"question": "storage quotas", "user_id": "1"}, token_budget=20)
    assert [d.id for d in inspection.dropped_contexts] == ["user-memory"]
    assert inspection.system == "Answer."


def test_the_remember_fact_tool_writes_to_the_namespace_last_resolved(store: MemoryStore) -> None:
    mem = user_memory(store)
    p = prompt("support", input=Question, use=[mem])
    resolved = p.resolve({"question": "hello", "user_id": "9"})
    fact_tool = resolved.tools["remember_fact"]
    out = fact_tool.execute(fact_tool.parameters(fact="Prefers answers in German"))
    assert "remembered" in out
    assert [e.content for e in store.recall("user:9", "German")] == ["Prefers answers in German"]
    assert store.count("user:other") == 0


def test_capture_then_flush_writes_the_recent_messages_the_block_shows(store: MemoryStore) -> None:
    mem = user_memory(store)
    p = prompt("support", input=Question, use=[mem])
    p.resolve({"question": "hi", "user_id": "5"})
    messages = [
        {"role": "system", "content": "ignored"},
        {"role": "user", "content": "My sync is stuck"},
        {"role": "assistant", "content": "Try restarting the client"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "1"}]},
        {"role": "user", "content": "Still stuck"},
        {"role": "user", "content": "Now it works"},
    ]
    assert mem.capture(messages) == 4
    assert store.count("user:5") == 0 and mem.pending == 4
    assert mem.flush() == 4
    assert mem.pending == 0
    system = p.resolve({"question": "hi", "user_id": "5"}).system
    assert "## Recent messages\n- assistant: Try restarting the client\n- user: Still stuck\n- user: Now it works" in system
    assert "My sync is stuck" not in system  # only the last 3 messages


def test_capture_with_an_explicit_input_or_namespace(store: MemoryStore) -> None:
    mem = user_memory(store)
    mem.capture([{"role": "user", "content": "from input"}], input={"user_id": "a"})
    mem.capture([{"role": "user", "content": "from namespace"}], namespace="user:b")
    mem.flush()
    assert [e.content for e in store.recent("user:a", entry_types=["log"])] == ["user: from input"]
    assert [e.content for e in store.recent("user:b", entry_types=["log"])] == ["user: from namespace"]


def test_capture_before_any_resolve_asks_for_a_namespace(store: MemoryStore) -> None:
    with pytest.raises(ValueError, match="namespace= or input="):
        user_memory(store).capture([{"role": "user", "content": "x"}])


def test_a_facts_block_with_extract_keeps_facts_from_messages(store: MemoryStore) -> None:
    def extract(messages):
        return [m["content"][len("remember: "):] for m in messages if m["content"].startswith("remember: ")]

    mem = memory("m", store=store, namespace="team:ops", blocks=[facts("facts", extract=extract)])
    mem.capture([{"role": "user", "content": "remember: the VPN blocks sync"}, {"role": "user", "content": "thanks"}])
    assert mem.flush() == 1
    (fact,) = store.recall("team:ops", "vpn")
    assert (fact.content, fact.entry_type) == ("the VPN blocks sync", "fact")


def test_facts_with_embed_rerank_by_similarity(store: MemoryStore) -> None:
    store.remember("n", "storage photos backup", entry_type="fact")
    store.remember("n", "storage invoice billing", entry_type="fact")

    def embed(text: str) -> list[float]:
        return [float("billing" in text or "money" in text), float("photos" in text)]

    mem = memory("m", store=store, namespace="n", query="storage money", blocks=[facts("facts", embed=embed)])
    text = prompt("p", use=[mem]).resolve({}).system
    assert text.index("billing") < text.index("photos")


def test_bad_memory_definitions_are_rejected(store: MemoryStore) -> None:
    with pytest.raises(ValueError, match="blocks"):
        memory("m", store=store, namespace="n", blocks=[])
    with pytest.raises(TypeError, match="MemoryStore"):
        memory("m", store="x.sqlite3", namespace="n", blocks=[facts("f")])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_messages"):
        recent_messages("r", max_messages=0)
    with pytest.raises(ValueError, match="unique"):
        memory("m", store=store, namespace="n", blocks=[facts("f"), recent_messages("f")])
    with pytest.raises(ValueError, match=r"facts\('f'\): limit must be a positive int"):
        facts("f", limit=0)


def test_an_empty_memory_adds_no_block(store: MemoryStore) -> None:
    p = prompt("p", system="Base.", use=[memory("m", store=store, namespace="empty", blocks=[recent_messages("r")])])
    assert p.resolve({}).system == "Base."


async def test_the_async_resolve_renders_memory_too(store: MemoryStore) -> None:
    store.remember("user:3", "Has two-factor enabled", entry_type="fact")
    p = prompt("p", input=Question, use=[user_memory(store)])
    resolved = await p.aresolve({"question": "two-factor", "user_id": "3"})
    assert "Has two-factor enabled" in resolved.system


def test_the_sample_project_seeds_its_memory_file_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sample = Path(__file__).resolve().parents[3] / "sample_project"
    monkeypatch.syspath_prepend(str(sample))
    import seed_memory

    path = tmp_path / "data" / "memory.sqlite3"
    seed_memory.ensure_seeded(path)
    with MemoryStore(path) as s:
        first = s.count(seed_memory.TEAM)
        assert first == len(seed_memory.TEAM_ENTRIES)
        assert "Dana" in s.get_context("user:dana", "charged twice").context_block
    seed_memory.ensure_seeded(path)
    with MemoryStore(path) as s:
        assert s.count(seed_memory.TEAM) == first


def test_the_inspection_says_what_a_memory_found_and_what_its_budget_left_out(store: MemoryStore) -> None:
    store.remember_many("user:42", [{"content": f"Export {i} of the yearly report failed at night", "entry_type": "fact"} for i in range(12)])
    store.remember_many("user:42", [{"content": "user: my export failed again", "entry_type": "log", "lane": "messages:recent"}])
    mem = memory(
        "user-memory",
        store=store,
        namespace=lambda i: f"user:{i.user_id}",
        input=User,
        query=lambda i: i.question,
        blocks=[recent_messages("recent", max_messages=3), facts("facts", max_tokens=60)],
    )
    p = prompt("support", system="Answer.", input=Question, use=[mem])
    part = next(part for part in p.inspect({"question": "export report", "user_id": "42"}).parts if part.source == "user-memory")
    shown = sum(1 for line in part.text.splitlines() if line.startswith("- Export"))
    assert 0 < shown < 12
    assert part.detail == (
        "namespace 'user:42': recent: the last message (at most 3); "
        f"facts: 12 matching facts, {shown} shown, {12 - shown} left out by the 60-token budget"
    )
    empty = next(part for part in p.inspect({"question": "export", "user_id": "7"}).parts if part.source == "user-memory")
    assert empty.detail == "namespace 'user:7': recent: no messages yet; facts: no facts stored yet"
    fallback = next(part for part in p.inspect({"question": "zebra", "user_id": "42"}).parts if part.source == "user-memory")
    assert "no query word matched; the 12 newest facts instead" in (fallback.detail or "")


def test_a_plain_context_has_no_render_detail(store: MemoryStore) -> None:
    p = prompt("support", system="Answer.", use=[context("tone", system=lambda i: "Be brief.")])
    assert [part.detail for part in p.inspect({}).parts] == [None, None]


def _broken_query(i: Question) -> str:
    raise KeyError("topic")


def _number_query(i: Question) -> int:
    return 42


def test_a_query_callback_that_raises_is_reported_as_the_memorys_query_callback(store: MemoryStore) -> None:
    mem = memory("m", store=store, namespace="n", input=Question, query=_broken_query, blocks=[facts("f")])
    p = prompt("p", use=[mem])
    for call in (lambda: p.resolve({"question": "q"}), lambda: asyncio.run(p.ainspect({"question": "q"}))):
        with pytest.raises(CallbackError) as info:
            call()
        assert (info.value.owner, info.value.callback) == ("m", "query")
        assert str(info.value) == "'m': query callback raised KeyError: 'topic'"
        assert isinstance(info.value.__cause__, KeyError)
        assert info.value.location == (__file__, _broken_query.__code__.co_firstlineno)


def test_a_query_callback_that_returns_no_text_is_reported_at_its_own_definition(store: MemoryStore) -> None:
    mem = memory("m", store=store, namespace="n", input=Question, query=_number_query, blocks=[facts("f")])
    with pytest.raises(CallbackError) as info:
        prompt("p", use=[mem]).resolve({"question": "q"})
    assert (info.value.owner, info.value.callback) == ("m", "query")
    assert str(info.value) == (
        "'m': query callback returned int, expected str or None; return the text to search the memory for (None: its newest facts)"
    )
    assert info.value.location == (__file__, _number_query.__code__.co_firstlineno)


def test_a_namespace_callback_that_returns_no_namespace_is_reported_as_the_namespace_callback(store: MemoryStore) -> None:
    no_namespace = lambda i: None  # noqa: E731
    mem = memory("m", store=store, namespace=no_namespace, blocks=[facts("f")])
    with pytest.raises(CallbackError) as info:
        prompt("p", use=[mem]).resolve({})
    assert (info.value.owner, info.value.callback) == ("m", "namespace")
    assert str(info.value).startswith("'m': namespace callback returned None, expected a non-empty string")
    assert info.value.location == (__file__, no_namespace.__code__.co_firstlineno)


def test_an_async_query_callback_is_refused_with_a_clear_message(store: MemoryStore) -> None:
    async def query(i: Question) -> str:
        return "q"

    mem = memory("m", store=store, namespace="n", input=Question, query=query, blocks=[facts("f")])
    with pytest.raises(CallbackError, match="'m': query callback returned a coroutine; a memory's query callback must be a plain function"):
        prompt("p", use=[mem]).resolve({"question": "q"})


def test_a_bad_explicit_namespace_is_refused_when_captured_not_at_flush(store: MemoryStore) -> None:
    mem = user_memory(store)
    for bad, error in (("", ValueError), (5, TypeError)):  # None means "not given"
        with pytest.raises(error, match="namespace must be a non-empty string"):
            mem.capture([{"role": "user", "content": "hello"}], namespace=bad)  # type: ignore[arg-type]
        with pytest.raises(error, match="namespace must be a non-empty string"):
            mem.remember_fact("a fact", namespace=bad)  # type: ignore[arg-type]
    assert mem.pending == 0
    assert mem.flush() == 0
