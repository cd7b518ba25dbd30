"""Resolution: conditional filtering, use order, nesting, concatenation, tools, callbacks."""

from __future__ import annotations

import asyncio
import json

import pytest
from pydantic import BaseModel

from crux_devtools import CallbackError, context, match, prompt, tool, when


class Args(BaseModel):
    q: str = ""


def _tool(name: str):
    return tool(name, description=f"{name} tool", parameters=Args, execute=lambda a: a.q)


class Mode(BaseModel):
    mode: str | None = None
    flag: bool = False


def test_prompt_text_comes_first_then_contexts_in_use_order_joined_by_a_blank_line():
    p = prompt("p", system="P", use=[context("a", system="A"), context("b", system="B")])
    assert p.resolve().system == "P\n\nA\n\nB"


def test_nested_contexts_come_before_their_owner():
    inner = context("inner", system="I")
    outer = context("outer", system="O", use=[inner])
    p = prompt("p", system="P", use=[outer, context("after", system="Z")])
    assert p.resolve().system == "P\n\nI\n\nO\n\nZ"
    assert [part.source for part in p.inspect().parts] == ["<prompt>", "inner", "outer", "after"]
    assert p.inspect().parts[1].owner == "outer"


def test_empty_blocks_add_nothing():
    p = prompt("p", system="", use=[context("a", system=""), context("b", system="B"), context("c")])
    assert p.resolve().system == "B"


def test_prompt_part_is_always_present_even_when_empty():
    part = prompt("p", use=[context("a", system="A")]).inspect().parts[0]
    assert (part.source, part.kind, part.text, part.status) == ("<prompt>", "prompt", "", "active")


def test_user_prompt_may_be_text_or_a_callback():
    class M(BaseModel):
        message: str

    assert prompt("p", prompt="static").resolve().prompt == "static"
    assert prompt("p", input=M, prompt=lambda i: i.message.upper()).resolve({"message": "hi"}).prompt == "HI"
    assert prompt("p").resolve().prompt is None


def test_context_with_false_when_is_excluded_with_its_reason():
    p = prompt("p", input=Mode, use=[context("c", system="C", when=lambda i: i.flag)])
    inspection = p.inspect({})
    assert inspection.system == ""
    assert [(e.id, e.reason) for e in inspection.excluded_contexts] == [("c", "when")]
    assert inspection.parts[1].status == "excluded" and inspection.parts[1].tokens == 0


def test_when_wrapper_excludes_its_entries_with_reason_when_wrapper():
    p = prompt("p", input=Mode, use=[when(lambda i: i.flag, [context("a", system="A"), context("b", system="B")])])
    assert p.resolve({"flag": True}).system == "A\n\nB"
    excluded = p.inspect({"flag": False}).excluded_contexts
    assert [(e.id, e.reason) for e in excluded] == [("a", "when-wrapper"), ("b", "when-wrapper")]
    assert "'p'" in excluded[0].detail


def test_match_keeps_only_the_selected_branch_and_says_which_key_was_selected():
    p = prompt(
        "p",
        input=Mode,
        use=[match(lambda i: i.mode or "draft", {"draft": context("d", system="D"), "review": [context("r1", system="R1"), context("r2", system="R2")]})],
    )
    assert p.resolve({"mode": "review"}).system == "R1\n\nR2"
    inspection = p.inspect({})
    assert inspection.system == "D"
    assert [(e.id, e.reason) for e in inspection.excluded_contexts] == [("r1", "match"), ("r2", "match")]
    assert "'draft'" in inspection.excluded_contexts[0].detail and "'review'" in inspection.excluded_contexts[0].detail


def test_match_key_without_a_case_selects_nothing():
    p = prompt("p", input=Mode, use=[match(lambda i: i.mode, {"a": context("a", system="A")})])
    inspection = p.inspect({"mode": "zzz"})
    assert inspection.system == ""
    assert "no case" in inspection.excluded_contexts[0].detail


def test_contexts_nested_under_an_excluded_context_are_excluded_as_parent_excluded():
    deep = context("deep", system="D")
    mid = context("mid", system="M", use=[deep])
    gate = context("gate", system="G", when=lambda i: False, use=[mid, when(lambda i: True, context("w", system="W"))])
    inspection = prompt("p", use=[gate]).inspect()
    assert [(e.id, e.reason) for e in inspection.excluded_contexts] == [
        ("deep", "parent-excluded"),
        ("mid", "parent-excluded"),
        ("w", "parent-excluded"),
        ("gate", "when"),
    ]


def test_excluded_contexts_are_never_resolved_and_their_callbacks_never_called():
    calls: list[str] = []

    def system(i):
        calls.append("system")
        return "X"

    inner = context("inner", system=system)
    excluded = context("x", system=system, when=lambda i: False, use=[inner])
    p = prompt("p", use=[excluded, when(lambda i: False, context("y", system=system)), match(lambda i: "none", {"k": context("z", system=system)})])
    p.inspect()
    p.resolve()
    assert calls == []


def test_each_active_system_callback_is_called_exactly_once_per_resolve():
    calls: list[str] = []

    def tracked(name):
        def system(i):
            calls.append(name)
            return name

        return system

    inner = context("inner", system=tracked("inner"))
    p = prompt("p", system=tracked("p"), use=[context("outer", system=tracked("outer"), use=[inner])])
    p.inspect()
    assert sorted(calls) == ["inner", "outer", "p"]
    assert calls.index("inner") < calls.index("outer")


def test_the_same_context_object_reached_twice_contributes_once_at_its_first_position():
    shared = context("shared", system="S")
    p = prompt("p", use=[context("a", system="A", use=[shared]), shared, context("b", system="B")])
    assert p.resolve().system == "S\n\nA\n\nB"
    assert [part.source for part in p.inspect().parts] == ["<prompt>", "shared", "a", "b"]


def test_a_context_excluded_in_one_place_but_active_in_another_is_active():
    shared = context("shared", system="S")
    p = prompt("p", use=[when(lambda i: False, shared), shared])
    inspection = p.inspect()
    assert inspection.system == "S" and inspection.excluded_contexts == []


def test_tools_of_active_contexts_are_inherited_and_of_excluded_ones_are_not():
    p = prompt(
        "p",
        tools=[_tool("own")],
        use=[context("on", tools=[_tool("lookup")]), context("off", when=lambda i: False, tools=[_tool("hidden")])],
    )
    assert list(p.resolve().tools) == ["own", "lookup"]
    inspection = p.inspect()
    assert inspection.tools == ["lookup", "own"]
    assert inspection.tool_sources == {"lookup": "on", "own": "<prompt>"}


def test_a_budget_dropped_context_takes_its_tools_with_it():
    p = prompt("p", system="P", use=[context("big", system="word " * 200, priority=1, tools=[_tool("gone")])])
    inspection = p.inspect(token_budget=5)
    assert inspection.dropped_contexts[0].id == "big"
    assert inspection.tools == [] and p.resolve(token_budget=5).tools == {}
    assert p.inspect().tools == ["gone"]


def test_async_callbacks_work_in_the_sync_and_the_async_api():
    async def system(i):
        await asyncio.sleep(0)
        return "async text"

    async def predicate(i):
        return True

    p = prompt("p", use=[context("a", system=system, when=predicate)])
    assert p.resolve().system == "async text"
    assert asyncio.run(p.aresolve()).system == "async text"
    assert asyncio.run(p.ainspect()).system == "async text"


async def test_sync_api_inside_a_running_loop_with_async_callbacks_says_to_use_the_async_form():
    async def system(i):
        return "x"

    p = prompt("p", use=[context("a", system=system)])
    with pytest.raises(CallbackError, match="ainspect"):
        p.inspect()
    assert (await p.ainspect()).system == "x"


def test_a_callback_that_raises_names_the_context_and_keeps_the_original_as_cause():
    def boom(i):
        raise KeyError("brand profile")

    p = prompt("p", use=[context("brand", system=boom)])
    with pytest.raises(CallbackError) as info:
        p.resolve()
    assert "'brand'" in str(info.value) and "system" in str(info.value) and "KeyError" in str(info.value)
    assert isinstance(info.value.__cause__, KeyError)


def test_a_failing_when_predicate_names_the_context():
    def bad(i):
        raise ValueError("nope")

    with pytest.raises(CallbackError, match="'gated': when callback"):
        prompt("p", use=[context("gated", when=bad)]).resolve()


def test_a_callback_returning_a_non_string_names_the_context_and_the_type():
    p = prompt("p", use=[context("count", system=lambda i: 42)])
    with pytest.raises(CallbackError) as info:
        p.resolve()
    assert "'count'" in str(info.value) and "int" in str(info.value) and "expected str" in str(info.value)


def test_inspection_to_dict_is_plain_json():
    p = prompt("p", system="P", tools=[_tool("t")], use=[context("a", system="A"), context("b", when=lambda i: False)])
    data = p.inspect(token_budget=100).to_dict()
    assert json.loads(json.dumps(data)) == data
    assert data["parts"][1] | {} == data["parts"][1] and data["parts"][1]["source"] == "a"
    assert data["excluded_contexts"] == [{"id": "b", "reason": "when", "detail": "its when(...) returned False"}]
    assert data["fits"] is True and data["token_budget"] == 100


def test_resolved_to_dict_serialises_tools_and_input():
    class M(BaseModel):
        message: str

    data = prompt("p", input=M, tools=[_tool("t")], prompt=lambda i: i.message).resolve({"message": "m"}).to_dict()
    assert data["input"] == {"message": "m"}
    assert data["tools"]["t"]["name"] == "t"
    json.dumps(data)
