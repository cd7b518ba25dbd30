"""A request that fits nowhere is explained by a breakdown that adds up to its headline figure.

The cheapest request counts every tool it would offer, the ``read_offload`` support tool an offload
rung brings included: its diagnostics must sum to ``input_tokens`` (the figure the message names).
"""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from crux_devtools import InputBudget, RequestCompositionError, ScriptedModel, context, generate, offloadable, preview, prompt, tool


class Query(BaseModel):
    q: str


search = tool("search", description="Search the catalog", parameters=Query, execute=lambda p: {"hits": []})
CATALOG = " ".join(f"Item {i} costs {i} dollars." for i in range(800))


def too_large() -> object:
    return prompt(
        "p", system="You are support.", prompt="Where is my parcel?",
        use=[context("rules", system="Be kind. " * 200), offloadable(context("catalog", system=CATALOG)), context("searching", system="Use search.", tools=[search])],
    )


def test_the_diagnostics_of_a_request_too_large_add_up_to_its_headline_read_offload_included() -> None:
    planned = preview(too_large(), input={}, model=ScriptedModel([]), input_budget=InputBudget(max=300))
    assert planned.status == "over-limit" and planned.error_code == "REQUEST_TOO_LARGE"
    assert sum(d.tokens or 0 for d in planned.diagnostics) == planned.input_tokens
    assert any(c.representation == "offload" and c.contributor == "catalog" for c in planned.candidates)  # read_offload is offered
    assert f"the cheapest needs about {planned.input_tokens} tokens" in planned.warnings[0]


def test_generate_refuses_with_the_same_breakdown() -> None:
    with pytest.raises(RequestCompositionError) as refused:
        generate(too_large(), input={}, model=ScriptedModel(["never sent"]), input_budget=InputBudget(max=300))
    planned = preview(too_large(), input={}, model=ScriptedModel([]), input_budget=InputBudget(max=300))
    diagnostics = refused.value.diagnostics
    assert sum(d.tokens or 0 for d in diagnostics) == planned.input_tokens


def test_where_the_parts_join_the_difference_is_its_own_labelled_line_so_the_sum_still_holds() -> None:
    # counted alone, these parts take one token more than the system text counted whole
    p = prompt("p", system="Be kind.", use=[context("c1", system="x" * 50), context("c2", system="Be kind." + "x" * 50)])
    planned = preview(p, input={}, model=ScriptedModel([]), input_budget=InputBudget(max=5))
    parts = [d for d in planned.diagnostics if d.contributor != "<joins>"]
    joins = [d for d in planned.diagnostics if d.contributor == "<joins>"]
    assert sum(d.tokens or 0 for d in parts) != planned.input_tokens  # the case: a difference at the joins
    assert len(joins) == 1 and "where they join" in joins[0].message
    assert sum(d.tokens or 0 for d in planned.diagnostics) == planned.input_tokens
