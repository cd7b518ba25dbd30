"""Evidence of request planning: what was considered, what was chosen, and what it cost.

All values are frozen and serialise with ``to_dict()``. Receipts, candidates and contributions hold
no contributor content (only ids, rung names, token counts and offsets), so they are safe to log;
the literal request lives beside them, in ``RequestPreview.sent`` and ``Step.sent``, and a
``Contribution.span`` says which characters of that request's system text each part is.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from crux_devtools.shapes import AdaptationDict, CandidateDict, ContributionDict, PreviewDict, ReceiptDict

from ..errors import Diagnostic
from ..compose.results import Drop, _ToDict
from .rungs import RejectionReason, RungName

if TYPE_CHECKING:
    from ..contract import ModelRequest



@dataclass(frozen=True, slots=True)
class Adaptation:
    """One contributor sent at a rung other than ``full``."""

    contributor: str
    representation: RungName
    full_tokens: int
    selected_tokens: int
    variant: str | None = None  # the alternative's context id for ``authored``

    def to_dict(self) -> AdaptationDict:
        return {
            "contributor": self.contributor, "representation": self.representation, "full_tokens": self.full_tokens,
            "selected_tokens": self.selected_tokens, "variant": self.variant,
        }


@dataclass(frozen=True, slots=True)
class Candidate:
    """One rung of one ladder contributor as the planner considered it.

    ``input_tokens`` is the request's estimated input size had this rung been chosen with every
    other contributor as selected (``None`` when it could not be measured: an unprepared summary).
    ``detail`` says in words why it was rejected.
    """

    contributor: str
    representation: RungName
    available: bool
    selected: bool
    input_tokens: int | None
    rejection_reason: RejectionReason | None
    variant: str | None = None
    tokens: int | None = None
    detail: str | None = None

    def to_dict(self) -> CandidateDict:
        return {
            "contributor": self.contributor, "representation": self.representation, "available": self.available,
            "selected": self.selected, "input_tokens": self.input_tokens, "rejection_reason": self.rejection_reason,
            "variant": self.variant, "tokens": self.tokens, "detail": self.detail,
        }


@dataclass(frozen=True, slots=True)
class Contribution:
    """What one part of the request costs. ``kind``: prompt-system, context, ladder, user-prompt, messages, tools.

    ``span`` is ``(start, end)``: the part's characters in the sent system text (``None`` for parts
    outside it, and for an omitted rung). ``variant`` names the ``prefer`` alternative sent for an
    ``authored`` rung; ``handle`` is the offload handle of an ``offload`` rung.
    """

    contributor: str
    kind: str
    representation: str
    tokens: int
    tools: tuple[str, ...] = ()
    span: tuple[int, int] | None = None
    variant: str | None = None
    handle: str | None = None

    def to_dict(self) -> ContributionDict:
        return {
            "contributor": self.contributor, "kind": self.kind, "representation": self.representation, "tokens": self.tokens,
            "tools": list(self.tools), "span": None if self.span is None else list(self.span), "variant": self.variant,
            "handle": self.handle,
        }


@dataclass(frozen=True, slots=True)
class Receipt:
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
    token_budget: int | None = None
    dropped: list[Drop] = field(default_factory=list)
    tool_tokens: dict[str, int] = field(default_factory=dict)
    cache: dict[str, Any] | None = None  # the planned cache placement (``ModelRequest.cache``)

    def to_dict(self) -> ReceiptDict:
        out: ReceiptDict = {
            "id": self.id, "model": self.model, "input_tokens": self.input_tokens, "max_input_tokens": self.max_input_tokens,
            "optimize_at": self.optimize_at, "measurement": self.measurement,
            "adaptations": [a.to_dict() for a in self.adaptations], "warnings": list(self.warnings), "epoch": self.epoch,
            "previous_request_id": self.previous_request_id, "candidates": [c.to_dict() for c in self.candidates],
            "contributions": [c.to_dict() for c in self.contributions], "tools": list(self.tools), "tier": self.tier,
            "token_budget": self.token_budget, "dropped": [d.to_dict() for d in self.dropped], "tool_tokens": dict(self.tool_tokens),
        }
        if self.cache is not None:
            out["cache"] = copy.deepcopy(self.cache)  # type: ignore[typeddict-item]
        return out


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
class RequestPreview:
    """One request planned without calling a model or preparing artifacts (``preview``).

    ``status`` is ``"over-limit"`` when no legal candidate fits ``max``; ``error_code`` and
    ``diagnostics`` then say why (what ``generate`` would raise), and ``sent`` is ``None``.
    Otherwise ``sent`` is the literal request the model would receive and ``input_tokens`` counts
    exactly it. ``dropped`` lists the contexts the prompt's ``token_budget`` dropped before ladder
    planning (they and their tools are not sent); ``tool_tokens`` is each offered tool's cost;
    ``capacity_source`` says where the capacity profile came from: ``"model"`` (the model's own
    ``capacity``), ``"resolver"``, ``"profile"`` (a ``ModelCapacityProfile`` given as the model) or
    ``"conservative"`` (the 8k default for an unknown or unnamed model).
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
    sent: ModelRequest | None = None
    token_budget: int | None = None
    dropped: list[Drop] = field(default_factory=list)
    tool_tokens: dict[str, int] = field(default_factory=dict)
    capacity_source: str = "conservative"

    def to_dict(self) -> PreviewDict:
        return {
            "status": self.status, "model": self.model, "input_tokens": self.input_tokens, "max_input_tokens": self.max_input_tokens,
            "optimize_at": self.optimize_at, "adaptations": [a.to_dict() for a in self.adaptations],
            "candidates": [c.to_dict() for c in self.candidates], "tools": list(self.tools), "warnings": list(self.warnings),
            "measurement": self.measurement, "context_window": self.context_window, "output_reserve": self.output_reserve,
            "safety_margin": self.safety_margin, "overhead": self.overhead, "counting_confidence": self.counting_confidence,
            "contributions": [c.to_dict() for c in self.contributions], "breakdown": [c.to_dict() for c in self.breakdown],
            "tier": self.tier, "error_code": self.error_code, "diagnostics": [d.to_dict() for d in self.diagnostics],
            "sent": None if self.sent is None else self.sent.to_dict(), "token_budget": self.token_budget,
            "dropped": [d.to_dict() for d in self.dropped], "tool_tokens": dict(self.tool_tokens),
            "capacity_source": self.capacity_source,
        }
