"""The "Errors" tab: load errors of the project and this example's errors, with tracebacks."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.rule import Rule
from rich.text import Text

from ...inspector.errors import LoadError
from ...inspector.report_types import ExampleReport, LoadErrorDict, Report
from .pane import ReportPane


def collect_errors(report: Report | None, example: ExampleReport | None) -> list[LoadErrorDict]:
    """Project load errors first, then the example's own error and the planner's refusal (shown
    under its code)."""
    errors = list(report["errors"]) if report is not None else []
    if example is not None and example["error"] is not None:
        errors.append(example["error"])
    if example is not None and example["preview_error"] is not None:
        refusal = example["preview_error"]
        errors.append(LoadError.plain(refusal["code"], refusal["message"]).to_dict())
    return errors


def render_errors(errors: list[LoadErrorDict], stale: bool) -> RenderableType:
    items: list[RenderableType] = []
    if stale:
        items.append(Text("The latest load failed: the other tabs show the last good report (stale).", style="bold yellow"))
    if not errors:
        items.append(Text("No errors.", style="green"))
    for error in errors:
        where = (error["file"] or "?") + (f":{error['line']}" if error["line"] else "")
        items.append(Rule(Text(f"{where}  {error['type']}", style="bold red"), align="left", style="red"))
        items.append(Text(error["message"], style="bold"))
        if error["traceback"]:
            items.append(Text(error["traceback"].rstrip(), style="dim"))
    return Group(*items)


class ErrorsView(ReportPane):
    """``data`` is ``(errors, stale)``."""

    def render_data(self) -> RenderableType:
        errors, stale = self.data or ([], False)
        return render_errors(errors, stale)
