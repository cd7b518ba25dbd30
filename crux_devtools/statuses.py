"""The status vocabulary: the one definition of an example's (and a prompt's) states and their words.

An example's status is decided once, in the worker (``evaluate.example_status``), and a prompt's is
derived from its examples there too (``evaluate.status_of``). Every surface (the web list and page,
``/api``, the TUI tree and status line, ``inspect`` and ``check``) reads that value and shows it with
the words defined here; none of them looks at the plan or the inspection again to decide it.

States, worst first (a prompt shows the worst state of its examples)::

    error -> invalid-input -> unmatched -> over-limit -> over-budget -> not-checked -> over-optimize-at -> fits

``over-optimize-at`` is a request that is sent (``check`` passes) but above the budget's
``optimize_at``: no candidate fitted under it, so the most faithful one under ``max`` was sent.

``fails`` says whether ``check`` fails on the state; ``not-checked`` (a prompt with required inputs
and no examples, so nothing could be resolved) is reported by ``check`` and fails only under
``check --strict``. ``tone`` picks the colour (the web chip's ``chip-TONE`` class, the TUI's style).
``stale`` is not a state of the report: it is shown beside one when a module failed to load and its
last good report is kept. A key this module does not know (an old history entry) is shown as it is,
with the error tone.

It sits below every layer (core, review, inspector, web, tui may all read it) and imports nothing
beyond the standard library: the server process imports it without loading the core.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

StatusKey = Literal["fits", "over-optimize-at", "over-limit", "over-budget", "unmatched", "invalid-input", "error", "not-checked"]
Tone = Literal["fits", "over", "error", "unchecked", "stale"]

STATUS_KEYS: tuple[StatusKey, ...] = get_args(StatusKey)


@dataclass(frozen=True, slots=True)
class StatusTerm:
    """One state: ``word`` is what every surface prints, ``mark`` the TUI's and CLI's glyph,
    ``tone`` the colour, ``fails`` whether ``check`` fails on it, ``means`` the state in a sentence."""

    key: str
    word: str
    mark: str
    tone: Tone
    fails: bool
    means: str


_TERMS = (
    StatusTerm("error", "error", "✗", "error", True, "resolving or planning this example raised an exception in user code"),
    StatusTerm("invalid-input", "invalid input", "✗", "error", True, "the input does not match the prompt's input schema"),
    StatusTerm("unmatched", "unmatched key", "✗", "error", True, "a match(...) key has no case: none of its branches is sent"),
    StatusTerm("over-limit", "over limit", "▲", "over", True, "no plan fits the model's input limit: generate refuses it and nothing is sent"),
    StatusTerm("over-budget", "over budget", "▲", "over", True, "the system text is over its token_budget even after every drop"),
    StatusTerm("not-checked", "not checked", "?", "unchecked", False, "required inputs and no examples: nothing was resolved; add examples={...}"),
    StatusTerm("over-optimize-at", "over optimize_at", "△", "over", False,
               "nothing fitted under it, the most faithful candidate under max was sent"),
    StatusTerm("fits", "fits", "✓", "fits", False, "the request fits every limit and is sent as shown"),
)
STALE = StatusTerm("stale", "stale", "◌", "stale", False, "its module failed to load: this is its last good report")

TERMS: dict[str, StatusTerm] = {t.key: t for t in _TERMS}
SEVERITY: dict[str, int] = {t.key: rank for rank, t in enumerate(_TERMS)}  # 0 is the worst

assert set(TERMS) == set(STATUS_KEYS), "every StatusKey needs exactly one StatusTerm"  # noqa: S101 - import-time check


def term(key: str) -> StatusTerm:
    """The term of a status key (``stale`` too); an unknown key is shown as it is, as an error."""
    if key == STALE.key:
        return STALE
    return TERMS.get(key) or StatusTerm(key, key, "✗", "error", True, f"unknown status {key!r}")


def word(key: str) -> str:
    """The one word every surface prints for this state."""
    return term(key).word


def fails(key: str, *, strict: bool = False) -> bool:
    """Whether ``check`` fails on this state (``strict``: ``not-checked`` fails too)."""
    return term(key).fails or (strict and key == "not-checked")


def worst(keys: list[str]) -> str | None:
    """The worst of these states (``None`` for none)."""
    return min(keys, key=lambda k: SEVERITY.get(k, -1)) if keys else None


__all__ = ["STALE", "STATUS_KEYS", "SEVERITY", "TERMS", "StatusKey", "StatusTerm", "Tone", "fails", "term", "word", "worst"]
