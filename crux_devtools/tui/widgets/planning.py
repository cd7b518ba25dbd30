"""The "Planning" tab: the request plan (``RequestPreview.to_dict()``): the capacity profile it used,
the derived limits (the same list as the web page), drops, adaptations, summaries, candidate rungs.

An example whose planning failed has no plan: then the tab says so and shows the error.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from ...inspector.report_types import ExampleReport, PlanErrorDict, PromptReport
from ...inspector.sent import capacity_line
from .pane import ReportPane
from .request import RUNG_STYLE

# The derived limits, in the order and with the names the web page uses.
LIMITS = (
    ("context_window", "context window"),
    ("output_reserve", "output reserve"),
    ("safety_margin", "safety margin"),
    ("overhead", "overhead"),
    ("max_input_tokens", "max input"),
    ("optimize_at", "optimize_at"),
    ("measurement", "measurement"),
    ("capacity_source", "capacity source"),
)


def limits_table(preview: dict[str, Any]) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="dim")
    table.add_column(style="bold")
    for key, label in LIMITS:
        value = preview.get(key)
        table.add_row(Text(label), Text(f"{value:,}" if isinstance(value, int) else str(value) if value is not None else "—"))
    return table


def candidate_cells(c: dict[str, Any]) -> tuple[Text, Text]:
    """The rung's own tokens and the request's with it; an unprepared summary has neither yet."""
    if c.get("input_tokens") is None:
        word = "not prepared" if c.get("rejection_reason") == "unprepared" else "not available"
        return Text(word, style="cyan"), Text("—", style="dim")
    own = c.get("tokens")
    return Text("—" if own is None else f"{own:,}", justify="right"), Text(f"{c['input_tokens']:,}", justify="right")


def candidates_table(candidates: list[dict[str, Any]]) -> Table:
    table = Table(title="Candidates", title_justify="left", expand=True, box=None, header_style="bold")
    for column in ("Contributor", "Rung", "Tokens", "Request", "Result"):
        table.add_column(column, justify="right" if column in ("Tokens", "Request") else "left")
    for c in candidates:
        reason = c.get("rejection_reason")
        result = Text("selected", style="bold green") if c.get("selected") else Text(f"rejected: {reason or '?'}", style="dim")
        rung = str(c.get("representation", "?")) + (f": {c['variant']}" if c.get("variant") else "")
        own, request = candidate_cells(c)
        table.add_row(Text(str(c.get("contributor", "?"))), Text(rung, style=RUNG_STYLE.get(str(c.get("representation")), "")), own, request, result)
    return table


def breakdown_table(rows: list[dict[str, Any]]) -> Table:
    table = Table(title="Tokens by contributor", title_justify="left", expand=True, box=None, header_style="bold")
    for column in ("Contributor", "Kind", "Rung", "Tokens"):
        table.add_column(column, justify="right" if column == "Tokens" else "left")
    for row in rows:
        cells = (row.get("contributor", "?"), row.get("kind", ""), row.get("representation", ""), row.get("tokens", ""))
        table.add_row(*(Text(str(cell)) for cell in cells))
    return table


def render_error(error: PlanErrorDict) -> Text:
    """The planner's refusal: its code, message and diagnostics."""
    text = Text.assemble((f"{error['code']}: ", "bold red"), error["message"])
    for diag in error["diagnostics"]:
        text.append(f"\n  {diag.get('contributor') or diag.get('id')}: {diag.get('tokens', '?')} tok  {diag.get('message', '')}", "red")
    return text


def render_planning(example: ExampleReport | None, prompt: PromptReport | None = None) -> RenderableType:
    preview = example["preview"] if example is not None else None
    error = example["preview_error"] if example is not None else None
    if not preview:
        items: list[RenderableType] = [Text("planning not available for this example", style="dim italic")]
        if error:
            items.append(render_error(error))
        return Group(*items)
    status = preview.get("status", "?")
    plan_model: dict[str, Any] = dict(prompt["plan_model"]) if prompt is not None else {}
    items = [
        Text.assemble(
            ("Plan: ", "bold"), (str(status), "bold green" if status == "fits" else "bold red"),
            (f" · input {preview.get('input_tokens', 0):,} of max {preview.get('max_input_tokens', 0):,} tokens", ""),
            (f" · tier {preview.get('tier')}" if preview.get("tier") else "", "dim"),
        ),
        Text.assemble(("Capacity profile: ", "bold"), Text(capacity_line(preview, plan_model))),
    ]
    if plan_model.get("hint"):
        items.append(Text(str(plan_model["hint"]), style="dim italic"))
    items += [Text("Derived limits", style="bold underline"), limits_table(preview)]
    dropped = preview.get("dropped") or []
    if dropped:
        items.append(Text(f"Dropped before planning (token_budget {preview.get('token_budget')}): " + ", ".join(f"{d.get('id')} (p{d.get('priority')}, {d.get('tokens')} tok, {d.get('reason')})" for d in dropped), style="red"))
    adaptations = preview.get("adaptations") or []
    items.append(Text("Adaptations: " + (", ".join(f"{a.get('contributor')} → {a.get('representation')}{': ' + a['variant'] if a.get('variant') else ''} ({a.get('full_tokens')}→{a.get('selected_tokens')} tok)" for a in adaptations) or "none (full fidelity)")))
    for s in example["summaries"] if example is not None else []:
        state = "prepared" if s.get("prepared") else "not prepared (" + ("P prepares it with its model" if s.get("needs_model") else "p prepares it, no model needed") + ")"
        items.append(Text(f"Summary of {s.get('contributor')} ({s.get('strategy')}): {state}", style="cyan"))
    costs = preview.get("tool_tokens") or {}
    if preview.get("tools"):
        items.append(Text("Tools sent: " + ", ".join(f"{name} ({costs[name]:,} tok)" if name in costs else str(name) for name in preview["tools"])))
    for warning in preview.get("warnings") or []:
        items.append(Text(f"⚠ {warning}", style="yellow"))
    if preview.get("candidates"):
        items.append(candidates_table(preview["candidates"]))
    if preview.get("breakdown"):
        items.append(breakdown_table(preview["breakdown"]))
    if error:
        items.append(render_error(error))
    return Group(*items)


class PlanningView(ReportPane):
    """``data`` is ``(PromptReport, ExampleReport)``."""

    def render_data(self) -> RenderableType:
        prompt, example = self.data or (None, None)
        return render_planning(example, prompt)
