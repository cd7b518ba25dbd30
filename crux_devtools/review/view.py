"""The review document as rows for a screen: what the web page and the TUI show, computed once here."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .compare import changed
from .render import thousands, cost_texts, delta_tokens, describe, diff_lines, headline, kinds, priced, side_label


@dataclass
class ChangeLine:
    """One change's sentence and, for a text change, its diff lines as (kind, text): kind ``add``,
    ``del``, ``same``, ``hunk`` (an ``@@`` line) or ``more`` (how many lines were not shown)."""

    text: str
    diff: list[tuple[str, str]] = field(default_factory=list)


def _diff_kind(line: str) -> str:
    if line.startswith("@@"):
        return "hunk"
    if line.startswith("... "):
        return "more"
    return {"+": "add", "-": "del"}.get(line[:1], "same")


@dataclass
class ExampleRow:
    prompt: str
    kind: str
    where: str
    example: str
    status: str
    tokens: str
    delta: str
    cache: str
    cost: str
    kinds: str
    lines: list[str] = field(default_factory=list)
    changes: list[ChangeLine] = field(default_factory=list)  # the lines again, each with its text diff
    anchor: str = ""  # on the first row of each prompt: ``diff-<id>``, the list's marks link there


@dataclass
class ReviewView:
    base: str
    head: str
    headline: str
    error: str | None = None
    rows: list[ExampleRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # not compared, failures
    changed_ids: list[str] = field(default_factory=list)
    priced: bool = True  # False: no changed example has a price (the page says "unpriced" once)
    header: Any = None  # the page header of the web front end (set by the route)


def review_view(document: dict[str, Any]) -> ReviewView:
    """Rows of the changed examples, each with its change lines, and the notes under them."""
    if "error" in document:
        return ReviewView(side_label(document.get("base") or {}), "working tree", "", error=str(document["error"]))
    view = ReviewView(side_label(document["base"]), side_label(document["head"]), headline(document), priced=priced(document))
    items = changed(document)
    costs = cost_texts([example for _, example in items])  # the cost column: one precision
    for (prompt, example), cost in zip(items, costs, strict=True):
        base, head = example.get("base") or {}, example.get("head") or {}
        delta = delta_tokens(example)
        prefix = example.get("cache_prefix")
        row = ExampleRow(
            prompt=prompt["id"], kind=str(prompt.get("kind")), where=f"{prompt.get('file')}:{prompt.get('line')}",
            example=str(example["name"]), status=example["status"],
            tokens=f"{thousands(base.get('input_tokens'))} → {thousands(head.get('input_tokens'))}" if base and head else "—",
            delta="—" if delta is None else f"{delta:+,}",
            cache=f"{thousands(prefix['base_tokens'])} → {thousands(prefix['common_tokens'])}, broken by {prefix['broken_by']}" if prefix and prefix.get("broken_by") else "—",
            cost=cost, kinds=kinds(example),
            changes=[
                ChangeLine(describe(c).replace(" -> ", " → "), [(_diff_kind(line), line) for line in diff_lines(c)])
                for c in example["changes"] if c["kind"] != "tokens"
            ],
        )
        if prompt.get("note"):
            row.changes.append(ChangeLine(str(prompt["note"])))
        row.lines = [c.text for c in row.changes]
        view.rows.append(row)
        if prompt["id"] not in view.changed_ids:
            view.changed_ids.append(prompt["id"])
            row.anchor = f"diff-{prompt['id']}"
    view.notes += [f"not compared: {i['id']} ({i['file']}): {i['reason']}" for i in document["not_compared"]]
    view.notes += [
        f"{f['revision']}: " + (f"{f['file']}:{f['line']}: " if f.get("file") else "") + f"{f['type']}: {f['message']}"
        for f in document["failures"]
    ]
    return view
