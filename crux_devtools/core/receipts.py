"""Evidence of request planning: what was considered, what was chosen, and what it cost.

All values are frozen and serialise with ``to_dict()``; none holds contributor content (texts are
never copied here, only ids, rung names and token counts), so receipts are safe to log and show.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from .errors import Diagnostic
from .results import _ToDict

Representation = Literal["full", "authored", "summary", "offload", "omitted"]
RejectionReason = Literal["over-limit", "lower-fidelity", "unprepared", "below-floor", "required-tool"]
REJECTION_REASONS: tuple[str, ...] = ("over-limit", "lower-fidelity", "unprepared", "below-floor", "required-tool")


@dataclass(frozen=True, slots=True)
class Adaptation(_ToDict):
    """One contributor sent at a rung other than ``full``."""

    contributor: str
    representation: Representation
    full_tokens: int
    selected_tokens: int
    variant: str | None = None  # the alternative's context id for ``authored``


@dataclass(frozen=True, slots=True)
class Candidate(_ToDict):
    """One rung of one ladder contributor as the planner considered it.

    ``input_tokens`` is the request's estimated input size had this rung been chosen with every
    other contributor as selected (``None`` when it could not be measured: an unprepared summary).
    ``detail`` says in words why it was rejected.
    """

    contributor: str
    representation: Representation
    available: bool
    selected: bool
    input_tokens: int | None
    rejection_reason: RejectionReason | None
    variant: str | None = None
    tokens: int | None = None
    detail: str | None = None


@dataclass(frozen=True, slots=True)
class Contribution(_ToDict):
    """What one part of the request costs. ``kind``: prompt-system, context, ladder, user-prompt, messages, tools."""

    contributor: str
    kind: str
    representation: str
    tokens: int
    tools: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Receipt(_ToDict):
    """The planning record of one provider call (``Step.request``)."""

    id: str
    model: str | None
    input_tokens: int
    max_input_tokens: int
    optimize_at: int
    measurement: str
    adaptations: list[Adaptation]
    warnings: list[str]
    epoch: int
    previous_request_id: str | None
    candidates: list[Candidate]
    contributions: list[Contribution]
    tools: list[str] = field(default_factory=list)
    tier: str = "optimize_at"


@dataclass(frozen=True, slots=True)
class RequestInspection(_ToDict):
    """A receipt laid out for reading: every candidate, the contributions and a breakdown, largest first."""

    id: str
    model: str | None
    input_tokens: int
    max_input_tokens: int
    optimize_at: int
    epoch: int
    adaptations: list[Adaptation]
    candidates: list[Candidate]
    contributions: list[Contribution]
    breakdown: list[Contribution]
    warnings: list[str]


def breakdown_of(contributions: list[Contribution]) -> list[Contribution]:
    """Contributions sorted by tokens, largest first (stable for ties)."""
    return sorted(contributions, key=lambda c: -c.tokens)


def inspect_request(receipt: Receipt) -> RequestInspection:
    """Lay out a receipt for reading."""
    if not isinstance(receipt, Receipt):
        raise TypeError(f"inspect_request() takes a Receipt (step.request), got {type(receipt).__name__}")
    return RequestInspection(
        id=receipt.id,
        model=receipt.model,
        input_tokens=receipt.input_tokens,
        max_input_tokens=receipt.max_input_tokens,
        optimize_at=receipt.optimize_at,
        epoch=receipt.epoch,
        adaptations=list(receipt.adaptations),
        candidates=list(receipt.candidates),
        contributions=list(receipt.contributions),
        breakdown=breakdown_of(receipt.contributions),
        warnings=list(receipt.warnings),
    )


@dataclass(frozen=True, slots=True)
class RequestPreview(_ToDict):
    """One request planned without calling a model or preparing artifacts (``preview``).

    ``status`` is ``"over-limit"`` when no legal candidate fits ``max``; ``error_code`` and
    ``diagnostics`` then say why (what ``generate`` would raise).
    """

    status: Literal["fits", "over-limit"]
    model: str | None
    input_tokens: int
    max_input_tokens: int
    optimize_at: int
    adaptations: list[Adaptation]
    candidates: list[Candidate]
    tools: list[str]
    warnings: list[str]
    measurement: str
    context_window: int
    output_reserve: int
    safety_margin: int
    overhead: int
    counting_confidence: str
    contributions: list[Contribution]
    breakdown: list[Contribution]
    tier: str | None = None
    error_code: str | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
