"""An example's expectations at both revisions, side by side, for the review document and ``--fail-on expect``.

Each expectation is matched by what it says (``expect``: ``includes('brand-voice')``), not by its
line, so moving a claim in the file is no change; the same claim written twice is matched in order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _keyed(example: Mapping[str, Any] | None) -> dict[tuple[str, int], Mapping[str, Any]]:
    seen: dict[str, int] = {}
    out: dict[tuple[str, int], Mapping[str, Any]] = {}
    for result in (example or {}).get("expectations") or ():
        text = str(result["expect"])
        seen[text] = seen.get(text, 0) + 1
        out[(text, seen[text])] = result
    return out


def expectations_at(base: Mapping[str, Any] | None, head: Mapping[str, Any] | None) -> list[dict[str, Any]] | None:
    """``[{"expect", "file", "line", "base", "head", "held", "reason"}]``: each expectation's state at
    base and at head (None where it is not written), with where it is written and what held at head
    (at base when it is gone at head); None when neither side has any."""
    before, after = _keyed(base), _keyed(head)
    if not before and not after:
        return None
    rows = []
    for key in list(after) + [k for k in before if k not in after]:
        b, h = before.get(key), after.get(key)
        shown = h or b or {}
        rows.append({
            "expect": key[0], "file": shown.get("file"), "line": shown.get("line"),
            "base": b["state"] if b else None, "head": h["state"] if h else None,
            "held": shown.get("held"), "reason": shown.get("reason"),
        })
    return rows


def broken(rows: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """The expectations that held at base and are written at head but do not hold there."""
    return [r for r in rows or () if r["base"] == "held" and r["head"] not in (None, "held")]
