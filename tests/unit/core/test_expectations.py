"""Expectations on examples: built with their line, checked at build time, judged by one evaluator.

The facts come from real inspections and previews (``to_dict()``), as the worker's report holds them.
"""

from __future__ import annotations

import inspect

import pytest

from crux_devtools import ModelCapacityProfile, context, droppable, example, expect, prefer, preview, prompt, tool
from crux_devtools.core.plan.expectations import PlanFacts, Vocabulary, evaluate, result_line
from pydantic import BaseModel


class Sku(BaseModel):
    sku: str


lookup = tool("lookup_sku", description="Look up a SKU.", parameters=Sku, execute=lambda a: {})
style = context("style-examples", system="Example one. " * 20, priority=45)
brand = context("brand-voice", system="Calm and exact. " * 20, priority=30)
catalog = droppable(prefer(context("catalog", system="Item. " * 400, tools=[lookup], priority=70), context("catalog-index", system="Index.")))


def report_of(p, data, **plan):
    """An ``ExampleReport``-like dict of one input: the inspection and the plan, as the worker makes them."""
    inspection = p.inspect(data).to_dict()
    planned = preview(p, input=data, model=ModelCapacityProfile(plan.get("window", 100_000), 0, "exact")).to_dict()
    return {"name": "x", "status": "fits", "inspection": inspection, "preview": planned, "error": None, "preview_error": None}


def judge(p, e, data=None, cache=None, **plan):
    return evaluate(e, PlanFacts.from_report(report_of(p, data or {}, **plan), cache), Vocabulary.of(p))


def test_each_expectation_remembers_the_line_that_wrote_it() -> None:
    here = inspect.currentframe().f_lineno  # type: ignore[union-attr]
    built = (expect()
             .includes("a", "b")
             .tokens(max=3))
    assert [(i.text, i.line) for i in built.items] == [("includes('a')", here + 2), ("includes('b')", here + 2), ("tokens(max=3)", here + 3)]
    assert all(i.file == __file__ for i in built.items)


def test_contradictory_or_meaningless_bounds_are_refused_when_written() -> None:
    with pytest.raises(ValueError, match="min is greater than max"):
        expect().tokens(min=900, max=800)
    with pytest.raises(TypeError, match="needs min=, max= or both"):
        expect().tokens()
    with pytest.raises(TypeError, match="non-negative int"):
        expect().tokens(max=True)
    with pytest.raises(ValueError, match="unknown rung; use one of full, authored, summary, offload, omitted"):
        expect().rung("catalog", "short")
    with pytest.raises(ValueError, match="unknown status"):
        expect().status("ok")
    with pytest.raises(TypeError, match="at least one id"):
        expect().includes()
    with pytest.raises(TypeError, match="built with expect"):
        example({}, expect={"includes": "x"})  # type: ignore[arg-type]


def test_a_prompt_keeps_inputs_as_dicts_and_the_expectations_beside_them() -> None:
    p = prompt("p", system="S", use=[style], examples={"one": example({"a": 1}, expect=expect().includes("style-examples")), "two": {}})
    assert p.examples == {"one": {"a": 1}, "two": {}}
    assert list(p.expectations) == ["one"]


def test_a_budget_drop_fails_includes_with_the_planners_reason() -> None:
    p = prompt("b", system="You help.", use=[style, brand], token_budget=150, prompt="hi")
    results = judge(p, expect().includes("brand-voice").includes("style-examples").excludes("brand-voice").dropped("brand-voice", reason="budget"))
    assert [r.state for r in results] == ["failed", "held", "held", "held"]
    assert results[0].held == "`brand-voice` dropped (budget)"
    assert results[0].reason == "`brand-voice` left: budget 150, priority 30 < `style-examples` 45"
    line = result_line(results[0].to_dict())
    assert line.endswith("expect().includes('brand-voice') does not hold: `brand-voice` dropped (budget); `brand-voice` left: budget 150, priority 30 < `style-examples` 45")


def test_names_the_prompt_does_not_have_are_invalid_with_a_did_you_mean_never_passed() -> None:
    p = prompt("b", system="You help.", use=[style, catalog], prompt="hi")
    results = judge(p, expect().excludes("brand-vocie").rung("catalogue", "full").rung("style-examples", "full")
                    .rung("catalog", "summary").tool("lookup_skus").no_tool("nothing"))
    assert [r.state for r in results] == ["invalid"] * 6
    reasons = [r.reason for r in results]
    assert reasons[0].startswith("the prompt has no context 'brand-vocie'")
    assert "did you mean 'catalog'?" in reasons[1]
    assert reasons[2].startswith("`style-examples` is a plain context, always sent in full")
    assert reasons[3] == "the ladder of `catalog` has no rung 'summary' (it has: full, authored, omitted)"
    assert "did you mean 'lookup_sku'?" in reasons[4]
    assert results[5].state == "invalid"  # an unknown tool is an error even where "not offered" would be true


def test_rungs_tools_and_tokens_are_judged_from_the_plan() -> None:
    p = prompt("b", system="You help.", use=[style, catalog], prompt="hi")
    roomy = judge(p, expect().rung("catalog", "full").tool("lookup_sku").tokens(min=100).status("fits"))
    assert [r.state for r in roomy] == ["held"] * 4
    tight = judge(p, expect().rung("catalog", "full").tool("lookup_sku").tokens(max=100), window=700)
    assert [r.state for r in tight] == ["failed", "held", "failed"]
    assert tight[0].held == "`catalog` sent as authored"
    assert tight[0].reason.startswith("`catalog` full rejected: over-limit")
    assert tight[2].held.endswith("input tokens") and tight[2].reason.startswith("largest parts: ")
    big_index = droppable(prefer(context("catalog", system="Item. " * 400, tools=[lookup], priority=70), context("catalog-index", system="Index. " * 40)))
    p = prompt("b", system="You help.", use=[big_index], prompt="hi")
    gone = judge(p, expect().tool("lookup_sku").no_tool("lookup_sku").excludes("catalog").dropped("catalog", reason="omitted"), window=60)
    assert [r.state for r in gone] == ["failed", "held", "held", "held"]
    assert gone[0].reason.startswith("`catalog` omitted by the planner: ")


def test_the_cacheable_prefix_is_judged_against_the_figure_given() -> None:
    p = prompt("b", system="You help.", use=[style], prompt="hi")
    assert [r.state for r in judge(p, expect().cacheable_prefix(min=50), cache=64)] == ["held"]
    failed = judge(p, expect().cacheable_prefix(min=65), cache=64)[0]
    assert (failed.state, failed.held) == ("failed", "cacheable prefix 64 tokens")


def test_an_example_that_did_not_plan_reports_its_expectations_as_not_checked() -> None:
    p = prompt("b", system="You help.", use=[style], prompt="hi")
    report = {"name": "x", "status": "invalid-input", "inspection": None, "preview": None,
              "error": {"type": "InputValidationError", "message": "unknown field 'mesage'", "file": None, "line": None, "traceback": ""},
              "preview_error": None}
    results = evaluate(expect().includes("style-examples").status("fits").status("invalid-input"), PlanFacts.from_report(report), Vocabulary.of(p))
    assert [r.state for r in results] == ["unplanned", "failed", "held"]
    assert results[0].reason == "the example did not plan (InputValidationError: unknown field 'mesage')"
