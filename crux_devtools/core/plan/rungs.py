"""The rung vocabulary: the one definition of the rung names, their order, and the rejection reasons.

Like httpx's ``codes``, this module is the single source of the names the planner emits, the order
the front ends list them in, and the words they show for them. Nothing else spells the list out:
the receipts type their fields with ``RungName`` / ``RejectionReason``, the planner ranks with
``RUNG_RANK``, and the web page and the TUI take labels and descriptions from ``label`` /
``description`` (a name they do not know is shown as it is, so an old report still renders).

Rungs, highest fidelity first (a ladder authorises a subset; ``full`` is always there)::

    full -> authored -> summary -> offload -> omitted

Rejection reasons (``Candidate.rejection_reason``: why a rung the planner considered was not chosen)::

    over-limit, lower-fidelity, unprepared, below-floor, required-tool

Adding a rung kind: add its name to ``RungName`` at its place in the fidelity order and a line to
``_RUNG_TERMS``; the import-time check below fails until both agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

RungName = Literal["full", "authored", "summary", "offload", "omitted"]
RejectionReason = Literal["over-limit", "lower-fidelity", "unprepared", "below-floor", "required-tool"]

RUNGS: tuple[RungName, ...] = get_args(RungName)  # fidelity order, highest first
REJECTION_REASONS: tuple[RejectionReason, ...] = get_args(RejectionReason)


@dataclass(frozen=True, slots=True)
class Term:
    """One word of the vocabulary: ``label`` is what a front end shows, ``description`` says it in words.

    Labels are the names themselves today: they are the words the docs, the receipts and the
    ``data-rung`` attributes use, so a user sees one word everywhere. A front end shows ``label(...)``,
    never the raw name, so a label can change here alone."""

    name: str
    label: str
    description: str


_RUNG_TERMS = (
    Term("full", "full", "the source's own text, exactly as authored"),
    Term("authored", "authored", "an alternative text the author wrote for the source (prefer)"),
    Term("summary", "summary", "a generated summary of the source (summarizable), prepared before it is sent"),
    Term("offload", "offload", "a short preview plus a handle the model can read the exact text with (offloadable)"),
    Term("omitted", "omitted", "nothing of the source is sent, and neither are the tools it owns (droppable)"),
)
_REASON_TERMS = (
    Term("over-limit", "over-limit", "does not fit the limit with the rungs already chosen, or is held below this rung for the epoch"),
    Term("lower-fidelity", "lower-fidelity", "a rung of higher fidelity fits, so this one is not needed"),
    Term("unprepared", "unprepared", "the summary has not been prepared yet (preview never prepares it; generate does)"),
    Term("below-floor", "below-floor", "the source is not above offloadable(above_tokens=...), so it is not offloaded"),
    Term("required-tool", "required-tool", "omitting it would remove a tool the request explicitly selected"),
)

RUNG_TERMS: dict[str, Term] = {t.name: t for t in _RUNG_TERMS}
REASON_TERMS: dict[str, Term] = {t.name: t for t in _REASON_TERMS}
RUNG_RANK: dict[str, int] = {name: rank for rank, name in enumerate(RUNGS)}

if tuple(RUNG_TERMS) != RUNGS or tuple(REASON_TERMS) != REJECTION_REASONS:  # pragma: no cover - a definition error
    raise AssertionError("core/plan/rungs.py: the terms must list exactly the names of RungName and RejectionReason, in order")


def rung_rank(name: str) -> int:
    """A rung's place in the fidelity order (0 = ``full``); an unknown name sorts last."""
    return RUNG_RANK.get(name, len(RUNGS))


def label(name: str | None) -> str:
    """What a front end shows for a rung or a rejection reason (an unknown name as it is)."""
    if name is None:
        return ""
    term = RUNG_TERMS.get(name) or REASON_TERMS.get(name)
    return term.label if term is not None else name


def description(name: str | None) -> str:
    """A rung or rejection reason in words ("" for an unknown name)."""
    if name is None:
        return ""
    term = RUNG_TERMS.get(name) or REASON_TERMS.get(name)
    return term.description if term is not None else ""
