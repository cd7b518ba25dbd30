"""The "System text" tab: the resolved text, each part under a rule naming its source and tokens."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.rule import Rule
from rich.text import Text
from textual.reactive import reactive

from ...core.plan.rungs import label
from ...inspector.report_types import ExampleReport, InspectionDict, PartDict, PreviewDict
from ..report import status_badge
from .pane import ReportPane

STATUS_STYLE = {"active": "green", "dropped": "red", "excluded": "dim"}


def totals_line(inspection: InspectionDict, status: str = "fits") -> Text:
    """``system 48 + prompt 9 = 57 tokens · budget 50 · ✓ fits``, with the example's one status."""
    line = Text.assemble(
        ("system ", "dim"), (str(inspection["system_tokens"]), "bold"),
        (" + prompt ", "dim"), (str(inspection.get("prompt_tokens", 0)), "bold"),
        (" = ", "dim"), (f"{inspection.get('total_tokens', 0)} tokens", "bold"),
    )
    budget = inspection["token_budget"]
    line.append(" · budget ", "dim")
    line.append(str(budget) if budget is not None else "none", "bold" if budget is not None else "dim")
    line.append(" · ")
    line.append(*status_badge(status))
    return line


def planner_line(preview: PreviewDict) -> Text | None:
    """``planned request 4,210 of max 4,285 tokens · catalog → summary (see Planning)``, when the
    planner adapted something: the text below is each part in full, as the resolver made it."""
    adaptations = preview["adaptations"]
    if not adaptations:
        return None
    line = Text.assemble(
        ("planned request ", "dim"), (f"{preview['input_tokens']:,}", "bold"),
        (" of max ", "dim"), (f"{preview['max_input_tokens']:,}", "bold"), (" tokens · ", "dim"),
    )
    changes = ", ".join(f"{a['contributor']} → {label(a['representation'])}" for a in adaptations)
    line.append(changes, "bold yellow")
    line.append(" (full text below; see Planning)", "dim")
    return line


def part_rule(part: PartDict, selected: bool) -> Rule:
    status = part["status"]
    bits = [part["source"]]
    if part["kind"] and part["source"] != "<prompt>":
        bits.append(part["kind"])
    if part["priority"] is not None:
        eff = part.get("effective_priority")
        bits.append(f"p{part['priority']}" + (f"→{eff}" if eff is not None and eff != part["priority"] else ""))
    if status != "active":
        bits.append(f"{status} ({part['reason'] or '?'})")
    bits.append(f"{part['tokens']} tok")
    style = STATUS_STYLE.get(status, "")
    title = Text(" · ".join(bits), style=f"{style} reverse" if selected else f"bold {style}")
    return Rule(title, align="left", style=style or "blue")


def render_system(example: ExampleReport | None, selected_part: str | None) -> RenderableType:
    """The whole tab as one renderable; parts not in the text are shown as rules only."""
    if not example:
        return Text("Select a prompt on the left.", style="dim")
    inspection = example["inspection"]
    if inspection is None:
        return Text("No inspection for this example (see the Errors tab).", style="bold red")
    items: list[RenderableType] = [totals_line(inspection, str(example.get("status") or "error"))]
    preview = example.get("preview")
    planned = planner_line(preview) if preview is not None else None
    if planned is not None:
        items.append(planned)
    for part in inspection["parts"]:
        items.append(part_rule(part, selected=part["source"] == selected_part))
        text = part["text"]
        if part["status"] == "active":
            if detail := part.get("detail"):  # what a memory read, and what its budget left out
                items.append(Padding(Text(detail, style="dim italic"), (0, 0, 0, 2)))
            items.append(Padding(Text(text or "(empty)", style="" if text else "dim"), (0, 0, 0, 2)))
        elif part["status"] == "dropped" and text:
            first = text.strip().splitlines()[0] if text.strip() else ""
            items.append(Padding(Text(first, style="dim strike", no_wrap=True, overflow="ellipsis"), (0, 0, 0, 2)))
        elif detail := part.get("detail"):
            items.append(Padding(Text(detail, style="dim italic"), (0, 0, 0, 2)))
    if inspection["prompt"] is not None:
        items.append(Rule(Text(f"user prompt · {inspection.get('prompt_tokens', 0)} tok", style="bold magenta"), align="left", style="magenta"))
        items.append(Padding(Text(inspection["prompt"]), (0, 0, 0, 2)))
    return Group(*items)


class SystemTextView(ReportPane):
    """Shows ``data`` (an ``ExampleReport``), highlighting ``selected_part``."""

    PANEL = "system"  # the registry's panel this widget renders (inspector/features/shown/panels.py)

    selected_part: reactive[str | None] = reactive(None)

    def render_data(self) -> RenderableType:
        return render_system(self.data, self.selected_part)

    def watch_selected_part(self) -> None:
        self.refresh_body(layout=False)  # only a part rule's style changed: the same lines
