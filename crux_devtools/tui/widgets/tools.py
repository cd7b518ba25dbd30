"""The "Tools" tab: what the model would be offered, and which part brought each tool."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from .pane import ReportPane


def render_tools(prompt: dict[str, Any] | None, example: dict[str, Any] | None) -> RenderableType:
    inspection = (example or {}).get("inspection") or {}
    offered = inspection.get("tools", [])
    sources = inspection.get("tool_sources", {})
    reachable = (prompt or {}).get("tools", [])
    table = Table(expand=True, box=None, header_style="bold", pad_edge=False)
    table.add_column("Tool")
    table.add_column("From")
    table.add_column("Offered")
    for name in sorted(set(offered) | set(reachable)):
        on = name in offered
        table.add_row(
            Text(name, style="bold" if on else "dim"),
            Text(str(sources.get(name, ""))),
            Text("yes" if on else "no (its context is excluded)", style="green" if on else "dim"),
        )
    if not table.rows:
        return Text("This prompt offers no tools.", style="dim")
    return Group(Text(f"{len(offered)} tool(s) offered for this example", style="dim"), table)


class ToolsView(ReportPane):
    """``data`` is ``(PromptReport, ExampleReport)``."""

    def render_data(self) -> RenderableType:
        prompt, example = self.data or (None, None)
        return render_tools(prompt, example)
