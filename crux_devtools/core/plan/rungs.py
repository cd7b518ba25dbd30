"""The rung vocabulary: the one definition of the rung names, their order, and the rejection reasons.

Like httpx's ``codes``, this module is the single source of the names the planner emits, the order
the front ends list them in, and the words they show for them. Nothing else spells the list out:
the receipts type their fields with ``RungName`` / ``RejectionReason``, the planner ranks with
``RUNG_RANK``, and the web page and the TUI take labels and descriptions from ``label`` /
``description`` (a name they do not know is shown as it is, so an old report still renders), each
rung's colour from ``RungTerm.web_colour`` (the page's ``--rung-<name>`` CSS variables are generated
from it) and ``RungTerm.tui_colour``, and the sentence saying what a part sent at the rung stands in
for from ``sent_in_place``.

Rungs, highest fidelity first (a ladder authorises a subset; ``full`` is always there)::

    full -> authored -> summary -> offload -> omitted

Rejection reasons (``Candidate.rejection_reason``: why a rung the planner considered was not chosen)::

    over-limit, over-optimize-at, lower-fidelity, unprepared, below-floor, required-tool

Adding a rung kind: add its name to ``RungName`` at its place in the fidelity order and a line to
``_RUNG_TERMS`` (every field of a ``RungTerm`` is required); the import-time check below fails until
both agree. The front ends need nothing more: they render every rung from its term.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
import re
from string import Formatter
from typing import Literal, get_args

RungName = Literal["full", "authored", "summary", "offload", "omitted"]
RejectionReason = Literal["over-limit", "over-optimize-at", "lower-fidelity", "unprepared", "below-floor", "required-tool"]

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


@dataclass(frozen=True, slots=True)
class RungTerm(Term):
    """A rung's word, with how the front ends show a part sent at it.

    ``web_colour`` is a CSS colour (the page's ``--rung-<name>`` variable); ``tui_colour`` a Rich
    colour name (the terminal's palette, so it follows the user's theme). ``sent_as`` is the tag on
    a part (``{label}``, ``{variant}``, ``{handle}`` are filled in) and ``in_place`` the sentence
    saying what the part stands in for (``{source}``, ``{variant}``, ``{handle}``; "" when the part
    is the source's own text)."""

    web_colour: str
    tui_colour: str
    sent_as: str
    in_place: str


_RUNG_TERMS = (
    RungTerm(
        "full", "full", "the source's own text, exactly as authored",
        "#2b8a3e", "blue", "{label}", "",
    ),
    RungTerm(
        "authored", "authored", "an alternative text the author wrote for the source (prefer)",
        "#3b4cca", "yellow", "{label}: {variant}", "the authored alternative {variant} is sent in place of {source}",
    ),
    RungTerm(
        "summary", "summary", "a generated summary of the source (summarizable), prepared before it is sent",
        "#a05a00", "cyan", "{label}", "a summary is sent in place of the full text of {source}",
    ),
    RungTerm(
        "offload", "offload", "a short preview plus a handle the model can read the exact text with (offloadable)",
        "#5f3dc4", "magenta", "{label} preview · handle {handle}",
        "a preview is sent in place of the exact text of {source}, which the model reads through read_offload",
    ),
    RungTerm(
        "omitted", "omitted", "nothing of the source is sent, and neither are the tools it owns (droppable)",
        "#667085", "red", "{label}: not sent",
        "omitted by the planner: nothing is sent in place of {source}",
    ),
)
_REASON_TERMS = (
    Term("over-limit", "over-limit", "does not fit the limit with the rungs already chosen, or is held below this rung for the epoch"),
    Term("over-optimize-at", "over optimize_at", "fits under max but not under optimize_at, and a plan under optimize_at exists"),
    Term("lower-fidelity", "lower-fidelity", "a rung of higher fidelity fits, so this one is not needed"),
    Term("unprepared", "unprepared", "the summary has not been prepared yet (preview never prepares it; generate does)"),
    Term("below-floor", "below-floor", "the source is not above offloadable(above_tokens=...), so it is not offloaded"),
    Term("required-tool", "required-tool", "omitting it would remove a tool the request explicitly selected"),
)

RUNG_TERMS: dict[str, RungTerm] = {t.name: t for t in _RUNG_TERMS}
REASON_TERMS: dict[str, Term] = {t.name: t for t in _REASON_TERMS}
RUNG_RANK: dict[str, int] = {name: rank for rank, name in enumerate(RUNGS)}

if tuple(RUNG_TERMS) != RUNGS or tuple(REASON_TERMS) != REJECTION_REASONS:  # pragma: no cover - a definition error
    raise AssertionError("core/plan/rungs.py: the terms must list exactly the names of RungName and RejectionReason, in order")
if any(c in t.sent_as + t.in_place for t in _RUNG_TERMS for c in "<>&"):  # pragma: no cover - a definition error
    raise AssertionError("core/plan/rungs.py: a rung's tag and sentence are plain words (a page sets them as they are)")


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


def rung_term(name: str | None) -> RungTerm:
    """The term of a rung; a name this version does not know gets a neutral term that shows the name
    as it is (never another rung's words or colour)."""
    term = RUNG_TERMS.get(name or "")
    if term is not None:
        return term
    shown = name or "?"
    return RungTerm(shown, shown, "", "#667085", "white", "{label}", "")


def sent_as(name: str | None, *, variant: str | None = None, handle: str | None = None) -> str:
    """The tag of a part sent at rung ``name``: ``authored: catalog-index``, ``offload preview · handle ofl_1``.
    A piece of the tag whose value is missing is left out (``offload preview``)."""
    term = rung_term(name)
    values = {"label": term.label, "variant": variant, "handle": handle}
    pieces = [piece for piece in _TAG_PIECE.split(term.sent_as) if all(values.get(f) for f in _fields(piece))]
    return "".join(pieces).format_map(values)


def in_place(
    name: str | None, *, source: str, variant: str | None = None, handle: str | None = None, mark: Callable[[str], str] = str
) -> str:
    """What a part sent at rung ``name`` stands in for, in a sentence ("" for the source's own text).
    ``mark`` wraps each value filled in (the web page sets them in a monospace span)."""
    values = {"source": source, "variant": variant or "(unnamed)", "handle": handle or "(none)"}
    return rung_term(name).in_place.format_map({key: mark(value) for key, value in values.items()})


_TAG_PIECE = re.compile(r"(?=: \{| · )")  # a tag's optional pieces start at ": {field}" or " · "


def _fields(template: str) -> list[str]:
    return [field for _text, field, _spec, _conv in Formatter().parse(template) if field]
