"""The "Planning" tab: the request plan (``RequestPreview.to_dict()``): the model it was planned for,
the limits panel (``inspector.limits``: the rows the web page shows), drops, adaptations, summaries,
candidate rungs (labels and order from ``core.plan.rungs``).

An example whose planning failed has no plan: then the tab says so and shows the error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from ...core.plan.rungs import label
from ...inspector.features.shown.count_labels import AS_SENT, WHOLE_REQUEST, WITH_TOOLS
from ...inspector.features.shown.limits import limit_rows
from ...inspector.report_types import ContributionDict, ExampleReport, PlanErrorDict, PromptReport
from ...inspector.features.shown.sent import model_words, rung_text
from .pane import ReportPane
from ..report import RUNG_STYLE, status_badge


def limits_table(preview: Mapping[str, Any], plan_model: Mapping[str, Any] | None = None) -> Table:
    """The limits panel: label, value and what it means, one row each (``inspector.limits``). Labels
    and values are never cut; a narrow pane cuts the hint."""
    rows = limit_rows(preview, plan_model)
    table = Table.grid(padding=(0, 2))
    table.add_column(style="dim", no_wrap=True, min_width=max(len(r.label) for r in rows))
    table.add_column(style="bold", no_wrap=True, min_width=max(len(r.value) for r in rows))
    table.add_column(style="dim italic")  # may shrink: the hint is cut with an ellipsis, never wrapped
    for row in rows:
        table.add_row(Text(row.label), Text(row.value), Text(row.hint, no_wrap=True, overflow="ellipsis"))
    return table


def candidate_cells(c: Mapping[str, Any]) -> tuple[Text, Text]:
    """The rung's own tokens and the request's with it; an unprepared summary has neither yet."""
    if c.get("input_tokens") is None:
        word = "not prepared" if c.get("rejection_reason") == "unprepared" else "not available"
        return Text(word, style="cyan"), Text("—", style="dim")
    own = c.get("tokens")
    return Text("—" if own is None else f"{own:,}", justify="right"), Text(f"{c['input_tokens']:,}", justify="right")


def candidates_table(candidates: Sequence[Mapping[str, Any]]) -> Table:
    table = Table(title="Candidates", title_justify="left", expand=True, box=None, header_style="bold")
    for column in ("Contributor", "Rung", WITH_TOOLS, WHOLE_REQUEST, "Result"):
        table.add_column(column, justify="right" if column in (WITH_TOOLS, WHOLE_REQUEST) else "left")
    for c in candidates:
        reason = c.get("rejection_reason")
        result = Text("selected", style="bold green") if c.get("selected") else Text(f"rejected: {label(reason) or '?'}", style="dim")
        own, request = candidate_cells(c)
        table.add_row(Text(str(c.get("contributor", "?"))), Text(rung_text(c), style=RUNG_STYLE.get(str(c.get("representation")), "")), own, request, result)
    return table


def breakdown_table(rows: Sequence[ContributionDict]) -> Table:
    table = Table(title="Tokens by contributor", title_justify="left", expand=True, box=None, header_style="bold")
    for column in ("Contributor", "Kind", "Rung", f"Tokens {AS_SENT}"):
        table.add_column(column, justify="right" if column.startswith("Tokens") else "left")
    for row in rows:
        cells = (row["contributor"], row["kind"], label(row["representation"]), row["tokens"])
        table.add_row(*(Text(str(cell)) for cell in cells))
    return table


def render_error(error: PlanErrorDict) -> Text:
    """The planner's refusal: its code, message and diagnostics."""
    text = Text.assemble((f"{error['code']}: ", "bold red"), error["message"])
    for diag in error["diagnostics"]:
        text.append(f"\n  {diag['contributor'] or diag['id']}: {diag['tokens']} tok  {diag['message']}", "red")
    return text


def render_planning(example: ExampleReport | None, prompt: PromptReport | None = None) -> RenderableType:
    preview = example["preview"] if example is not None else None
    error = example["preview_error"] if example is not None else None
    if not preview:
        items: list[RenderableType] = [Text("planning not available for this example", style="dim italic")]
        if error:
            items.append(render_error(error))
        return Group(*items)
    badge = status_badge(str(example.get("status") or "error") if example is not None else "error")
    plan_model: dict[str, Any] = dict(prompt["plan_model"]) if prompt is not None else {}
    items = [
        Text.assemble(
            ("Plan: ", "bold"), badge,
            (f" · input {preview['input_tokens']:,} of max {preview['max_input_tokens']:,} tokens", ""),
        ),
        Text.assemble(("Planned for: ", "bold"), Text(model_words(preview, plan_model))),
    ]
    if plan_model.get("hint"):
        items.append(Text(str(plan_model["hint"]), style="dim italic"))
    items += [Text("Limits", style="bold underline"), limits_table(preview, plan_model)]
    dropped = preview.get("dropped") or []
    if dropped:
        items.append(Text(f"Dropped before planning (token_budget {preview['token_budget']}): " + ", ".join(f"{d['id']} (p{d['priority']}, {d['tokens']} tok, {d['reason']})" for d in dropped), style="red"))
    adaptations = preview["adaptations"]
    items.append(Text("Adaptations: " + (", ".join(f"{a['contributor']} → {rung_text(a)} ({a['full_tokens']}→{a['selected_tokens']} tok)" for a in adaptations) or "none (full fidelity)")
                      + (f" · tokens: {WITH_TOOLS}, full → as sent" if adaptations else "")))
    for s in example["summaries"] if example is not None else []:
        state = "prepared" if s["prepared"] else "not prepared (" + ("P prepares it with its model" if s["needs_model"] else "p prepares it, no model needed") + ")"
        if note := s.get("note"):  # prepared here as generate would, or prepared by generate before sending
            state = note + (" (P prepares it now)" if s.get("state") == "generate-prepares" else "")
        items.append(Text(f"Summary of {s['contributor']} ({s['strategy']}): {state}", style="cyan"))
    costs = preview["tool_tokens"]
    if preview["tools"]:
        items.append(Text("Tools sent: " + ", ".join(f"{name} ({costs[name]:,} tok)" if name in costs else str(name) for name in preview["tools"])))
    for warning in preview["warnings"]:
        items.append(Text(f"⚠ {warning}", style="yellow"))
    if preview["candidates"]:
        items.append(candidates_table(preview["candidates"]))
    if preview["breakdown"]:
        items.append(breakdown_table(preview["breakdown"]))
    if error:
        items.append(render_error(error))
    return Group(*items)


class PlanningView(ReportPane):
    """``data`` is ``(PromptReport, ExampleReport)``."""

    PANEL = "planning"  # the registry's panel this widget renders (inspector/features/shown/panels.py)

    def render_data(self) -> RenderableType:
        prompt, example = self.data or (None, None)
        return render_planning(example, prompt)
