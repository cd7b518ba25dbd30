"""The "Request" tab: the request as sent (``preview["sent"]``), part by part with its rung.

The system text is cut at each contribution's ``span``; every character shown under a part is a
character sent. Then the messages, and every tool with its description, JSON schema and tokens.
User text is always a ``rich.text.Text`` (never parsed as markup).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import json
from typing import Any

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.rule import Rule
from rich.text import Text
from textual.reactive import reactive

from ...core.plan.rungs import in_place, rung_term, sent_as
from ...inspector.report_types import ExampleReport, PromptReport
from ...inspector.features.shown.sent import (
    MESSAGE_KINDS,
    TOOLS_KIND,
    SentPart,
    capacity_line,
    message_text,
    rung_text,
    system_parts,
    tokens_of,
)
from ...shapes import ToolSchemaDict
from ...statuses import term
from ..report import status_badge
from .pane import ReportPane



def headline(example: ExampleReport) -> Text:
    """``input 2,238 of max 5,292 tokens · ✓ fits``, and on a second line where they go:
    ``system 2,018 · messages 15 · tools 205``."""
    preview: Mapping[str, Any] = example["preview"] or {}
    badge, style = status_badge(example["status"])
    line = Text.assemble(
        ("input ", "dim"), (f"{preview['input_tokens']:,}", "bold"),
        (" of max ", "dim"), (f"{preview['max_input_tokens']:,}", "bold"), (" tokens · ", "dim"),
    )
    line.append(badge, style)
    if example["status"] != "fits":  # what the state means, on a line of its own
        line.append(f"\n{term(example['status']).means}", style)
    if preview["sent"] is not None:
        system = sum(p.tokens for p in system_parts(preview))
        line.append(f"\nsystem {system:,} · messages {tokens_of(preview, MESSAGE_KINDS):,} · tools {tokens_of(preview, (TOOLS_KIND,)):,}", "dim")
    return line


def plan_notes(prompt: PromptReport | None, example: ExampleReport) -> list[RenderableType]:
    """The model the plan is for, what the budget dropped, what the planner adapted, summaries."""
    preview: Mapping[str, Any] = example["preview"] or {}
    plan_model = dict(prompt["plan_model"]) if prompt is not None else None
    items: list[RenderableType] = [Text.assemble(("planned against ", "dim"), Text(capacity_line(preview, plan_model), style="dim"))]
    dropped = preview.get("dropped") or []
    if dropped:
        line = Text(f"dropped before planning (token_budget {preview['token_budget']}): ", style="red")
        line.append(Text(", ".join(f"{d['id']} p{d['priority']} {d['tokens']} tok" for d in dropped), style="bold red"))
        items.append(line)
    adaptations = preview["adaptations"]
    if adaptations:
        line = Text("adapted: ", style="yellow")
        for n, a in enumerate(adaptations):
            rung = rung_text(a)
            line.append(Text(f"{', ' if n else ''}{a['contributor']} → {rung} ({a['full_tokens']}→{a['selected_tokens']} tok)", style="bold yellow"))
        items.append(line)
    for s in example["summaries"]:
        if s.get("state") == "generate-prepares":
            items.append(Text(
                f"generate prepares the summary of {s['contributor']} with {s['model'] or 'its model'} before sending; "
                "this request is what is sent if that fails (P prepares it now)", style="bold yellow",
            ))
        elif s.get("state") == "prepared-here":
            items.append(Text(f"summary of {s['contributor']} ({s['strategy']}): {s.get('note')}", style="cyan"))
        elif s.get("state") == "cannot-fit":
            items.append(Text(f"summary of {s['contributor']} ({s['strategy']}): {s.get('note')}", style="dim"))
        elif not s["prepared"]:
            how = "press P (calls its model)" if s["needs_model"] else "press p to prepare it (no model needed)"
            items.append(Text(f"summary of {s['contributor']} ({s['strategy']}): not prepared; {how}", style="cyan"))
    return items


def part_rule(part: SentPart, selected: bool) -> Rule:
    style = rung_term(part.representation).tui_colour
    # the handle goes last: a narrow pane cuts it rather than the token count
    bits = [part.contributor, part.kind, sent_as(part.representation, variant=part.variant)]
    if part.text is not None:
        bits.append(f"{part.tokens:,} tok")
    if part.handle:
        bits.append(f"handle {part.handle}")
    title = Text(" · ".join(bits), style=f"{style} reverse" if selected else f"bold {style}")
    return Rule(title, align="left", style=style)


def section(title: str) -> Rule:
    return Rule(Text(title, style="bold"), align="left", style="bold white", characters="━")


def system_section(preview: Mapping[str, Any], details: dict[str, str], selected_part: str | None) -> tuple[list[RenderableType], int | None]:
    """The system text part by part; also the index of the selected part's rule, if any."""
    parts = system_parts(preview)
    items: list[RenderableType] = [section(f"System text · {sum(p.tokens for p in parts):,} tok")]
    selected: int | None = None
    for part in parts:
        if part.contributor == selected_part and selected is None:
            selected = len(items)
        items.append(part_rule(part, selected=part.contributor == selected_part))
        sentence = in_place(part.representation, source=part.contributor, variant=part.variant, handle=part.handle)
        if sentence:  # what the part stands in for, in the rung vocabulary's words
            items.append(Padding(Text(f"({sentence})", style="dim italic"), (0, 0, 0, 2)))
        if part.text is None:
            continue
        if details.get(part.contributor):  # what a memory read: a note, not sent
            items.append(Padding(Text(details[part.contributor], style="dim italic"), (0, 0, 0, 2)))
        items.append(Padding(Text(part.text), (0, 0, 0, 2)))
    return items, selected


def messages_section(preview: Mapping[str, Any]) -> list[RenderableType]:
    messages = preview["sent"]["messages"]
    items: list[RenderableType] = [section(f"Messages · {len(messages)} · {tokens_of(preview, MESSAGE_KINDS):,} tok")]
    if not messages:
        items.append(Text("  none", style="dim"))
    for message in messages:
        items.append(Rule(Text(str(message.get("role", "?")), style="bold magenta"), align="left", style="magenta"))
        items.append(Padding(Text(message_text(message)), (0, 0, 0, 2)))
        for call in message.get("tool_calls") or []:
            items.append(Padding(Text(f"tool call: {json.dumps(call, ensure_ascii=False)}", style="cyan"), (0, 0, 0, 2)))
    return items


def schema_text(parameters: Any) -> Text:
    """A tool's JSON schema, pretty-printed, as plain text (never markup)."""
    return Text(json.dumps(parameters, indent=2, ensure_ascii=False), style="green")


def tool_block(tool: ToolSchemaDict, tokens: int | None) -> list[RenderableType]:
    cost = f" · {tokens:,} tok" if tokens is not None else ""
    return [
        Rule(Text(f"{tool['name']}{cost}", style="bold"), align="left", style="green"),
        Padding(Text(tool["description"] or "(no description)", style="italic"), (0, 0, 0, 2)),
        Padding(schema_text(tool["parameters"]), (0, 0, 0, 2)),
    ]


def tools_section(preview: Mapping[str, Any]) -> list[RenderableType]:
    tools = preview["sent"]["tools"]
    costs = preview["tool_tokens"]
    items: list[RenderableType] = [section(f"Tools · {len(tools)} · {tokens_of(preview, (TOOLS_KIND,)):,} tok")]
    if not tools:
        items.append(Text("  none", style="dim"))
    for tool in tools:
        items.extend(tool_block(tool, costs.get(tool["name"])))
    return items


def nothing_sent(example: ExampleReport) -> list[RenderableType]:
    """Why there is no request: the example failed, planning failed, or no plan fits."""
    preview = example["preview"]
    failure = example["preview_error"]
    if example["error"] is not None:
        return [Text("No request: this example failed (see the Errors tab).", style="bold red")]
    if preview is None and failure is None:
        return [Text("No plan for this example: see the System text tab.", style="dim italic")]
    items: list[RenderableType] = [Text("Nothing would be sent: no plan fits the limit.", style="bold red")]
    diagnostics = preview["diagnostics"] if preview is not None else failure["diagnostics"] if failure is not None else None
    if failure is not None and preview is None:
        items.append(Text(f"{failure['code']}: {failure['message']}", style="red"))
    for diag in diagnostics or []:
        items.append(Text(f"  {diag['contributor'] or diag['id']}: {diag['tokens']} tok  {diag['message']}", style="red"))
    items.append(Text("Raise the budget (+), or see Planning and System text.", style="dim"))
    return items


def request_items(prompt: PromptReport | None, example: ExampleReport | None, selected_part: str | None = None) -> tuple[list[RenderableType], int | None]:
    """The tab's renderables, and the index of the selected part's rule (to scroll to it)."""
    if not example:
        return [Text("Select a prompt on the left.", style="dim")], None
    preview = example["preview"]
    items: list[RenderableType] = []
    if preview is not None:
        items.append(headline(example))
        items.extend(plan_notes(prompt, example))
    sent = preview["sent"] if preview is not None else None
    if preview is None or sent is None:
        items.extend(nothing_sent(example))
        return items, None
    inspection = example["inspection"]
    details = {p["source"]: p["detail"] for p in (inspection["parts"] if inspection is not None else []) if p["detail"]}
    system, index = system_section(preview, details, selected_part)
    selected = None if index is None else len(items) + index
    items.extend(system)
    items.extend(messages_section(preview))
    items.extend(tools_section(preview))
    max_tokens = sent["max_tokens"]
    reserve = preview.get("output_reserve")
    items.append(Text(f"max_tokens {max_tokens:,}" if max_tokens is not None else f"max_tokens not set (output reserve {reserve:,} planned)" if isinstance(reserve, int) else "max_tokens not set", style="dim"))
    if example["truncated"]:
        items.append(Text("Long texts were cut in this report; token counts are of the full text.", style="yellow"))
    return items, selected


def render_request(prompt: PromptReport | None, example: ExampleReport | None, selected_part: str | None = None) -> RenderableType:
    """The whole tab as one renderable."""
    return Group(*request_items(prompt, example, selected_part)[0])


class RequestView(ReportPane):
    """``data`` is ``(PromptReport, ExampleReport)``; ``selected_part`` is highlighted, and the view
    scrolls to it (a part may sit below a long one)."""

    PANEL = "request"  # the registry's panel this widget renders (inspector/features/shown/panels.py)

    selected_part: reactive[str | None] = reactive(None)

    def render_data(self) -> RenderableType:
        prompt, example = self.data or (None, None)
        return render_request(prompt, example, self.selected_part)

    def watch_selected_part(self, selected: str | None) -> None:
        self.refresh_body(layout=False)  # only a part rule's style changed: the same lines
        if selected is None:
            self.scroll_home(animate=False)  # a prompt was selected: its request from the top
        else:
            self.call_after_refresh(self.scroll_to_selected)

    def watch_data(self) -> None:
        self.refresh_body()
        if self.selected_part is not None:  # another example: find the part again
            self.call_after_refresh(self.scroll_to_selected)

    def scroll_to_selected(self) -> None:
        """Scroll so that the selected part's rule is the first line on screen."""
        prompt, example = self.data or (None, None)
        items, index = request_items(prompt, example, self.selected_part)
        if index is None:
            return
        width = self.scrollable_content_region.width
        if width <= 0:
            return
        console = self.app.console
        above = console.render_lines(Group(*items[:index]), console.options.update_width(width), pad=False)
        self.scroll_to(y=len(above), animate=False)
