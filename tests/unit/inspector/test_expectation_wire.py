"""Expectation results cross the worker boundary as one typed shape, checked where they arrive."""

from __future__ import annotations

import dataclasses
import json
import typing

import pytest

from crux_devtools import context, example, expect, prompt
from crux_devtools import shapes
from crux_devtools.core.plan.expectations import ExpectationResult, PlanFacts, Vocabulary, evaluate
from crux_devtools.inspector.transport.wire import MalformedReport, check

STYLE = context("style-examples", system="Example one. " * 20, priority=45)
BRAND = context("brand-voice", system="Calm and exact. " * 20, priority=30)


def results() -> list[dict]:
    p = prompt("b", system="You help.", use=[STYLE, BRAND], token_budget=150, prompt="hi",
               examples={"x": example({}, expect=expect().includes("brand-voice").status("fits").tool("nope"))})
    report = {"status": "fits", "inspection": p.inspect({}).to_dict(), "preview": None, "error": None, "preview_error": None}
    return json.loads(json.dumps([r.to_dict() for r in evaluate(p.expectations["x"], PlanFacts.from_report(report), Vocabulary.of(p))]))


def test_a_result_and_its_shape_name_the_same_fields() -> None:
    fields = [f.name for f in dataclasses.fields(ExpectationResult)]
    assert fields == list(typing.get_type_hints(shapes.ExpectationResultDict))


def test_real_results_pass_the_check_of_an_example_report_and_a_malformed_one_is_refused_by_path() -> None:
    found = results()
    assert [r["state"] for r in found] == ["unplanned", "held", "invalid"]
    for r in found:
        check(shapes.ExpectationResultDict, r, "result")
    broken = [dict(found[0], state="passed")]
    with pytest.raises(MalformedReport, match=r"example\.expectations\[0\]\.state"):
        check(typing.List[shapes.ExpectationResultDict], broken, "example.expectations")  # noqa: UP006
    with pytest.raises(MalformedReport, match="line"):
        check(shapes.ExpectationResultDict, {k: v for k, v in found[0].items() if k != "line"}, "result")


def test_an_example_report_carries_its_results_through_json_and_the_check_reads_them(tmp_path) -> None:
    from crux_devtools.inspector.worker.evaluate import evaluate_example
    from crux_devtools.inspector.worker.imports import Target

    p = prompt("b", system="You help.", use=[STYLE, BRAND], token_budget=150, prompt="hi",
               examples={"x": example({}, expect=expect().includes("brand-voice")), "plain": {}})
    target = Target("b", "prompt", p, "m", "m.py", 1)
    report = json.loads(json.dumps(evaluate_example(tmp_path, target, "x", {})))
    assert check(shapes.ExampleReport, report, "example") is report
    assert [(r["expect"], r["state"], r["reason"]) for r in report["expectations"]] == [
        ("includes('brand-voice')", "failed", "`brand-voice` left: budget 150, priority 30 < `style-examples` 45")
    ]
    assert "expectations" not in evaluate_example(tmp_path, target, "plain", {})  # a plain dict example has none
    assert "expectations" not in evaluate_example(tmp_path, target, "x", {"other": 1})  # nor a custom input
    report["expectations"][0]["state"] = "passed"
    with pytest.raises(MalformedReport, match=r"expectations\[0\]\.state"):
        check(shapes.ExampleReport, report, "example")
