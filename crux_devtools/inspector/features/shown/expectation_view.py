"""An example's expectations as the front ends show them: one row each, and a one-line count.

Reads the report's ``expectations`` (decided in the worker by the core's evaluator); the web page,
the TUI and ``check`` show the same states in the same words. Standard library only: the server
process imports it without the core.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# state -> (word, mark, tone): the tones are those of statuses.py (chip-TONE on the web, TUI styles)
STATE_TERMS: dict[str, tuple[str, str, str]] = {
    "held": ("holds", "✓", "fits"),
    "failed": ("does not hold", "✗", "error"),
    "invalid": ("invalid", "✗", "error"),
    "unplanned": ("not checked", "?", "unchecked"),
}


@dataclass(frozen=True, slots=True)
class ExpectationRow:
    """One expectation of the example on screen: what it says, its state in words, where it is written, and why."""

    expect: str
    state: str
    word: str
    mark: str
    tone: str
    where: str
    held: str | None
    reason: str | None


def expectation_rows(example: Mapping[str, Any] | None) -> list[ExpectationRow]:
    rows = []
    for r in (example or {}).get("expectations") or ():
        word, mark, tone = STATE_TERMS.get(r["state"], (r["state"], "✗", "error"))
        rows.append(ExpectationRow(f"expect().{r['expect']}", r["state"], word, mark, tone, f"{r['file'] or '?'}:{r['line'] or 0}", r["held"], r["reason"]))
    return rows


def expectation_count(example: Mapping[str, Any] | None) -> str | None:
    """``"3 of 4 expectations hold"``; None when the example has none."""
    rows = expectation_rows(example)
    if not rows:
        return None
    held = sum(r.state == "held" for r in rows)
    return f"{held} of {len(rows)} expectation{'s' if len(rows) != 1 else ''} hold" if held != 1 or len(rows) != 1 else "1 of 1 expectation holds"
