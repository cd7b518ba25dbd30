"""Input budgets and model capacity: the limits one provider call is planned against.

``InputBudget`` is what an application asks for (a soft ``optimize_at`` watermark and a strict
``max``); ``ModelCapacityProfile`` is what a model can take. ``derive_limits`` combines both into the
numbers the planner uses:

- output reserve = ``max_tokens`` or the profile's default reserve;
- safety margin = 0 / ceil(5%) / ceil(10%) of the window for exact / estimated / conservative;
- capacity = max(0, window - reserve - 32 (provider overhead) - margin);
- effective max = min(budget.max or capacity, capacity);
- effective optimize_at = min(budget.optimize_at or max, max).

Input tokens are compared against these limits without the 32-token provider overhead, which the
capacity already sets aside.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from ..compose.results import _ToDict
from .cache_plan import CachePolicy

CountingConfidence = Literal["exact", "estimated", "conservative"]
COUNTING_CONFIDENCES: tuple[str, ...] = get_args(CountingConfidence)
MAX_SAFE_INTEGER = 2**53 - 1
PROVIDER_OVERHEAD = 32
_MARGIN_PERCENT = {"exact": 0, "estimated": 5, "conservative": 10}

ModelCapacityResolver = Callable[[str], "ModelCapacityProfile | None"]


def _check_positive(owner: str, field: str, value: Any, *, allow_none: bool = True, allow_zero: bool = False) -> None:
    if value is None and allow_none:
        return
    low = 0 if allow_zero else 1
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= MAX_SAFE_INTEGER:
        kind = "a non-negative" if allow_zero else "a positive"
        raise TypeError(f"{owner}.{field} must be {kind} int of at most 2**53-1 (not bool), got {value!r}")


@dataclass(frozen=True, slots=True)
class InputBudget(_ToDict):
    """A soft optimisation watermark and a strict input limit for one provider call (in tokens)."""

    optimize_at: int | None = None
    max: int | None = None

    def __post_init__(self) -> None:
        _check_positive("InputBudget", "optimize_at", self.optimize_at)
        _check_positive("InputBudget", "max", self.max)
        if self.optimize_at is not None and self.max is not None and self.optimize_at > self.max:
            raise TypeError(
                f"InputBudget.optimize_at ({self.optimize_at}) must not exceed InputBudget.max ({self.max}); "
                "lower optimize_at or raise max"
            )


def coerce_input_budget(value: Any) -> InputBudget | None:
    """Accept ``None``, an ``InputBudget`` or a dict ``{"optimize_at", "max"}`` (``optimizeAt`` too)."""
    if value is None or isinstance(value, InputBudget):
        return value
    if isinstance(value, Mapping):
        fields = {"optimize_at": None, "max": None}
        for key, item in value.items():
            name = "optimize_at" if key in ("optimize_at", "optimizeAt") else key
            if name not in fields:
                raise TypeError(f"input_budget has an unknown field {key!r}; allowed: optimize_at, max")
            fields[name] = item
        return InputBudget(**fields)
    raise TypeError(f"input_budget must be an InputBudget, a dict or None, got {type(value).__name__}")


def merge_input_budget(definition: Any, invocation: Any) -> InputBudget | None:
    """Merge two budgets field by field, the invocation winning; ``None`` when both are ``None``.

    Returns a new frozen value and never mutates either input. When the invocation lowers ``max``
    below an inherited ``optimize_at``, the inherited watermark is lowered to the new ``max``
    (tightening is always safe). An invocation ``optimize_at`` above an inherited ``max`` raises
    ``TypeError``: a strict limit is never loosened implicitly.
    """
    base = coerce_input_budget(definition)
    override = coerce_input_budget(invocation)
    if base is None and override is None:
        return None
    base = base or InputBudget()
    override = override or InputBudget()
    limit = override.max if override.max is not None else base.max
    optimize_at = override.optimize_at
    if optimize_at is None:
        optimize_at = base.optimize_at
        if optimize_at is not None and limit is not None and optimize_at > limit:
            optimize_at = limit
    return InputBudget(optimize_at=optimize_at, max=limit)


def check_max_tokens(value: Any) -> int | None:
    """``max_tokens`` (the output length) must be a positive int or ``None``."""
    _check_positive("request", "max_tokens", value)
    return value


@dataclass(frozen=True, slots=True)
class ModelCapacityProfile(_ToDict):
    """What a model can take: its context window, default output reserve and how exact counting is;
    ``cache``: how its requests place prompt-cache breakpoints (None: none, the request as always)."""

    context_window: int
    default_output_reserve: int
    counting_confidence: CountingConfidence = "estimated"
    cache: CachePolicy | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"context_window": self.context_window, "default_output_reserve": self.default_output_reserve, "counting_confidence": self.counting_confidence}
        if self.cache is not None:
            out["cache"] = self.cache.to_dict()
        return out

    def __post_init__(self) -> None:
        _check_positive("ModelCapacityProfile", "context_window", self.context_window, allow_none=False)
        _check_positive("ModelCapacityProfile", "default_output_reserve", self.default_output_reserve, allow_none=False, allow_zero=True)
        if self.cache is not None and not isinstance(self.cache, CachePolicy):
            raise TypeError(f"ModelCapacityProfile.cache must be a CachePolicy or None, got {type(self.cache).__name__}")
        if self.counting_confidence not in COUNTING_CONFIDENCES:
            raise ValueError(
                f"ModelCapacityProfile.counting_confidence must be one of {', '.join(COUNTING_CONFIDENCES)}, "
                f"got {self.counting_confidence!r}"
            )


CONSERVATIVE_MODEL_CAPACITY = ModelCapacityProfile(8192, 2048, "conservative")


def model_name_of(model: Any) -> str | None:
    if model is None or isinstance(model, str):
        return model
    name = getattr(model, "name", None)
    return name if isinstance(name, str) else None


CapacitySource = Literal["model", "profile", "resolver", "conservative"]


def resolve_model_capacity_profile(model: Any, resolver: ModelCapacityResolver | None = None) -> ModelCapacityProfile:
    """The capacity profile of ``model`` (an adapter object, a model name, or a profile itself).

    A model object's own ``capacity`` wins; then ``resolver(name)`` (the argument, else the model's
    ``capacity_resolver``); an unknown model gets ``CONSERVATIVE_MODEL_CAPACITY``.
    """
    return capacity_and_source(model, resolver)[0]


def capacity_and_source(model: Any, resolver: ModelCapacityResolver | None = None) -> tuple[ModelCapacityProfile, CapacitySource]:
    """``resolve_model_capacity_profile`` plus where the profile came from (shown in the inspector)."""
    if isinstance(model, ModelCapacityProfile):
        return model, "profile"
    own = getattr(model, "capacity", None) if not isinstance(model, str) else None
    if own is not None:
        if not isinstance(own, ModelCapacityProfile):
            raise TypeError(f"model {model_name_of(model)!r}: capacity must be a ModelCapacityProfile, got {type(own).__name__}")
        return own, "model"
    resolver = resolver or (getattr(model, "capacity_resolver", None) if not isinstance(model, str) else None)
    name = model_name_of(model)
    if resolver is not None and name is not None:
        profile = resolver(name)
        if profile is not None:
            if not isinstance(profile, ModelCapacityProfile):
                raise TypeError(f"capacity resolver returned {type(profile).__name__} for {name!r}; return a ModelCapacityProfile or None")
            return profile, "resolver"
    return CONSERVATIVE_MODEL_CAPACITY, "conservative"


@dataclass(frozen=True, slots=True)
class Limits(_ToDict):
    """The derived limits of one request (see the module docstring for the formulas)."""

    context_window: int
    output_reserve: int
    safety_margin: int
    overhead: int
    capacity: int
    max_input_tokens: int
    optimize_at: int
    counting_confidence: str


def derive_limits(profile: ModelCapacityProfile, budget: InputBudget | None, max_tokens: int | None) -> Limits:
    """Combine a capacity profile, an input budget and ``max_tokens`` into the planner's limits."""
    window = profile.context_window
    reserve = max_tokens if max_tokens is not None else profile.default_output_reserve
    margin = -(-window * _MARGIN_PERCENT[profile.counting_confidence] // 100)  # integer ceil, no float error
    capacity = max(0, window - reserve - PROVIDER_OVERHEAD - margin)
    budget = budget or InputBudget()
    effective_max = min(budget.max or capacity, capacity)
    optimize_at = min(budget.optimize_at or effective_max, effective_max)
    return Limits(
        context_window=window,
        output_reserve=reserve,
        safety_margin=margin,
        overhead=PROVIDER_OVERHEAD,
        capacity=capacity,
        max_input_tokens=effective_max,
        optimize_at=optimize_at,
        counting_confidence=profile.counting_confidence,
    )
