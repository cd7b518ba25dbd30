"""Token budgets: what is dropped, in which order, and what always stays."""

from __future__ import annotations

import pytest

from crux_devtools import context, default_counter, prompt

WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa "


def ctx(id: str, priority: int = 50, n: int = 5, **kw):
    return context(id, system=f"## {id}\n" + WORDS * n, priority=priority, **kw)


def tokens(text: str) -> int:
    return default_counter().count(text)


def test_without_a_budget_nothing_drops_and_it_fits():
    inspection = prompt("p", system="P", use=[ctx("a"), ctx("b")]).inspect()
    assert inspection.dropped_contexts == [] and inspection.fits is True and inspection.token_budget is None


def test_lowest_priority_drops_first():
    p = prompt("p", system="P", use=[ctx("high", 90), ctx("low", 10), ctx("mid", 50)])
    full = p.inspect().system_tokens
    inspection = p.inspect(token_budget=full - 5)
    assert [d.id for d in inspection.dropped_contexts] == ["low"]
    assert inspection.fits and inspection.system_tokens <= full - 5


def test_on_a_priority_tie_the_later_context_drops_first():
    p = prompt("p", system="P", use=[ctx("first"), ctx("second"), ctx("third")])
    full = p.inspect().system_tokens
    assert [d.id for d in p.inspect(token_budget=full - 5).dropped_contexts] == ["third"]


def test_priority_never_reorders_the_text():
    p = prompt("p", system="P", use=[ctx("low", 1, n=1), ctx("high", 99, n=1)])
    system = p.resolve().system
    assert system.index("## low") < system.index("## high")


def test_a_nested_context_never_outlives_its_owner():
    inner = ctx("inner", priority=95)
    owner = ctx("owner", priority=20, use=[inner])
    p = prompt("p", system="P", use=[owner, ctx("other", priority=60)])
    full = p.inspect().system_tokens
    inspection = p.inspect(token_budget=full - 5)
    assert {(d.id, d.reason) for d in inspection.dropped_contexts} == {("owner", "budget"), ("inner", "parent-dropped")}
    parts = {part.source: part for part in inspection.parts}
    assert parts["inner"].effective_priority == 20 and parts["inner"].priority == 95


def test_on_a_tie_between_owner_and_owned_the_owner_goes_first_taking_what_it_owns():
    inner = ctx("inner", priority=30)
    owner = ctx("owner", priority=30, use=[inner])
    p = prompt("p", system="P", use=[owner])
    inspection = p.inspect(token_budget=tokens("P") + 1)
    assert [(d.id, d.reason) for d in inspection.dropped_contexts] == [("inner", "parent-dropped"), ("owner", "budget")]


def test_a_nested_context_with_lower_priority_can_drop_alone():
    inner = ctx("inner", priority=5)
    owner = ctx("owner", priority=80, use=[inner])
    p = prompt("p", system="P", use=[owner])
    full = p.inspect().system_tokens
    inspection = p.inspect(token_budget=full - 3)
    assert [(d.id, d.reason) for d in inspection.dropped_contexts] == [("inner", "budget")]
    assert "## owner" in inspection.system


def test_the_prompt_text_is_always_kept_and_fits_is_false_when_it_alone_is_over():
    p = prompt("p", system=WORDS * 10, use=[ctx("a")])
    inspection = p.inspect(token_budget=3)
    assert inspection.system == WORDS * 10
    assert inspection.fits is False
    assert [d.id for d in inspection.dropped_contexts] == ["a"]


def test_dropped_contexts_report_priority_and_tokens():
    p = prompt("p", system="P", use=[ctx("a", 7)])
    drop = p.inspect(token_budget=2).dropped_contexts[0]
    assert (drop.id, drop.priority, drop.reason) == ("a", 7, "budget")
    assert drop.tokens == tokens(f"## a\n{WORDS * 5}")


def test_system_tokens_are_the_exact_count_of_the_system_text():
    p = prompt("p", system="You are helpful.", use=[ctx("a"), context("ws", system="  leading spaces\n"), ctx("b")])
    for budget in (None, 200, 80, 30):
        inspection = p.inspect(token_budget=budget)
        assert inspection.system_tokens == tokens(inspection.system)
        assert inspection.total_tokens == inspection.system_tokens + inspection.prompt_tokens


def test_part_costs_add_up_to_the_system_tokens():
    p = prompt("p", system="You are helpful.", use=[ctx("a"), ctx("b", n=2), ctx("c", n=1)])
    inspection = p.inspect(token_budget=60)
    kept = sum(part.tokens for part in inspection.parts if part.status == "active")
    assert kept == inspection.system_tokens


def test_a_default_budget_on_the_prompt_applies_when_the_call_gives_none():
    p = prompt("p", system="P", use=[ctx("a", 10), ctx("b", 90)], token_budget=70)
    assert [d.id for d in p.inspect().dropped_contexts] == ["a"]
    assert p.inspect(token_budget=10_000).dropped_contexts == []


@pytest.mark.parametrize("bad", [0, -5, 1.5, "100", True])
def test_invalid_token_budgets_raise_type_error(bad):
    with pytest.raises(TypeError, match="token_budget"):
        prompt("p").inspect(token_budget=bad)
