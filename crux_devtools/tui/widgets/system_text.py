"""The "System text" tab: the resolved text, each part under a rule naming its source and tokens."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.rule import Rule
from rich.text import Text
from textual.reactive import reactive

from ...core.plan.rungs import label
from ..report import status_badge
from .pane import ReportPane

STATUS_STYLE = {"active": "green", "dropped": "red", "excluded": "dim"}


def totals_line(inspection: dict[str, Any], status: str = "fits") -> Text:
    """``system 48 + prompt 9 = 57 tokens · budget 50 · ✓ fits``, with the example's one status."""
    line = Text.assemble(
        ("system ", "dim"), (str(inspection.get("system_tokens", 0)), "bold"),
        (" + prompt ", "dim"), (str(inspection.get("prompt_tokens", 0)), "bold"),
        (" = ", "dim"), (f"{inspection.get('total_tokens', 0)} tokens", "bold"),
    )
    budget = inspection.get("token_budget")
    line.append(" · budget ", "dim")
    line.append(str(budget) if budget is not None else "none", "bold" if budget is not None else "dim")
    line.append(" · ")
    line.append(*status_badge(status))
    return line


def planner_line(preview: dict[str, Any]) -> Text | None:
    """``planned request 4,210 of max 4,285 tokens · catalog → summary (see Planning)``, when the
    planner adapted something: the text below is each part in full, as the resolver made it."""
    adaptations = preview.get("adaptations") or []
    if not adaptations:
        return None
    line = Text.assemble(
        ("planned request ", "dim"), (f"{preview.get('input_tokens', 0):,}", "bold"),
        (" of max ", "dim"), (f"{preview.get('max_input_tokens', 0):,}", "bold"), (" tokens · ", "dim"),
    )
    changes = ", ".join(f"{a.get('contributor')} → {label(a.get('representation'))}" for a in adaptations)
    line.append(changes, "bold yellow")
    line.append(" (full text below; see Planning)", "dim")
    return line


def part_rule(part: dict[str, Any], selected: bool) -> Rule:
    status = part.get("status", "active")
    bits = [part.get("source", "?")]
    if part.get("kind") and part.get("source") != "<prompt>":
        bits.append(part["kind"])
    if part.get("priority") is not None:
        eff = part.get("effective_priority")
        bits.append(f"p{part['priority']}" + (f"→{eff}" if eff is not None and eff != part["priority"] else ""))
    if status != "active":
        bits.append(f"{status} ({part.get('reason') or '?'})")
    bits.append(f"{part.get('tokens', 0)} tok")
    style = STATUS_STYLE.get(status, "")
    title = Text(" · ".join(bits), style=f"{style} reverse" if selected else f"bold {style}")
    return Rule(title, align="left", style=style or "blue")


def render_system(example: dict[str, Any] | None, selected_part: str | None) -> RenderableType:
    """The whole tab as one renderable; parts not in the text are shown as rules only."""
    if not example:
        return Text("Select a prompt on the left.", style="dim")
    inspection = example.get("inspection")
    if not inspection:
        return Text("No inspection for this example (see the Errors tab).", style="bold red")
    items: list[RenderableType] = [totals_line(inspection, str(example.get("status") or "error"))]
    planned = planner_line(example.get("preview") or {})
    if planned is not None:
        items.append(planned)
    for part in inspection.get("parts", []):
        items.append(part_rule(part, selected=part.get("source") == selected_part))
        text = part.get("text") or ""
        if part.get("status") == "active":
            if part.get("detail"):  # what a memory read, and what its budget left out
                items.append(Padding(Text(part["detail"], style="dim italic"), (0, 0, 0, 2)))
            items.append(Padding(Text(text or "(empty)", style="" if text else "dim"), (0, 0, 0, 2)))
        elif part.get("status") == "dropped" and text:
            first = text.strip().splitlines()[0] if text.strip() else ""
            items.append(Padding(Text(first, style="dim strike", no_wrap=True, overflow="ellipsis"), (0, 0, 0, 2)))
        elif part.get("detail"):
            items.append(Padding(Text(part["detail"], style="dim italic"), (0, 0, 0, 2)))
    if inspection.get("prompt") is not None:
        items.append(Rule(Text(f"user prompt · {inspection.get('prompt_tokens', 0)} tok", style="bold magenta"), align="left", style="magenta"))
        items.append(Padding(Text(inspection["prompt"]), (0, 0, 0, 2)))
    return Group(*items)


class SystemTextView(ReportPane):
    """Shows ``data`` (an ``ExampleReport``), highlighting ``selected_part``."""

    PANEL = "system"  # the registry's panel this widget renders (inspector/panels.py)

    selected_part: reactive[str | None] = reactive(None)

    def render_data(self) -> RenderableType:
        return render_system(self.data, self.selected_part)

    def watch_selected_part(self) -> None:
        self.refresh_body()
