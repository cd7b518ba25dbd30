"""Defining contexts, prompts and tools: what is accepted and what is rejected with a clear error."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from crux_devtools import RequestCompositionError, context, match, prompt, tool, when


class Args(BaseModel):
    q: str


def _tool(name: str):
    return tool(name, description="d", parameters=Args, execute=lambda a: a.q)


@pytest.mark.parametrize("bad", ["", "   ", None, 3])
def test_empty_or_non_string_context_id_is_rejected(bad):
    with pytest.raises(ValueError, match="non-empty string"):
        context(bad, system="x")


@pytest.mark.parametrize("bad", [-1, 101, 50.0, True, "high"])
def test_invalid_priority_names_the_context_and_the_allowed_range(bad):
    with pytest.raises(ValueError) as info:
        context("rules", priority=bad)
    assert "'rules'" in str(info.value) and "0 to 100" in str(info.value) and repr(bad) in str(info.value)


def test_priority_bounds_are_inclusive():
    assert context("low", priority=0).priority == 0
    assert context("high", priority=100).priority == 100


def test_default_priority_is_fifty():
    assert context("c").priority == 50


def test_system_must_be_text_or_callback():
    with pytest.raises(TypeError, match="system must be a string or a callback"):
        context("c", system=42)


def test_input_must_be_a_pydantic_model():
    with pytest.raises(TypeError, match="pydantic BaseModel"):
        context("c", input=dict)


def test_use_rejects_objects_that_are_not_entries():
    with pytest.raises(TypeError, match="use entries must be"):
        prompt("p", use=["not a context"])


def test_falsy_entries_in_use_are_ignored():
    rules = context("rules", system="R")
    p = prompt("p", system="S", use=[None, False, rules, False and rules])
    assert p.use == (rules,)
    assert p.resolve().system == "S\n\nR"


def test_duplicate_context_ids_in_one_prompt_are_an_invalid_composition():
    a = context("dup", system="A")
    b = context("dup", system="B")
    with pytest.raises(RequestCompositionError) as info:
        prompt("p", use=[a, context("outer", use=[b])])
    assert info.value.code == "INVALID_COMPOSITION"
    assert "'dup'" in str(info.value)
    assert info.value.diagnostics[0].contributor == "dup"


def test_duplicate_ids_across_match_branches_are_rejected_too():
    with pytest.raises(RequestCompositionError):
        prompt("p", use=[match(lambda i: "a", {"a": context("x"), "b": context("x")})])


def test_two_different_tools_with_one_name_are_an_invalid_composition():
    with pytest.raises(RequestCompositionError) as info:
        prompt("p", use=[context("a", tools=[_tool("search")]), context("b", tools=[_tool("search")])])
    assert info.value.code == "INVALID_COMPOSITION" and "'search'" in str(info.value)


def test_the_same_tool_object_on_two_contexts_is_fine():
    t = _tool("search")
    p = prompt("p", use=[context("a", tools=[t]), context("b", tools=[t])])
    assert list(p.resolve().tools) == ["search"]


def test_tools_may_be_given_as_a_mapping():
    t = _tool("search")
    assert context("a", tools={"search": t}).tools == (t,)


def test_tool_parameters_must_be_a_pydantic_model():
    with pytest.raises(TypeError, match="pydantic BaseModel"):
        tool("t", description="d", parameters=dict, execute=print)


def test_tool_exposes_its_fields():
    t = _tool("search")
    assert (t.name, t.description, t.parameters, t.output) == ("search", "d", Args, None)
    assert t.execute(Args(q="hi")) == "hi"


def test_when_and_match_need_callbacks():
    with pytest.raises(TypeError):
        when("yes", context("c"))
    with pytest.raises(TypeError):
        match("mode", {"a": context("c")})
    with pytest.raises(TypeError):
        match(lambda i: "a", {})


def test_examples_must_be_a_mapping_of_input_dicts():
    with pytest.raises(TypeError, match="example 'bad' must be an input dict"):
        prompt("p", examples={"bad": "text"})
