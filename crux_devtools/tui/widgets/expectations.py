"""The "Expectations" tab: the example's expectations, whether each holds, where it is written and why not."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from ...inspector.features.shown.expectation_view import expectation_count, expectation_rows
from ...inspector.report_types import ExampleReport, PromptReport
from .pane import ReportPane

TONE_STYLE = {"fits": "green", "error": "bold red", "unchecked": "yellow"}


def render_expectations(prompt: PromptReport | None, example: ExampleReport | None) -> RenderableType:
    rows = expectation_rows(example)
    if not rows:
        return Text("No expectations for this example: write example({...}, expect=expect()...) in its examples.", style="dim")
    table = Table(expand=True, box=None, header_style="bold", pad_edge=False, show_header=True)
    table.add_column("", no_wrap=True)
    table.add_column("Expectation (where it is written), what held instead and why")
    for r in rows:
        why = Text(r.expect, style="bold" if r.state != "held" else "")
        why.append(f"  {r.where}", style="dim")
        for line in (r.held, r.reason):
            if line:
                why.append("\n" + line, style="dim")
        table.add_row(Text(f"{r.mark} {r.word}", style=TONE_STYLE.get(r.tone, "red")), why)
    return Group(Text(expectation_count(example) or "", style="dim"), table)


class ExpectationsView(ReportPane):
    """``data`` is ``(PromptReport, ExampleReport)``."""

    PANEL = "expectations"  # the registry's panel this widget renders (inspector/features/shown/panels.py)

    def render_data(self) -> RenderableType:
        prompt, example = self.data or (None, None)
        return render_expectations(prompt, example)
