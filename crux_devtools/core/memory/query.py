"""Turning free text into a safe FTS5 query.

Each word term is double-quoted (so FTS5 syntax characters in user text are inert) and the terms
are OR-ed; bm25 then ranks entries that match more, rarer terms higher. Punctuation never raises.
Very common English words are left out when the query has other terms: they match almost every
entry, add nothing to the ranking and would make every entry a candidate.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+", re.UNICODE)
MAX_TERMS = 64

STOP_WORDS = frozenset(
    "a an and are as at be but by can do does for from had has have how i if in into is it its me my "
    "no not of on or our so than that the their them then there these they this to was we were what "
    "when where which who why will with you your".split()
)


def query_terms(text: str | None) -> list[str]:
    """The distinct word terms of ``text`` in order, common words dropped when others remain."""
    if not text:
        return []
    seen: dict[str, None] = {}
    for word in _WORD.findall(text.lower()):
        # "_" is a word character to Python but a separator to FTS5's tokenizer; keep the parts.
        for part in word.split("_"):
            if part:
                seen.setdefault(part, None)
    terms = list(seen)
    content = [t for t in terms if t not in STOP_WORDS]
    return (content or terms)[:MAX_TERMS]


def fts_phrase(term: str) -> str:
    """``term`` as a quoted FTS5 phrase: its characters are never read as query syntax."""
    return '"' + term.replace('"', '""') + '"'


def fts_query(text: str | None) -> str | None:
    """An FTS5 MATCH expression for ``text``, or ``None`` when it holds no word at all."""
    return or_phrases(query_terms(text))


def or_phrases(terms: list[str]) -> str | None:
    """The OR of ``terms`` as quoted phrases, or ``None`` for no terms."""
    return " OR ".join(map(fts_phrase, terms)) if terms else None
