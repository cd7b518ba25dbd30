"""What a tool answers: one JSON text, compact by default, safe to hand to an agent.

Recorded runs carry end users' text (and whatever their tools returned) into the agent's context, so
an answer is data inside JSON fields and nothing else: every control character, lone surrogate and
invisible direction mark is written as its JSON ``\\uXXXX`` escape, so the text that crosses the
protocol holds none of them raw, and parsing it gives back the exact value.

Compact answers keep the document's shape (the same keys as the CLI's ``--json``) and cut long texts
and long lists, tighter and tighter, until the answer fits ``ANSWER_TOKENS``; what was cut is counted
in a top-level ``"cut"`` entry, with the paths of the first cuts. ``detail="full"`` cuts nothing.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

Detail = Literal["compact", "full"]
ANSWER_TOKENS = 2_000
# (longest text kept, most list items kept), loosest first: the first that fits is the answer.
CUT_LEVELS = ((800, 40), (400, 20), (200, 10), (120, 6), (60, 4), (40, 2), (40, 1))
# Names are never cut: an agent must be able to ask again with them, or open the file they name.
NAMES = frozenset({"id", "name", "target", "example", "file", "where", "kind", "status", "decision", "reason", "rev", "sha"})
MAX_PATHS = 8
# What an agent acts on is cut last: under these keys a first pass keeps at least this much (the
# literal request, ``sent``, whole); only when that cannot fit is everything cut alike.
ROWS = (160, 64)
KEPT: dict[str, tuple[int, int]] = {
    "decisions": ROWS, "changed": ROWS, "error": ROWS, "errors": ROWS, "failures": ROWS, "sent": (10**9, 10**9),
}
# More characters than this per token is rare (cl100k averages about 4 on English and JSON): a cut
# longer than budget times this is skipped uncounted. Only which cut is chosen depends on it.
CHARS_PER_TOKEN_AT_MOST = 12
FULL_HINT = 'call again with detail: "full" for everything'
# JSON escapes C0 controls itself; these it would write raw: DEL, C1 controls, lone surrogates,
# zero-width and direction marks (text that reads differently from what it is), the BOM.
_UNSAFE = re.compile("[\x7f-\x9f\ud800-\udfff\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")


def agent_json(value: Any) -> str:
    """``value`` as one line of JSON text with no raw control, surrogate or direction character."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, default=str)
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


@dataclass
class Tally:
    """What one compacting pass cut."""

    texts: int = 0
    chars: int = 0
    items: int = 0
    paths: list[str] = field(default_factory=list)

    def note(self, path: str) -> None:
        if len(self.paths) < MAX_PATHS:
            self.paths.append(path or "$")

    def to_dict(self, tokens: int, full_tokens: int) -> dict[str, Any]:
        return {
            "texts_cut": self.texts, "chars_cut": self.chars, "list_items_cut": self.items, "first_paths": self.paths,
            "answer_tokens": tokens, "full_tokens": full_tokens, "hint": FULL_HINT,
        }


def _cut(value: Any, longest: int, most: int, tally: Tally, path: str, kept: dict[str, tuple[int, int]] | None) -> Any:
    """``value`` with texts over ``longest`` characters and lists over ``most`` items cut; under a
    key of ``kept``, at least its limits (None: the same limits everywhere)."""
    if isinstance(value, str):
        if len(value) <= longest:
            return value
        tally.texts += 1
        tally.chars += len(value) - longest
        tally.note(path)
        return value[:longest] + "…"
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k in NAMES and isinstance(v, str):
                out[k] = v
                continue
            limits = (max(longest, kept[k][0]), max(most, kept[k][1])) if kept is not None and k in kept else (longest, most)
            out[k] = _cut(v, *limits, tally, f"{path}.{k}", kept)
        return out
    if isinstance(value, (list, tuple)):
        shown = list(value[:most])
        if len(value) > most:
            tally.items += len(value) - most
            tally.note(f"{path}[{most}:]")
        return [_cut(v, longest, most, tally, f"{path}[{i}]", kept) for i, v in enumerate(shown)]
    return value


def count_tokens(text: str) -> int:
    """Tokens of an answer as a model reads it (cl100k, as the planner counts)."""
    from ..core.tokens import default_counter

    return default_counter().count(text)


def answer_text(document: dict[str, Any], detail: Detail = "compact", *, budget: int = ANSWER_TOKENS) -> str:
    """The JSON text of ``document``: whole with ``detail="full"``; else cut until it fits ``budget``
    tokens (the loosest cut that fits), with ``"cut"`` saying what was left out."""
    whole = agent_json(document)
    if detail == "full":
        return whole
    full_tokens = count_tokens(whole)
    if full_tokens <= budget:
        return whole
    # first the bulk is cut and what an agent acts on kept; then, if need be, that too
    for kept in (KEPT, None):
        for longest, most in CUT_LEVELS:
            tally = Tally()
            cut = _cut(document, longest, most, tally, "", kept)
            if len(agent_json(cut)) > budget * CHARS_PER_TOKEN_AT_MOST:
                continue  # cannot fit: not worth counting (the answer chosen is always counted)
            text, tokens = _counted(cut, tally, full_tokens)
            if tokens <= budget:
                return text
    return _counted(cut, tally, full_tokens)[0]  # the tightest cut, over the budget: still counted


def _counted(cut: dict[str, Any], tally: Tally, full_tokens: int) -> tuple[str, int]:
    """The cut answer saying its own token count (written in, counted again until the two agree)."""
    tokens = 0
    for _ in range(4):
        text = agent_json({**cut, "cut": tally.to_dict(tokens, full_tokens)})
        counted = count_tokens(text)
        if counted == tokens:
            break
        tokens = counted
    return text, counted


def error_document(message: str, **fields: Any) -> dict[str, Any]:
    """One error as an answer: the one-line message, and the facts it names (known ids, load errors)."""
    return {"error": {"message": message, **fields}}
