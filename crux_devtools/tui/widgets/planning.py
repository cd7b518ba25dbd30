"""The "Planning" tab: the request plan (``RequestPreview.to_dict()``), read defensively.

The planning layer may be absent (plain prompts, or an engine without it): then the tab says so.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from .pane import ReportPane

LIMIT_KEYS = (
    "model",
    "tier",
    "input_tokens",
    "optimize_at",
    "max_input_tokens",
    "context_window",
    "output_reserve",
    "safety_margin",
    "overhead",
    "counting_confidence",
    "measurement",
)


def key_values(values: dict[str, Any], keys: tuple[str, ...] | None = None) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="dim")
    table.add_column(style="bold")
    for key in keys or tuple(values):
        if key in values and not isinstance(values[key], (dict, list)):
            table.add_row(Text(key.replace("_", " ")), Text(str(values[key])))
    return table


def candidates_table(candidates: list[dict[str, Any]]) -> Table:
    table = Table(title="Candidates", title_justify="left", expand=True, box=None, header_style="bold")
    for column in ("Contributor", "Rung", "Tokens", "Available", "Result"):
        table.add_column(column)
    for c in candidates:
        reason = c.get("rejection_reason")
        result = Text("selected", style="bold green") if c.get("selected") else Text(f"rejected: {reason or '?'}", style="dim")
        table.add_row(
            Text(str(c.get("contributor", "?"))),
            Text(str(c.get("representation", "?"))),
            Text("—" if c.get("input_tokens") is None else str(c["input_tokens"])),
            Text("yes" if c.get("available", True) else "no"),
            result,
        )
    return table


def breakdown_table(rows: list[dict[str, Any]]) -> Table:
    table = Table(title="Tokens by contributor", title_justify="left", expand=True, box=None, header_style="bold")
    for column in ("Contributor", "Kind", "Rung", "Tokens"):
        table.add_column(column, justify="right" if column == "Tokens" else "left")
    for row in rows:
        cells = (row.get("contributor", "?"), row.get("kind", ""), row.get("representation", ""), row.get("tokens", ""))
        table.add_row(*(Text(str(cell)) for cell in cells))
    return table


def render_error(error: dict[str, Any]) -> Text:
    code = error.get("code") or error.get("type") or "error"
    text = Text.assemble((f"{code}: ", "bold red"), str(error.get("message", "")))
    for diag in error.get("diagnostics", []) or []:
        text.append(f"\n  {diag.get('contributor') or diag.get('id')}: {diag.get('tokens', '?')} tok  {diag.get('message', '')}", "red")
    return text


def render_planning(example: dict[str, Any] | None) -> RenderableType:
    preview = (example or {}).get("preview")
    error = (example or {}).get("preview_error")
    if not preview:
        items: list[RenderableType] = [Text("planning not available for this example", style="dim italic")]
        if error:
            items.append(render_error(error))
        return Group(*items)
    status = preview.get("status", "?")
    items = [
        Text.assemble(("Plan: ", "bold"), (status, "bold green" if status == "fits" else "bold red")),
        Text("Derived limits", style="bold underline"),
        key_values(preview.get("limits") or preview, None if preview.get("limits") else LIMIT_KEYS),
    ]
    adaptations = preview.get("adaptations") or []
    items.append(Text("Adaptations: " + (", ".join(f"{a.get('contributor')} → {a.get('representation')} ({a.get('full_tokens')}→{a.get('selected_tokens')} tok)" for a in adaptations) or "none (full fidelity)")))
    if preview.get("tools"):
        items.append(Text("Tools offered: " + ", ".join(map(str, preview["tools"]))))
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
    """``data`` is an ``ExampleReport``."""

    def render_data(self) -> RenderableType:
        return render_planning(self.data)
