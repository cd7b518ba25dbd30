"""Finding prompts by what the user types: the ``/`` search over the tree (no Textual here).

A query is split on whitespace; a prompt matches when every term is found, case-insensitively, in
its id, its module or its file. ``match_prompt`` also says where each term was found, so the tree
can highlight it (the text itself is user text: it is only ever sliced, never parsed).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

FIELDS = ("id", "module", "file")


@dataclass(frozen=True, slots=True)
class PromptMatch:
    """Where a query was found in one prompt: per field, the ``(start, end)`` spans that matched."""

    prompt_id: str
    spans: dict[str, tuple[tuple[int, int], ...]]

    def only_outside_id(self) -> bool:
        """Whether some term matched the module or the file but not the id (the label then shows where)."""
        return any(self.spans.get(field) for field in ("module", "file")) and not self.spans.get("id")


def terms(query: str) -> list[str]:
    return query.lower().split()


def _spans(text: str, term: str) -> list[tuple[int, int]]:
    lowered, found, start = text.lower(), [], 0
    while term and (at := lowered.find(term, start)) >= 0:
        found.append((at, at + len(term)))
        start = at + len(term)
    return found


def match_prompt(prompt: Mapping[str, Any], query_terms: list[str]) -> PromptMatch | None:
    """The match of ``query_terms`` in ``prompt``, or ``None`` when a term is found nowhere.

    With no terms every prompt matches (with nothing highlighted)."""
    values = {field: str(prompt.get(field) or "") for field in FIELDS}
    spans: dict[str, list[tuple[int, int]]] = {field: [] for field in FIELDS}
    for term in query_terms:
        hit = False
        for field in FIELDS:
            found = _spans(values[field], term)
            if found:
                spans[field].extend(found)
                hit = True
        if not hit:
            return None
    return PromptMatch(str(prompt.get("id", "?")), {field: tuple(sorted(s)) for field, s in spans.items() if s})


def find_matches(report: Mapping[str, Any] | None, query: str) -> list[PromptMatch]:
    """The prompts and agents of ``report`` that ``query`` matches, in the report's order."""
    query_terms = terms(query)
    found = []
    for prompt in (report or {}).get("prompts", []):
        match = match_prompt(prompt, query_terms)
        if match is not None:
            found.append(match)
    return found


def step(order: list[str], matches: list[str], current: str | None, direction: int) -> str | None:
    """The next (``direction=1``) or previous (``-1``) of ``matches`` from ``current`` in ``order``
    (every prompt id, as the tree lists them), wrapping around; ``None`` when nothing matches."""
    wanted = set(matches)
    if not wanted:
        return None
    start = order.index(current) if current in order else (-1 if direction > 0 else len(order))
    for offset in range(1, len(order) + 1):
        candidate = order[(start + direction * offset) % len(order)]
        if candidate in wanted:
            return candidate
    return None
