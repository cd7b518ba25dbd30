"""Input budgets, capacity profiles and the limits derived from them."""

from __future__ import annotations

import dataclasses

import pytest

from crux_devtools import (
    CONSERVATIVE_MODEL_CAPACITY,
    InputBudget,
    ModelCapacityProfile,
    ScriptedModel,
    merge_input_budget,
    resolve_model_capacity_profile,
)
from crux_devtools.core.plan.budget import derive_limits


@pytest.mark.parametrize("field", ["optimize_at", "max"])
@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "10", 2**53])
def test_a_bad_budget_value_raises_type_error_naming_the_field(field: str, bad: object) -> None:
    with pytest.raises(TypeError, match=field):
        InputBudget(**{field: bad})


def test_optimize_at_above_max_raises_type_error() -> None:
    with pytest.raises(TypeError, match="optimize_at"):
        InputBudget(optimize_at=200, max=100)


def test_the_largest_safe_integer_is_accepted() -> None:
    assert InputBudget(max=2**53 - 1).max == 2**53 - 1


def test_budgets_are_frozen() -> None:
    budget = InputBudget(max=10)
    with pytest.raises(dataclasses.FrozenInstanceError):
        budget.max = 20  # type: ignore[misc]


def test_merge_takes_the_invocation_field_by_field_and_mutates_neither() -> None:
    definition = InputBudget(optimize_at=18_000, max=28_000)
    invocation = InputBudget(max=22_000)
    merged = merge_input_budget(definition, invocation)
    assert merged == InputBudget(optimize_at=18_000, max=22_000)
    assert merged is not definition and merged is not invocation
    assert definition == InputBudget(optimize_at=18_000, max=28_000)
    assert invocation == InputBudget(max=22_000)


def test_merge_of_two_nones_is_none_and_dicts_are_accepted() -> None:
    assert merge_input_budget(None, None) is None
    assert merge_input_budget({"optimize_at": 5}, None) == InputBudget(optimize_at=5)
    assert merge_input_budget(None, {"max": 9}) == InputBudget(max=9)


def test_a_lower_invocation_max_lowers_the_inherited_watermark() -> None:
    assert merge_input_budget(InputBudget(optimize_at=500, max=900), InputBudget(max=100)) == InputBudget(optimize_at=100, max=100)


def test_an_invocation_watermark_above_the_inherited_max_raises_type_error() -> None:
    with pytest.raises(TypeError, match="optimize_at"):
        merge_input_budget(InputBudget(max=100), InputBudget(optimize_at=500))


def test_a_dict_budget_with_an_unknown_field_raises_type_error() -> None:
    with pytest.raises(TypeError, match="maximum"):
        merge_input_budget({"maximum": 3}, None)


def test_the_conservative_profile_is_as_specified() -> None:
    assert CONSERVATIVE_MODEL_CAPACITY == ModelCapacityProfile(8192, 2048, "conservative")


def test_an_unknown_model_with_no_budget_has_max_5292() -> None:
    limits = derive_limits(resolve_model_capacity_profile(ScriptedModel([])), None, None)
    assert limits.max_input_tokens == 5292
    assert limits.optimize_at == 5292
    assert (limits.safety_margin, limits.overhead, limits.output_reserve) == (820, 32, 2048)


@pytest.mark.parametrize(("confidence", "margin"), [("exact", 0), ("estimated", 500), ("conservative", 1000)])
def test_safety_margin_depends_on_counting_confidence(confidence: str, margin: int) -> None:
    limits = derive_limits(ModelCapacityProfile(10_000, 1_000, confidence), None, None)  # type: ignore[arg-type]
    assert limits.safety_margin == margin
    assert limits.capacity == 10_000 - 1_000 - 32 - margin


def test_safety_margin_rounds_up() -> None:
    assert derive_limits(ModelCapacityProfile(1001, 0, "estimated"), None, None).safety_margin == 51


def test_max_tokens_replaces_the_default_output_reserve() -> None:
    limits = derive_limits(ModelCapacityProfile(10_000, 1_000, "exact"), None, 3_000)
    assert limits.output_reserve == 3_000
    assert limits.capacity == 10_000 - 3_000 - 32


def test_budget_max_is_capped_by_capacity_and_optimize_at_by_max() -> None:
    profile = ModelCapacityProfile(10_000, 1_000, "exact")
    assert derive_limits(profile, InputBudget(max=50_000), None).max_input_tokens == 8_968
    limits = derive_limits(profile, InputBudget(optimize_at=4_000, max=6_000), None)
    assert (limits.optimize_at, limits.max_input_tokens) == (4_000, 6_000)
    assert derive_limits(profile, InputBudget(optimize_at=9_000), None).optimize_at == 8_968


def test_capacity_never_goes_below_zero() -> None:
    assert derive_limits(ModelCapacityProfile(100, 90, "exact"), None, None).capacity == 0


def test_a_model_own_capacity_wins_over_the_resolver() -> None:
    own = ModelCapacityProfile(128_000, 16_384, "estimated")
    other = ModelCapacityProfile(4_000, 100, "exact")
    model = ScriptedModel([], name="acme-long", capacity=own)
    assert resolve_model_capacity_profile(model, lambda name: other) is own


def test_the_resolver_is_used_by_name_and_unknown_models_get_the_conservative_profile() -> None:
    profile = ModelCapacityProfile(128_000, 16_384, "estimated")

    def resolver(name: str) -> ModelCapacityProfile | None:
        return profile if name.startswith("acme-long") else None

    assert resolve_model_capacity_profile(ScriptedModel([], name="acme-long-1"), resolver) is profile
    assert resolve_model_capacity_profile(ScriptedModel([], name="other"), resolver) is CONSERVATIVE_MODEL_CAPACITY
    assert resolve_model_capacity_profile("acme-long-2", resolver) is profile
    assert resolve_model_capacity_profile(None) is CONSERVATIVE_MODEL_CAPACITY


def test_a_profile_with_a_bad_window_raises_type_error() -> None:
    with pytest.raises(TypeError, match="context_window"):
        ModelCapacityProfile(0, 10, "exact")
    with pytest.raises(ValueError, match="counting_confidence"):
        ModelCapacityProfile(100, 10, "sure")  # type: ignore[arg-type]


def test_budget_and_profile_serialise_to_plain_dicts() -> None:
    assert InputBudget(optimize_at=1, max=2).to_dict() == {"optimize_at": 1, "max": 2}
    assert CONSERVATIVE_MODEL_CAPACITY.to_dict() == {"context_window": 8192, "default_output_reserve": 2048, "counting_confidence": "conservative"}
