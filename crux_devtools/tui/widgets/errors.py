"""The "Errors" tab: load errors of the project and this example's errors, with tracebacks."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.rule import Rule
from rich.text import Text

from .pane import ReportPane


def collect_errors(report: dict[str, Any] | None, example: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Project load errors first, then the example's own error and planning error."""
    errors = list((report or {}).get("errors") or [])
    for key in ("error", "preview_error"):
        error = (example or {}).get(key)
        if error:
            errors.append(error)
    return errors


def render_errors(errors: list[dict[str, Any]], stale: bool) -> RenderableType:
    items: list[RenderableType] = []
    if stale:
        items.append(Text("The latest load failed: the other tabs show the last good report (stale).", style="bold yellow"))
    if not errors:
        items.append(Text("No errors.", style="green"))
    for error in errors:
        where = str(error.get("file") or "?") + (f":{error['line']}" if error.get("line") else "")
        kind = error.get("type") or error.get("code") or "Error"
        items.append(Rule(Text(f"{where}  {kind}", style="bold red"), align="left", style="red"))
        items.append(Text(str(error.get("message", "")), style="bold"))
        if error.get("traceback"):
            items.append(Text(str(error["traceback"]).rstrip(), style="dim"))
    return Group(*items)


class ErrorsView(ReportPane):
    """``data`` is ``(errors, stale)``."""

    def render_data(self) -> RenderableType:
        errors, stale = self.data or ([], False)
        return render_errors(errors, stale)
