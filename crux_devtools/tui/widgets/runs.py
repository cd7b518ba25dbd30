"""The "Runs" tab: agent runs of this session, newest first, with the receipt of every step."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.rule import Rule
from rich.text import Text

from .pane import ReportPane


def render_step(step: dict[str, Any]) -> list[RenderableType]:
    receipt = step.get("request") or {}
    items: list[RenderableType] = [
        Text.assemble(
            (f"Step {step.get('index', '?')}", "bold"),
            (f"  {receipt.get('input_tokens', '?')}/{receipt.get('max_input_tokens', '?')} input tokens", ""),
            (f"  optimize at {receipt.get('optimize_at', '?')}", "dim"),
            (f"  {receipt.get('measurement', '')}", "dim"),
            (f"  epoch {receipt.get('epoch', '?')}", "dim"),
        )
    ]
    adaptations = receipt.get("adaptations") or []
    items.append(Text("  adaptations: " + (", ".join(f"{a.get('contributor')} → {a.get('representation')}" for a in adaptations) or "none"), style="dim"))
    for warning in receipt.get("warnings") or []:
        items.append(Text(f"  ⚠ {warning}", style="yellow"))
    for call in step.get("tool_calls") or []:
        items.append(Text(f"  → tool call {call.get('name', '?')}({call.get('arguments', '')})", style="cyan"))
    for result in step.get("tool_results") or []:
        shown = str(result.get("model_output", result.get("output", ""))).strip()
        first = shown.splitlines()[0] if shown else ""
        more = " …" if "\n" in shown else ""
        items.append(Text(f"  ← {result.get('name', '?')}: {first}{more}", style="cyan", no_wrap=True, overflow="ellipsis"))
    for off in step.get("offloads") or []:
        items.append(Text(f"  offloaded {off.get('handle', '?')} ({off.get('byte_size', '?')} bytes)", style="magenta"))
    if step.get("response_text"):
        items.append(Text(f"  ⇐ {step['response_text']}"))
    return items


def render_runs(runs: list[dict[str, Any]] | None, can_run: bool) -> RenderableType:
    if not runs:
        hint = "Press r to run this agent." if can_run else "Only agents with a model can be run."
        return Text(f"No runs yet. {hint}", style="dim")
    items: list[RenderableType] = []
    for number, run in enumerate(runs, start=1):
        steps = run.get("steps") or []
        items.append(Rule(Text(f"run {len(runs) - number + 1} · {len(steps)} step(s)", style="bold"), align="left"))
        if run.get("error"):
            error = run["error"]
            message = error.get("message", error) if isinstance(error, dict) else error
            items.append(Text(f"error: {message}", style="bold red"))
        for step in steps:
            items.extend(render_step(step))
        if run.get("text"):
            items.append(Text.assemble(("answer: ", "bold green"), str(run["text"])))
    return Group(*items)


class RunsView(ReportPane):
    """``data`` is ``(runs newest first, can_run)``."""

    def render_data(self) -> RenderableType:
        runs, can_run = self.data or ([], False)
        return render_runs(runs, can_run)
