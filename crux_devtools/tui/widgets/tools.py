"""The "Tools" tab: every tool the prompt can reach, whether it is sent for this example and why not,
what its schema costs, then each sent tool's description and JSON schema."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from ...inspector.report_types import ExampleReport, PromptReport
from ...inspector.features.shown.sent import TOOLS_KIND, tokens_of
from .pane import ReportPane
from .request import tool_block


def why_not_sent(name: str, prompt: PromptReport | None, example: ExampleReport | None) -> str:
    """Why a reachable tool is not in the sent request: its context was excluded, dropped by the
    token_budget, or omitted by the planner."""
    preview = example["preview"] if example is not None else None
    inspection = example["inspection"] if example is not None else None
    owners = [c["id"] for c in (prompt["contexts"] if prompt is not None else []) if name in c["tools"]]
    for c in preview["contributions"] if preview is not None else []:
        if c["representation"] == "omitted" and (name in c["tools"] or c["contributor"] in owners):
            return f"no ({c['contributor']} omitted by the planner)"
    dropped = {d["id"] for d in preview["dropped"]} if preview is not None else set()
    for owner in owners:
        if owner in dropped:
            return f"no ({owner} dropped by token_budget)"
    statuses = {p["source"]: p["status"] for p in inspection["parts"]} if inspection is not None else {}
    for owner in owners:
        if statuses.get(owner) == "dropped":
            return f"no ({owner} dropped by token_budget)"
    if preview is not None and preview["sent"] is None:
        return "no (nothing would be sent)"
    return "no (its context is excluded)"


def render_tools(prompt: PromptReport | None, example: ExampleReport | None) -> RenderableType:
    inspection = example["inspection"] if example is not None else None
    preview = example["preview"] if example is not None else None
    sent = preview["sent"] if preview is not None else None
    sent_tools = sent["tools"] if sent is not None else []
    # what is sent when there is a plan; without one, what the resolver offers
    offered = [t["name"] for t in sent_tools] if sent is not None else list(inspection["tools"] if inspection is not None else [])
    sources = inspection["tool_sources"] if inspection is not None else {}
    costs = preview["tool_tokens"] if preview is not None else {}
    reachable = prompt["tools"] if prompt is not None else []
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
            Text("yes" if on else why_not_sent(name, prompt, example), style="green" if on else "dim"),
            Text(f"{costs[name]:,}" if on and name in costs else "", justify="right"),
        )
    if not table.rows:
        return Text("This prompt offers no tools.", style="dim")
    total = tokens_of(preview, (TOOLS_KIND,)) if preview is not None else 0
    items: list[RenderableType] = []
    if preview is not None and sent is not None:
        items.append(Text(f"{len(sent_tools)} tool(s) sent for this example · {total:,} of {preview['input_tokens']:,} input tokens are tool schemas", style="dim"))
    else:
        items.append(Text(f"{len(offered)} tool(s) offered by the resolver (no request is planned)", style="dim"))
    items.append(table)
    for tool in sent_tools:
        items.extend(tool_block(tool, costs.get(tool["name"])))
    return Group(*items)


class ToolsView(ReportPane):
    """``data`` is ``(PromptReport, ExampleReport)``."""

    PANEL = "tools"  # the registry's panel this widget renders (inspector/features/shown/panels.py)

    def render_data(self) -> RenderableType:
        prompt, example = self.data or (None, None)
        return render_tools(prompt, example)
