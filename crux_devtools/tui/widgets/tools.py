"""The "Tools" tab: every tool the prompt can reach, whether it is sent for this example and why not,
what its schema costs, then each sent tool's description and JSON schema."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from ...inspector.sent import TOOLS_KIND, tokens_of
from .pane import ReportPane
from .request import tool_block


def why_not_sent(name: str, prompt: dict[str, Any] | None, example: dict[str, Any]) -> str:
    """Why a reachable tool is not in the sent request: its context was excluded, dropped by the
    token_budget, or omitted by the planner."""
    preview = example.get("preview") or {}
    owners = [c.get("id") for c in (prompt or {}).get("contexts") or [] if name in (c.get("tools") or [])]
    for c in preview.get("contributions") or []:
        if c.get("representation") == "omitted" and (name in (c.get("tools") or []) or c.get("contributor") in owners):
            return f"no ({c.get('contributor')} omitted by the planner)"
    dropped = {d.get("id") for d in preview.get("dropped") or []}
    for owner in owners:
        if owner in dropped:
            return f"no ({owner} dropped by token_budget)"
    statuses = {p.get("source"): p.get("status") for p in (example.get("inspection") or {}).get("parts") or []}
    for owner in owners:
        if statuses.get(owner) == "dropped":
            return f"no ({owner} dropped by token_budget)"
    if preview and preview.get("sent") is None:
        return "no (nothing would be sent)"
    return "no (its context is excluded)"


def render_tools(prompt: dict[str, Any] | None, example: dict[str, Any] | None) -> RenderableType:
    example = example or {}
    inspection = example.get("inspection") or {}
    preview = example.get("preview") or {}
    sent = preview.get("sent")
    sent_tools = (sent or {}).get("tools") or []
    # what is sent when there is a plan; without one, what the resolver offers
    offered = [t.get("name") for t in sent_tools] if sent is not None else list(inspection.get("tools", []))
    sources = inspection.get("tool_sources", {})
    costs = preview.get("tool_tokens") or {}
    reachable = (prompt or {}).get("tools", [])
    table = Table(expand=True, box=None, header_style="bold", pad_edge=False)
    table.add_column("Tool")
    table.add_column("From")
    table.add_column("Sent")
    table.add_column("Tokens", justify="right")
    for name in sorted(set(offered) | set(reachable), key=str):
        on = name in offered
        source = sources.get(name) or ("planner (support tool)" if on and name not in reachable else "")
        table.add_row(
            Text(str(name), style="bold" if on else "dim"),
            Text(str(source)),
            Text("yes" if on else why_not_sent(str(name), prompt, example), style="green" if on else "dim"),
            Text(f"{costs[name]:,}" if on and name in costs else "", justify="right"),
        )
    if not table.rows:
        return Text("This prompt offers no tools.", style="dim")
    total = tokens_of(preview, (TOOLS_KIND,))
    items: list[RenderableType] = []
    if sent is not None:
        items.append(Text(f"{len(sent_tools)} tool(s) sent for this example · {total:,} of {preview.get('input_tokens', 0):,} input tokens are tool schemas", style="dim"))
    else:
        items.append(Text(f"{len(offered)} tool(s) offered by the resolver (no request is planned)", style="dim"))
    items.append(table)
    for tool in sent_tools:
        items.extend(tool_block(tool, costs.get(tool.get("name"))))
    return Group(*items)


class ToolsView(ReportPane):
    """``data`` is ``(PromptReport, ExampleReport)``."""

    PANEL = "tools"  # the registry's panel this widget renders (inspector/panels.py)

    def render_data(self) -> RenderableType:
        prompt, example = self.data or (None, None)
        return render_tools(prompt, example)
