"""A rung rejected because of ``optimize_at`` says so: it is not "over-limit" when it fits under ``max``."""

from __future__ import annotations

from test_planner import catalog_prompt, model

from crux_devtools import InputBudget, preview


def test_a_rung_under_max_but_over_optimize_at_is_rejected_as_over_optimize_at() -> None:
    p = catalog_prompt()
    full = preview(p, input={}, model=model()).input_tokens
    soft = preview(p, input={}, model=model(), input_budget=InputBudget(optimize_at=1200, max=full + 100))
    rows = {(c.contributor, c.representation): c for c in soft.candidates}
    over = rows[("catalog", "full")]
    assert soft.tier == "optimize_at" and soft.input_tokens <= 1200
    assert over.input_tokens is not None and 1200 < over.input_tokens <= soft.max_input_tokens  # the literal facts
    assert over.rejection_reason == "over-optimize-at" and "optimize_at" in (over.detail or "")


def test_a_rung_over_max_is_still_over_limit() -> None:
    p = catalog_prompt()
    full = preview(p, input={}, model=model()).input_tokens
    soft = preview(p, input={}, model=model(), input_budget=InputBudget(optimize_at=1200, max=full + 100))
    with_full = next(c for c in soft.candidates if (c.contributor, c.representation) == ("catalog", "full")).input_tokens
    assert with_full is not None
    tight = preview(p, input={}, model=model(), input_budget=InputBudget(optimize_at=1200, max=with_full - 1))
    over = next(c for c in tight.candidates if (c.contributor, c.representation) == ("catalog", "full"))
    assert over.input_tokens is not None and over.input_tokens > tight.max_input_tokens
    assert over.rejection_reason == "over-limit"
