"""``crux-devtools inspect``'s default view: the request as sent, part by part (plain text).

Reads report dicts only. ``brief`` cuts long texts to a few lines and says how much was cut; token
counts are always those of the whole request.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ...report_types import DiagnosticDict, ExampleReport, PartDict, PreviewDict, PromptReport
from ..shown.sent import MESSAGE_KINDS, TOOLS_KIND, capacity_line, message_text, rung_text, system_parts, tokens_of
from ....statuses import term

BRIEF_LINES = 4  # lines kept of a long text under --brief
BRIEF_WIDTH = 160  # characters kept of a long line under --brief
BAR = "    │ "


def body(text: str, brief: bool, prefix: str = BAR) -> list[str]:
    """``text`` as boxed lines; under ``brief``, at most ``BRIEF_LINES`` lines of at most
    ``BRIEF_WIDTH`` characters, with a line saying how much was cut."""
    lines = text.splitlines() or [""]
    hidden = lines[BRIEF_LINES:] if brief and len(lines) > BRIEF_LINES + 1 else []
    out = []
    for line in lines[: len(lines) - len(hidden)]:
        if brief and len(line) > BRIEF_WIDTH:
            line = f"{line[:BRIEF_WIDTH]} … (+{len(line) - BRIEF_WIDTH:,} characters, --brief)"
        out.append(prefix + line)
    if hidden:
        chars = sum(len(line) + 1 for line in hidden)
        out.append(f"{prefix}… {len(hidden):,} more lines ({chars:,} characters) not shown (--brief)")
    return out


def candidate_tokens(candidate: Mapping[str, Any]) -> str:
    """A candidate's request size, or ``not prepared`` for a summary that does not exist yet."""
    if candidate.get("input_tokens") is None:
        return "not prepared" if candidate.get("rejection_reason") == "unprepared" else "not available"
    return f"{candidate['input_tokens']} tokens"


def status_words(example: ExampleReport) -> str:
    """The example's status as every surface writes it: its word, and for a state other than
    ``fits`` what it means (``over limit: no plan fits ...``)."""
    status = term(example["status"])
    return status.word if example["status"] == "fits" else f"{status.word}: {status.means}"


def headline(example: ExampleReport) -> str:
    """``example 'busy-day': input tokens 2238 of max 5292 (fits)``."""
    preview = example["preview"]
    if preview is not None:
        optimize = f", optimize_at {preview['optimize_at']}" if preview["optimize_at"] != preview["max_input_tokens"] else ""
        return f"  example {example['name']!r}: input tokens {preview['input_tokens']} of max {preview['max_input_tokens']}{optimize} ({status_words(example)})"
    return f"  example {example['name']!r}: no plan ({status_words(example)})"


def plan_lines(prompt: PromptReport, preview: PreviewDict) -> list[str]:
    """Which model and profile the plan used, what the budget dropped, what the planner adapted."""
    plan_model = prompt["plan_model"]
    out = [f"    planned against: {capacity_line(preview, plan_model)}"]
    hint = plan_model["hint"]
    if hint:
        out.append(f"      ({hint})")
    dropped = preview["dropped"]
    if dropped:
        shown = ", ".join(f"{d['id']} (priority {d['priority']}, {d['tokens']} tokens, {d['reason']})" for d in dropped)
        out.append(f"    dropped before planning (token_budget {preview['token_budget']}): {shown}")
    for a in preview["adaptations"]:
        out.append(f"    adapted {a['contributor']} -> {rung_text(a)}: {a['full_tokens']} -> {a['selected_tokens']} tokens")
    for warning in preview["warnings"]:
        out.append(f"    warning: {warning}")
    return out


def sent_lines(preview: Mapping[str, Any], brief: bool, parts: Mapping[str, PartDict] | None = None) -> list[str]:
    """The literal request: system text part by part, messages, tools with their schemas.

    Inside a part, ``│`` lines are the text sent; a ``╎`` line is a note that is not sent (what a
    memory read). ``parts``: the inspection's parts by source, for their kind and note.
    """
    sent = preview["sent"]
    out = ["    system text as sent:"]
    for part in system_parts(preview):
        resolved = (parts or {}).get(part.contributor)  # a replayed request has no inspection
        kind = resolved["kind"] if resolved is not None and part.kind == "context" else part.kind  # memory, skill
        if part.text is None:
            out.append(f"    ┌─ {part.contributor} [{kind}] {part.rung}")
            continue
        out.append(f"    ┌─ {part.contributor} [{kind}] {part.rung}, {part.tokens} tokens")
        if resolved is not None and resolved["detail"]:
            out.append(f"    ╎ ({resolved['detail']})")
        out.extend(body(part.text, brief))
    out.append("    └─")
    messages = sent.get("messages") or []
    out.append(f"    messages ({len(messages)}, {tokens_of(preview, MESSAGE_KINDS)} tokens):" if messages else "    messages: none")
    for message in messages:
        out.append(f"    ┌─ {message.get('role', '?')}")
        out.extend(body(message_text(message), brief))
        for call in message.get("tool_calls") or []:
            out.extend(body(f"tool call: {json.dumps(call, ensure_ascii=False)}", brief))
    if messages:
        out.append("    └─")
    tools = sent.get("tools") or []
    tool_tokens = preview.get("tool_tokens") or {}
    out.append(f"    tools ({len(tools)}, {tokens_of(preview, (TOOLS_KIND,))} tokens):" if tools else "    tools: none")
    for t in tools:
        cost = f", {tool_tokens[t['name']]} tokens" if t.get("name") in tool_tokens else ""
        out.append(f"    ┌─ {t.get('name')}{cost}: {t.get('description', '')}")
        schema = json.dumps(t.get("parameters"), ensure_ascii=False) if brief else json.dumps(t.get("parameters"), indent=2, ensure_ascii=False)
        out.extend(body(schema, brief))
    if tools:
        out.append("    └─")
    out.append(f"    max_tokens: {sent['max_tokens']}" if sent.get("max_tokens") is not None else f"    max_tokens: not set (output reserve {preview.get('output_reserve')} planned)")
    return out


def diagnostic_lines(diagnostics: list[DiagnosticDict]) -> list[str]:
    """Why nothing fits, one line per diagnostic: its contributor (or id), tokens and message."""
    return [f"      {d['contributor'] or d['id']}: {d['tokens']} tokens  {d['message']}" for d in diagnostics]


def summary_lines(example: ExampleReport) -> list[str]:
    """The summary rungs of this example: prepared or not (never ``None tokens``)."""
    out = []
    for s in example["summaries"]:
        state = "prepared" if s["prepared"] else "not prepared"
        needs = " (needs its model to prepare)" if s["needs_model"] and not s["prepared"] else ""
        note = s.get("note")  # NotRequired: prepared here, or prepared by generate before sending, says so
        out.append(f"    summary of {s['contributor']} ({s['strategy']}): {note if note else state + needs}")
    return out


def render_sent_example(prompt: PromptReport, example: ExampleReport, brief: bool) -> str | None:
    """One example as sent, or ``None`` when it has no plan at all (the caller shows the resolved view)."""
    preview = example["preview"]
    failure = example["preview_error"]
    if example["error"] is not None or (preview is None and failure is None):
        return None
    out = [headline(example)]
    if example["input"]:
        out.append(f"    input: {json.dumps(example['input'], ensure_ascii=False)}")
    if preview is None:
        if failure is not None:  # always, here: no plan and no refusal returned above
            out.append(f"    plan failed: {failure['code']}: {' | '.join(failure['message'].splitlines())}")
            out.extend(diagnostic_lines(failure["diagnostics"]))
        return "\n".join(out)
    out.extend(plan_lines(prompt, preview))
    inspection = example["inspection"]
    for exclusion in inspection["excluded_contexts"] if inspection is not None else []:
        out.append(f"    excluded: {exclusion['id']} ({exclusion['reason']}) {exclusion['detail']}".rstrip())
    for sentence in inspection["unmatched"] if inspection is not None else []:
        out.append(f"    FAILED: {sentence}")
    if preview["sent"] is None:
        out.append("    nothing would be sent: no plan fits the limit (--resolved shows the system text)")
        out.extend(diagnostic_lines(preview["diagnostics"]))
    else:
        out.extend(sent_lines(preview, brief, {p["source"]: p for p in inspection["parts"]} if inspection is not None else None))
    out.extend(summary_lines(example))
    if preview["candidates"]:
        out.append("    candidates:")
        for c in preview["candidates"]:
            mark = "selected" if c["selected"] else f"rejected ({c['rejection_reason'] or '-'})"
            out.append(f"      {c['contributor']} @ {rung_text(c)}: {candidate_tokens(c)}, {mark}")
    if example["truncated"]:
        out.append("    note: long texts were truncated in this report; token counts are of the full text")
    return "\n".join(out)
