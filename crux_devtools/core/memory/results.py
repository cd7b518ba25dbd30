"""Frozen results of memory look-ups: scored evidence and assembled context blocks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..compose.results import to_plain

EmptyReason = Literal["", "no_evidence", "recency_fallback", "budget_exhausted"]


@dataclass(frozen=True, slots=True)
class Evidence:
    """One remembered entry as returned by ``recall``. ``score`` is its bm25 relevance (higher is
    better; 0.0 for entries returned by recency); ``created_at`` is an ISO 8601 UTC timestamp."""

    id: str
    content: str
    entry_type: str
    section: str
    score: float
    created_at: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "content": self.content,
            "entry_type": self.entry_type,
            "section": self.section,
            "score": self.score,
            "created_at": self.created_at,
        }


@dataclass(frozen=True, slots=True)
class SectionSummary:
    """What one section holds among the candidates: a cheap overview before paying for the block."""

    section_name: str
    item_count: int
    top_item_preview: str
    estimated_tokens: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "section_name": self.section_name,
            "item_count": self.item_count,
            "top_item_preview": self.top_item_preview,
            "estimated_tokens": self.estimated_tokens,
        }


@dataclass(frozen=True, slots=True)
class ContextAssembly:
    """One budgeted, sectioned memory block with every token accounted for.

    ``empty_reason`` says why the block is empty or degraded: ``"no_evidence"`` (the session has
    nothing in scope), ``"recency_fallback"`` (nothing matched; the most recent entries are
    returned), ``"budget_exhausted"`` (candidates exist but none fit), else ``""``.
    """

    context_block: str
    token_estimate: int
    budget_used: int
    budget_remaining: int
    evidence_candidates_considered: int
    evidence_dropped_by_budget: int
    exact_references_surfaced: int
    section_summaries: list[SectionSummary] = field(default_factory=list)
    empty_reason: EmptyReason = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "context_block": self.context_block,
            "token_estimate": self.token_estimate,
            "budget_used": self.budget_used,
            "budget_remaining": self.budget_remaining,
            "evidence_candidates_considered": self.evidence_candidates_considered,
            "evidence_dropped_by_budget": self.evidence_dropped_by_budget,
            "exact_references_surfaced": self.exact_references_surfaced,
            "section_summaries": to_plain(self.section_summaries),
            "empty_reason": self.empty_reason,
        }
