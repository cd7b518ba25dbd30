"""The TUI's replay of a recorded step as Rich renderables (pure: tested without an app).

``render_variants`` lays the recorded request beside the current replay and up to three pinned
variants: input tokens and the change, status, each ladder's rung (changed ones marked), what was
left out, the cache prefix, each change in the review's words and the new text of a context whose
text changed. Every user text is a ``Text``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from ..inspector.features.replay.document import overrides_text
from ..inspector.features.shown.sent import system_parts
from ..review.render import describe, prefix_line
from .error_render import error_line


def _rungs(contributions: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    return {str(c.get("contributor")): str(c.get("representation")) for c in contributions if c.get("kind") == "ladder"}


def render_variants(step: Mapping[str, Any], variants: Sequence[tuple[str, Mapping[str, Any] | None, str | None]]) -> Group:
    """``variants``: (label, replay document or None, error or None), the current replay first."""
    request = step.get("request") or {}
    recorded_rungs = _rungs(request.get("contributions") or [])
    table = Table(show_lines=True, expand=True, header_style="bold")
    table.add_column(Text("recorded"), ratio=1)
    for label, _doc, _error in variants:
        table.add_column(Text(label), ratio=1)
    cells = [_recorded_cell(request.get("input_tokens"), recorded_rungs)]
    for _label, document, error in variants:
        cells.append(_variant_cell(document, error, recorded_rungs, request.get("input_tokens")))
    table.add_row(*cells)
    return Group(table)


def _recorded_cell(tokens: Any, rungs: Mapping[str, str]) -> Text:
    out = Text()
    out.append(f"{tokens:,}" if isinstance(tokens, int) else "?", style="bold")
    out.append(" input tokens\n")
    for contributor, rung in rungs.items():
        out.append(f"{contributor}: {rung}\n")
    return out


def _variant_cell(document: Mapping[str, Any] | None, error: str | None, recorded_rungs: Mapping[str, str], recorded_tokens: Any) -> Text:
    out = Text()
    if document is None:
        out.append(error or "replaying…", style="red" if error else "dim")
        return out
    replayed = document["replayed"]
    out.append(f"{replayed['input_tokens']:,}", style="bold")
    out.append(" input tokens")
    if isinstance(recorded_tokens, int) and replayed["input_tokens"] != recorded_tokens:
        delta = replayed["input_tokens"] - recorded_tokens
        out.append(f" {delta:+,}", style="yellow" if delta > 0 else "green")
    out.append(f"  {replayed['status']}\n", style="green" if replayed["status"] == "fits" else "bold red")
    out.append(f"max {replayed['max_input_tokens']:,} · optimize at {replayed['optimize_at']:,}\n", style="dim")
    if replayed["status"] != "fits":
        out.append(f"{replayed['error_code']}: nothing fits\n", style="bold red")
        for d in replayed.get("diagnostics") or []:
            out.append(f"  {d['contributor']}: {d['tokens']} tokens\n", style="red")
    for contributor, rung in _rungs(replayed["contributions"]).items():
        out.append(f"{contributor}: {rung}\n", style="yellow" if recorded_rungs.get(contributor) != rung else "")
    if replayed.get("left_out"):
        out.append(f"left out: {', '.join(replayed['left_out'])}\n")
    prefix = document.get("cache_prefix")
    line = prefix_line(prefix)
    out.append((line or ("the whole request is cacheable (unchanged)" if prefix else "nothing sent")) + "\n", style="cyan")
    if document["identical"]:
        out.append("identical to the recorded request\n", style="green")
    for change in document["changes"]:
        out.append(f"• {describe(change)}\n")
    out.append_text(_changed_texts(document))
    return out


def _changed_texts(document: Mapping[str, Any], lines: int = 8) -> Text:
    """The replayed text of each context whose text changed (a replay from today's source after an
    edit), its first ``lines`` lines, so the column shows what the request now says."""
    replayed = document["replayed"]
    changed = {str(c.get("context")) for c in document["changes"] if c.get("kind") == "text"}
    out = Text()
    if not changed or replayed["sent"] is None:
        return out
    for part in system_parts({"sent": replayed["sent"], "contributions": replayed["contributions"]}):
        if part.contributor in changed and part.text:
            rows = part.text.splitlines()
            out.append(f"{part.contributor} now says:\n", style="bold")
            out.append("\n".join(rows[:lines]) + ("\n…" if len(rows) > lines else "") + "\n", style="italic")
    return out


def render_sent(child: Mapping[str, Any]) -> Text:
    """What a send brought back (the child run): its id and status, the answer (or the tool calls, or
    the error), the usage and the latency."""
    steps = child.get("steps") or [{}]
    step = steps[0]
    out = Text()
    out.append("sent: ", style="bold")
    out.append(f"run {child.get('id')} ", style="cyan")
    out.append(str(child.get("status")), style="green" if child.get("status") == "ok" else "bold red")
    error = child.get("error")
    if isinstance(error, Mapping):
        out.append("\n")
        out.append_text(error_line(error))
    elif isinstance(step.get("response_text"), str):
        out.append("\n" + step["response_text"])
    else:
        out.append("\ntool calls: " + ", ".join(str(c.get("name")) for c in step.get("tool_calls") or []))
    usage = step.get("usage")
    used = f"usage {usage.get('input_tokens')} in / {usage.get('output_tokens')} out" if isinstance(usage, Mapping) else "usage not reported"
    out.append(f"\n{used} · {step.get('latency_ms')} ms", style="dim")
    return out


def variant_label(overrides: Mapping[str, Any], source: str = "recorded") -> str:
    """A column's title: its overrides in words (``as recorded`` for none); a replay from today's
    source says so first."""
    text = overrides_text(overrides)
    if source == "current":
        return "today's source" + ("" if text == "none" else f", {text}")
    return "as recorded" if text == "none" else text


__all__ = ["render_sent", "render_variants", "variant_label"]
