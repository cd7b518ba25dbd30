"""Properties of the resolver over generated compositions (hypothesis)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from crux_devtools import context, default_counter, prompt, when

WORD = st.sampled_from(["alpha", "beta", "gamma", "delta", "<|endoftext|>", "x", "\n", "émigré", "42", "."])
TEXT = st.lists(WORD, min_size=0, max_size=30).map(" ".join)


class Flags(BaseModel):
    flags: list[bool] = []


@st.composite
def compositions(draw, depth: int = 0, counter: list[int] | None = None):
    """A list of use entries: contexts (some nested, some conditional) with random text and priority."""
    counter = counter if counter is not None else [0]
    entries = []
    for _ in range(draw(st.integers(0, 4 if depth == 0 else 2))):
        counter[0] += 1
        n = counter[0]
        nested = draw(compositions(depth + 1, counter)) if depth < 2 and draw(st.booleans()) else []
        gated = draw(st.sampled_from([None, True, False]))
        c = context(
            f"c{n}",
            system=draw(TEXT),
            priority=draw(st.integers(0, 100)),
            use=nested,
            when=None if gated is None else (lambda i, g=gated: g),
        )
        entries.append(when(lambda i: False, c) if draw(st.integers(0, 9)) == 0 else c)
    return entries


@st.composite
def prompts(draw):
    return prompt("p", system=draw(TEXT), input=Flags, use=draw(compositions()))


def _kept_and_dropped(inspection):
    kept = [p for p in inspection.parts[1:] if p.status == "active"]
    dropped = [p for p in inspection.parts if p.status == "dropped"]
    return kept, dropped


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(prompts(), st.integers(1, 300))
def test_system_text_never_exceeds_the_budget_unless_only_the_prompt_text_is_left(p, budget):
    inspection = p.inspect({}, token_budget=budget)
    assert inspection.system_tokens == default_counter().count(inspection.system)
    if inspection.system_tokens > budget:
        kept, _ = _kept_and_dropped(inspection)
        assert [k for k in kept if k.text] == []
        assert inspection.fits is False
    else:
        assert inspection.fits is True


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(prompts(), st.integers(1, 300))
def test_a_dropped_context_never_has_higher_effective_priority_than_a_kept_one(p, budget):
    inspection = p.inspect({}, token_budget=budget)
    kept, dropped = _kept_and_dropped(inspection)
    budget_dropped = [d for d in dropped if d.reason == "budget"]
    if budget_dropped and kept:
        assert max(d.effective_priority for d in budget_dropped) <= min(k.effective_priority for k in kept)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(prompts(), st.one_of(st.none(), st.integers(1, 300)))
def test_resolution_is_deterministic(p, budget):
    first = p.inspect({}, token_budget=budget).to_dict()
    assert p.inspect({}, token_budget=budget).to_dict() == first
    assert p.resolve({}, token_budget=budget).system == first["system"]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=8))
def test_excluded_callbacks_are_never_called(spec):
    called: list[str] = []

    def system_for(name):
        def system(i):
            called.append(name)
            return name

        return system

    entries = []
    expected_active = []
    for n, (own_when, wrapped) in enumerate(spec):
        c = context(f"c{n}", system=system_for(f"c{n}"), when=lambda i, v=own_when: v)
        entries.append(when(lambda i, v=wrapped: v, c))
        if own_when and wrapped:
            expected_active.append(f"c{n}")
    inspection = prompt("p", use=entries).inspect()
    assert sorted(called) == sorted(expected_active)
    assert {e.id for e in inspection.excluded_contexts} == {f"c{n}" for n in range(len(spec))} - set(expected_active)
