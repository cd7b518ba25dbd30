"""The review document for people: text for a terminal, markdown for a pull-request comment.

``describe(change)`` is the one sentence of a change that the text, the markdown, the web page and
the TUI all show. Markdown escapes every name it prints (ids come from user code).
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from ..core.record.pricing import Usage, cache_usage_text, format_usd, format_usd_column
from .compare import changed

MARKDOWN_LIMIT = 60_000


def thousands(value: Any) -> str:
    """``1,812``, or ``?`` for a missing count."""
    return f"{value:,}" if isinstance(value, int) else "?"


def _signed(value: int) -> str:
    return f"{value:+,}"


def _where(change: Mapping[str, Any]) -> str:
    return f" ({change['file']}:{change['line']})" if change.get("file") else ""


def _text_where(change: Mapping[str, Any]) -> str:
    edit = change.get("edit")
    if edit and edit.get("line"):
        defined = f"; defined at {change['file']}:{change['line']}" if change.get("line") != edit["line"] or change.get("file") != edit["file"] else ""
        return f" (edited at {edit['file']}:{edit['line']}{defined})"
    return _where(change)


_CAUSES = {
    "budget": "a budget setting changed",
    "text": "its own text changed",
    "pressure": "the other parts of the request grew or shrank",
    "prepared": "its prepared rungs changed",
}
_PARTS = {"system": "system text", "messages": "messages", "tools": "tool schemas", "max_tokens": "max_tokens"}


def _setting(value: Any) -> str:
    return thousands(value) if isinstance(value, int) else "none" if value is None else str(value)


def describe(change: Mapping[str, Any]) -> str:
    """One line for a change, naming what changed and where it is defined."""
    kind = change["kind"]
    if kind == "text":
        subject = {"prompt": "the prompt's own text", "messages": "the messages"}.get(change["context"], f"context {change['context']}")
        return f"{subject} changed: {thousands(change['base_tokens'])} -> {thousands(change['head_tokens'])} tokens{_text_where(change)}"
    if kind == "context-left":
        return f"context {change['id']} left the request ({change['reason']})"
    if kind == "context-joined":
        return f"context {change['id']} joined the request (was out: {change['reason']})"
    if kind == "order":
        return f"system blocks moved: {', '.join(change['base'])} -> {', '.join(change['head'])}"
    if kind == "budget":
        return f"{change['field']} {_setting(change['base'])} -> {_setting(change['head'])}{_where(change)}"
    if kind == "rung":
        cause = _CAUSES.get(str(change.get("cause")))
        return f"{change['contributor']} is sent as {change['head']} (was {change['base']})" + (f": {cause}" if cause else "")
    if kind == "request":
        return f"the request's {_PARTS.get(change['part'], change['part'])} changed"
    if kind == "tool-added":
        return f"tool {change['name']} is offered"
    if kind == "tool-removed":
        return f"tool {change['name']} is no longer offered"
    if kind == "tool-changed":
        return f"tool {change['name']}: {change.get('what', 'schema')} changed"
    if kind == "tokens":
        percent = f", {change['percent']:+}%" if change.get("percent") is not None else ""
        return f"input tokens {thousands(change['base'])} -> {thousands(change['head'])} ({_signed(change['delta'])}{percent})"
    if kind == "status":
        return f"status {change['base']} -> {change['head']}"
    if kind == "error":
        verb = "new error" if change.get("appeared") else "error fixed"
        where = f"{change['file']}:{change['line']}: " if change.get("file") else ""
        return f"{verb}: {where}{change['message']}"
    return str(dict(change))


DIFF_LINES = 40  # a text change's diff shown in a terminal, a comment or a screen, at most


def diff_lines(change: Mapping[str, Any], limit: int = DIFF_LINES) -> list[str]:
    """The lines of a text change's unified diff (without its ``---``/``+++`` header), at most
    ``limit`` of them and then how many more there are; [] for other changes."""
    text = change.get("diff") if change.get("kind") == "text" else None
    if not text:
        return []
    lines = [line for line in str(text).splitlines() if not line.startswith(("--- ", "+++ "))]
    if len(lines) > limit:
        return lines[:limit] + [f"... {len(lines) - limit} more diff line(s)"]
    return lines


def prefix_line(prefix: Mapping[str, Any] | None) -> str | None:
    """``cacheable prefix 1,812 -> 61 tokens, broken by house-rules`` (None when nothing broke it)."""
    if not prefix or prefix.get("broken_by") is None:
        return None
    return f"cacheable prefix {thousands(prefix['base_tokens'])} -> {thousands(prefix['common_tokens'])} tokens, broken by {prefix['broken_by']}"


def recorded_cache(usage: Mapping[str, Any] | None) -> dict[str, int] | None:
    """A recorded run's cache reads and writes (``recorded_cache`` of a ``run:<id>`` example):
    ``{"cache_read_tokens", "cache_write_tokens", "cache_write_1h_tokens"}``, None when the run
    recorded no provider usage."""
    counts = Usage.of(usage)
    if counts is None:
        return None
    return {"cache_read_tokens": counts.cache_read_tokens, "cache_write_tokens": counts.cache_write_tokens,
            "cache_write_1h_tokens": counts.cache_write_1h_tokens}


def recorded_cache_line(example: Mapping[str, Any]) -> str | None:
    """``recorded run: cache read 2,000 · written 400``, what the provider counted when the run
    was made, shown beside the projected prefix (None for an example that is no recorded run)."""
    if "recorded_cache" not in example:
        return None
    counts = example["recorded_cache"]
    if counts is None:
        return "recorded run: no provider usage recorded (cache reads and writes unknown)"
    return "recorded run: " + (cache_usage_text(Usage(0, 0, **counts)) or "cache read 0 · written 0")


def _cache_lines(example: Mapping[str, Any]) -> list[str]:
    """The projected cacheable prefix and, for a recorded run, what the provider counted."""
    return [line for line in (prefix_line(example.get("cache_prefix")), recorded_cache_line(example)) if line]


def _usd(value: float | None) -> str:
    if value is None:
        return "unpriced"
    if value == 0:
        return "$0.00"
    return ("+" if value > 0 else "") + format_usd(value)


def cost_text(example: Mapping[str, Any]) -> str:
    """Δ $ per 1,000 calls of this example, or ``unpriced``."""
    cost = example.get("cost") or {}
    return _usd(cost.get("delta_usd_per_1000"))


def cost_texts(examples: list[Mapping[str, Any]]) -> list[str]:
    """``cost_text`` of each of ``examples`` as a column shows them: one precision for all
    (``format_usd_column``), a rise signed ``+``."""
    amounts = [(example.get("cost") or {}).get("delta_usd_per_1000") for example in examples]
    return [("+" if amount is not None and amount > 0 else "") + text for amount, text in zip(amounts, format_usd_column(amounts), strict=True)]


def priced(document: Mapping[str, Any]) -> bool:
    """Whether any changed example has a price (when none has, "unpriced" is said once)."""
    return any((e.get("cost") or {}).get("delta_usd_per_1000") is not None for _, e in changed(document))


def delta_tokens(example: Mapping[str, Any]) -> int | None:
    base, head = example.get("base"), example.get("head")
    if base and head and isinstance(base.get("input_tokens"), int) and isinstance(head.get("input_tokens"), int):
        return int(head["input_tokens"] - base["input_tokens"])
    return None


def kinds(example: Mapping[str, Any]) -> str:
    if example["status"] in ("added", "removed"):
        return example["status"]
    return ", ".join(dict.fromkeys(c["kind"] for c in example["changes"]))


def side_label(side: Mapping[str, Any]) -> str:
    """``HEAD (1a2b3c4d5e)``, or ``working tree``."""
    rev, sha = side.get("rev"), side.get("sha")
    if rev is None:
        return "working tree"
    return f"{rev} ({sha[:10]})" if sha else str(rev)


def headline(document: Mapping[str, Any]) -> str:
    s = document["summary"]
    ex, pr = s["examples"], s["prompts"]
    changed_examples = ex["changed"] + ex["added"] + ex["removed"]
    if not changed_examples and not pr["added"] and not pr["removed"]:
        return "no prompt changes"
    total = sum(ex.values())
    prompts = sum(pr.values())
    return (f"{changed_examples} of {plural(total, 'example')} changed in {pr['changed'] + pr['added'] + pr['removed']} of "
            f"{plural(prompts, 'prompt')} ({ex['added']} added, {ex['removed']} removed)")


def plural(count: int, noun: str) -> str:
    """``1 prompt``, ``2 prompts``."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def render_text(document: Mapping[str, Any]) -> str:
    """The review for a terminal."""
    lines = [f"{side_label(document['base'])} -> {side_label(document['head'])}: {headline(document)}"]
    with_cost = priced(document)
    if changed(document) and not with_cost:
        lines.append("(no model planned here has a price: costs are unpriced)")
    current = None
    items = changed(document)
    costs = cost_texts([example for _, example in items])
    for (prompt, example), cost in zip(items, costs, strict=True):
        if prompt["id"] != current:
            current = prompt["id"]
            where = f"{prompt['file']}:{prompt['line']}" if prompt.get("line") else str(prompt.get("file"))
            lines += ["", f"{prompt['id']} ({prompt['kind']}, {where}): {prompt['status']}"]
            if prompt.get("note"):
                lines.append(f"  {prompt['note']}")
        delta = delta_tokens(example)
        size = f"{thousands(example['base']['input_tokens'])} -> {thousands(example['head']['input_tokens'])} tokens ({_signed(delta)})" if delta is not None else example["status"]
        lines.append(f"  {example['name']}: {size}" + (f"; {cost} per 1,000 calls" if with_cost else ""))
        for change in example["changes"]:
            if change["kind"] != "tokens":
                lines.append(f"    {describe(change)}")
                lines += [f"      {line}" for line in diff_lines(change)]
        lines += [f"    {line}" for line in _cache_lines(example)]
    for item in document["not_compared"]:
        lines.append(f"not compared: {item['id']} ({item['file']}): {item['reason']}")
    for f in document["failures"]:
        where = f"{f['file']}:{f['line']}: " if f.get("file") else ""
        lines.append(f"{f['revision']}: {where}{f['type']}: {f['message']}")
    return "\n".join(lines)


def _code(text: Any) -> str:
    """Inline code that is safe in a table cell and in HTML (``<code>``, escaped, no pipes)."""
    return "<code>" + html.escape(str(text)).replace("|", "&#124;") + "</code>"


def _cell(text: str) -> str:
    return html.escape(text).replace("|", "&#124;").replace("\n", " ")


def _row(prompt: Mapping[str, Any], example: Mapping[str, Any], with_cost: bool = True, cost_cell: str | None = None) -> str:
    delta = delta_tokens(example)
    base, head = example.get("base") or {}, example.get("head") or {}
    size = f"{thousands(base.get('input_tokens'))} → {thousands(head.get('input_tokens'))}" if base and head else "—"
    percent = next((c["percent"] for c in example["changes"] if c["kind"] == "tokens"), None)
    dt = "—" if delta is None else _signed(delta) + (f" ({percent:+}%)" if percent is not None else "")
    prefix = example.get("cache_prefix")
    cache = f"{thousands(prefix['base_tokens'])} → {thousands(prefix['common_tokens'])} ({_code(prefix['broken_by'])})" if prefix and prefix.get("broken_by") else "—"
    cost = f" {cost_cell if cost_cell is not None else cost_text(example)} |" if with_cost else ""
    return f"| {_code(prompt['id'])} | {_code(example['name'])} | {size} | {dt} | {cache} |{cost} {_cell(kinds(example))} |"


def _details(prompt: Mapping[str, Any], example: Mapping[str, Any]) -> str:
    delta = delta_tokens(example)
    title = f"{_code(prompt['id'])} · {_code(example['name'])}: " + (f"{_signed(delta)} tokens" if delta is not None else example["status"])
    body = []
    for change in example["changes"]:
        body.append(f"- {_arrow(_cell(describe(change)))}")
        if lines := diff_lines(change):  # a <pre> block: escaped, and blank lines do not end it
            body += ["", '<pre lang="diff">' + html.escape("\n".join(lines)) + "</pre>", ""]
    body += [f"- {_arrow(_cell(line))}" for line in _cache_lines(example)]
    where = f"{prompt['file']}:{prompt['line']}" if prompt.get("line") else str(prompt.get("file"))
    body.append(f"- defined at {_code(where)}")
    return "\n".join([f"<details><summary>{title}</summary>", "", *body, "", "</details>"])


def render_markdown(document: Mapping[str, Any], limit: int = MARKDOWN_LIMIT) -> str:
    """The review as a pull-request comment: summary table, then a collapsed section per changed
    example; at most ``limit`` characters, saying what was cut."""
    head = [f"### Prompt changes: {_cell(side_label(document['base']))} → {_cell(side_label(document['head']))}", "",
            f"**{_cell(headline(document))}**", ""]
    items = changed(document)
    with_cost = priced(document)
    costs = cost_texts([e for _, e in items])  # the Δ $ column: one precision
    rows = [_row(p, e, with_cost, cost) for (p, e), cost in zip(items, costs, strict=True)]
    details = [_details(p, e) for p, e in items]
    table = (["| Prompt | Example | Tokens | Δ tokens | Cacheable prefix | Δ $ / 1,000 calls | Changes |",
              "|---|---|---:|---:|---|---:|---|"] if with_cost else
             ["| Prompt | Example | Tokens | Δ tokens | Cacheable prefix | Changes |", "|---|---|---:|---:|---|---|"]) if rows else []
    if rows and not with_cost:
        head += ["*No model planned here has a price: costs are unpriced.*", ""]
    tail = [f"- not compared: {_code(i['id'])} ({_cell(str(i['file']))}): {_cell(i['reason'])}" for i in document["not_compared"]]
    tail += [f"- **{f['revision']}**: {_cell((str(f['file']) + ':' + str(f['line']) + ': ') if f.get('file') else '')}"
             f"{_cell(str(f['type']))}: {_cell(str(f['message']))}" for f in document["failures"]]
    if tail:
        tail = ["", "#### Not compared and failures", "", *tail]

    def assemble(n_rows: int, n_details: int) -> str:
        cut = []
        if n_rows < len(rows):
            cut.append(f"{len(rows) - n_rows} table row(s)")
        if n_details < len(details):
            cut.append(f"{len(details) - n_details} detail section(s)")
        note = [f"", f"*Cut to stay under {limit:,} characters: {', '.join(cut)} not shown; run `crux-devtools diff` for everything.*"] if cut else []
        parts = head + table[: 2 if n_rows else 0] + rows[:n_rows] + ([""] if details[:n_details] else []) + details[:n_details] + note + tail
        return "\n".join(parts) + "\n"

    n_rows, n_details = len(rows), len(details)
    text = assemble(n_rows, n_details)
    while len(text) > limit and n_details:
        n_details = max(0, n_details - max(1, (len(text) - limit) // 400 + 1))
        text = assemble(n_rows, n_details)
    while len(text) > limit and n_rows:
        n_rows = max(0, n_rows - max(1, (len(text) - limit) // 150 + 1))
        text = assemble(n_rows, n_details)
    return text[:limit] if len(text) > limit else text


def _arrow(text: str) -> str:
    return text.replace(" -&gt; ", " → ")
