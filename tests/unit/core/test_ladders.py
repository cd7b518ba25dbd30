"""Ladder constructors: the grammar, capability rules and how ladders resolve."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from crux_devtools import (
    RequestCompositionError,
    ScriptedModel,
    context,
    droppable,
    offload,
    offloadable,
    prefer,
    prompt,
    summarizable,
    summarize,
    tool,
)
from crux_devtools.core.plan.ladders import Offloaded, OutputPolicy, shape
from crux_devtools.core.plan.summaries import ExtractiveStrategy, HierarchicalStrategy


class Sku(BaseModel):
    sku: str


class Ticket(BaseModel):
    ticket_id: str


class Other(BaseModel):
    region: str


lookup = tool("lookup_sku", description="Look up a SKU", parameters=Sku, execute=lambda p: p.sku)
other_tool = tool("other", description="Other", parameters=Sku, execute=lambda p: p.sku)
full = context("catalog", system="The full catalog.", tools=[lookup], input=Ticket)
index = context("catalog-index", system="The catalog index.")
emergency = context("catalog-emergency", system="Call sales.")


def composition_code(fn) -> str:  # noqa: ANN001 - a thunk
    with pytest.raises(RequestCompositionError) as info:
        fn()
    return info.value.code


def test_the_complete_ladder_is_legal_and_takes_apart_into_its_layers() -> None:
    ladder = droppable(offloadable(summarizable(prefer(full, index)), above_tokens=4_000))
    sh = shape(ladder)
    assert sh.sources == (full,)
    assert sh.prefer is not None and sh.prefer.alternatives == (index,)
    assert sh.summary is not None and isinstance(sh.summary.strategy, ExtractiveStrategy)
    assert sh.offload is not None and sh.offload.above_tokens == 4_000
    assert sh.droppable


@pytest.mark.parametrize(
    "build",
    [
        lambda: summarizable(droppable(full)),
        lambda: prefer(prefer(full, index), emergency),
        lambda: summarizable(offloadable(full)),
        lambda: summarizable(summarizable(full)),
        lambda: droppable(droppable(full)),
        lambda: prefer(full, summarizable(index)),
        lambda: offloadable(droppable(full)),
        lambda: offloadable(offloadable(full)),
        lambda: droppable(offloadable()),
        lambda: summarizable([full, droppable(index)]),
    ],
    ids=["summary-of-terminal", "nested-prefer", "offload-back-to-summary", "double-summary", "double-drop", "wrapped-alternative", "offload-of-terminal", "double-offload", "policy-as-source", "list-with-ladder"],
)
def test_every_illegal_nesting_raises_invalid_composition(build) -> None:  # noqa: ANN001
    assert composition_code(build) == "INVALID_COMPOSITION"


def test_a_tool_output_policy_in_use_raises_invalid_composition() -> None:
    assert composition_code(lambda: prompt("p", use=[offloadable(above_tokens=4_000)])) == "INVALID_COMPOSITION"
    assert composition_code(lambda: context("c", use=[offloadable(above_tokens=10)])) == "INVALID_COMPOSITION"


def test_prefer_without_an_alternative_raises_type_error() -> None:
    with pytest.raises(TypeError, match="alternative"):
        prefer(full)


def test_an_alternative_with_a_different_input_model_is_invalid() -> None:
    alt = context("alt", system="x", input=Other)
    assert composition_code(lambda: prefer(full, alt)) == "INVALID_COMPOSITION"


def test_an_alternative_with_a_different_tool_set_is_invalid() -> None:
    alt = context("alt", system="x", tools=[other_tool])
    assert composition_code(lambda: prefer(full, alt)) == "INVALID_COMPOSITION"


def test_an_alternative_with_its_own_nested_use_is_invalid_rather_than_silently_cut() -> None:
    alt = context("catalog-short", system="short", use=[context("detail", system="details")])
    with pytest.raises(RequestCompositionError) as info:
        prefer(full, alt)
    assert info.value.code == "INVALID_COMPOSITION" and info.value.diagnostics[0].contributor == "catalog-short"
    assert "alternative 'catalog-short' has its own use=[...]" in str(info.value)


@pytest.mark.parametrize(
    "wrap",
    [
        lambda src: droppable(src),
        lambda src: droppable([context("sibling", system="s"), src]),
        lambda src: offloadable(src),
        lambda src: summarizable(src),
        lambda src: prefer(src, context("outer-short", system="short")),
    ],
    ids=["droppable", "droppable-list", "offloadable", "summarizable", "prefer-primary"],
)
def test_a_ladder_inside_another_ladders_source_is_invalid(wrap) -> None:
    from crux_devtools import when

    inner = prefer(context("catalog", system="long " * 50), context("catalog-short", system="short"))
    outer = context("outer", system="outer", use=[when(lambda i: True, context("holder", system="h", use=[inner]))])
    with pytest.raises(RequestCompositionError) as info:
        wrap(outer)
    assert info.value.code == "INVALID_COMPOSITION" and info.value.diagnostics[0].contributor == "outer"
    assert "prefer(...) (around 'catalog') inside its use" in str(info.value)
    prompt("beside", use=[outer.use[0].entries[0].use[0], droppable(context("plain", system="p"))])  # beside is fine


def test_an_alternative_that_declares_the_same_tools_and_input_is_legal() -> None:
    alt = context("alt", system="x", tools=[lookup], input=Ticket)
    assert prefer(full, alt).alternatives == (alt,)


def test_a_list_source_is_one_unit_and_its_tool_names_must_not_collide() -> None:
    a = context("a", system="A", tools=[lookup])
    b = context("b", system="B", tools=[tool("lookup_sku", description="Other", parameters=Sku, execute=lambda p: 1)])
    assert composition_code(lambda: summarizable([a, b])) == "INVALID_COMPOSITION"
    unit = summarizable([a, index])
    assert unit.canonical_sources() == (a, index)


def test_strategy_defaults_to_extractive_without_a_model_and_hierarchical_with_one() -> None:
    assert isinstance(summarizable(full).strategy, ExtractiveStrategy)
    assert isinstance(summarizable(full, model=ScriptedModel([])).strategy, HierarchicalStrategy)
    assert composition_code(lambda: summarizable(full, strategy=summarize.hierarchical())) == "INVALID_COMPOSITION"


def test_bad_ladder_options_raise_clear_errors() -> None:
    with pytest.raises(ValueError, match="on_miss"):
        summarizable(full, on_miss="later")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="above_tokens"):
        offloadable(full, above_tokens=0)
    with pytest.raises(TypeError, match="above_tokens"):
        offloadable(above_tokens=True)


def test_offloadable_without_a_source_is_a_tool_output_policy() -> None:
    policy = offloadable(above_tokens=100)
    assert isinstance(policy, OutputPolicy)
    t = tool("fetch", description="x", parameters=Sku, execute=lambda p: p.sku, output=policy)
    assert t.output is policy


def test_offload_wraps_a_value_once() -> None:
    wrapped = offload({"a": 1})
    assert isinstance(wrapped, Offloaded) and offload(wrapped) is wrapped


def test_a_ladder_resolves_to_its_canonical_source_at_full_fidelity() -> None:
    p = prompt("p", system="Own.", use=[droppable(prefer(full, index))])
    inspection = p.inspect({"ticket_id": "t1"})
    assert inspection.system == "Own.\n\nThe full catalog."
    assert inspection.tools == ["lookup_sku"]
    assert "ticket_id" in p.input_model.model_fields


def test_a_ladder_inside_when_is_excluded_with_its_source() -> None:
    from crux_devtools import when

    p = prompt("p", use=[when(lambda i: False, droppable(full))])
    inspection = p.inspect({})
    assert inspection.system == ""
    assert [e.id for e in inspection.excluded_contexts] == ["catalog"]


def test_extractive_summary_is_deterministic_and_shorter() -> None:
    text = "\n\n".join(f"Point {i} is the lead. Detail {i} one. Detail {i} two. Detail {i} three." for i in range(10))
    strategy = summarize.extractive(0.3)
    first = strategy.summarize_text(text)
    assert first == strategy.summarize_text(text)
    assert len(first) < len(text) * 0.5
    assert "Point 0 is the lead." in first and "Point 9 is the lead." in first
