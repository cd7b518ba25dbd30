"""The "Errors" tab: load errors of the project and this example's errors, with tracebacks."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from ...inspector.errors import LoadError
from ...inspector.report_types import ExampleReport, LoadErrorDict, PromptReport, Report
from ...statuses import term, word
from ..error_render import render_error
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


def notes(report: Report | None, prompt: PromptReport | None) -> list[str]:
    """What the tab says besides errors: why a prompt was not checked, and which files the worker
    imports (runs on every save) and why."""
    out = []
    if prompt is not None and prompt["status"] == "not-checked":
        out.append(f"{word('not-checked')}: {prompt['note'] or term('not-checked').means}")
    if report is not None and report.get("imported_note"):
        out.append(str(report["imported_note"]))
    return out


def render_errors(errors: list[LoadErrorDict], stale: bool, notes: list[str] | None = None) -> RenderableType:
    items: list[RenderableType] = [Text(note, style="yellow" if note.startswith(word("not-checked")) else "dim") for note in notes or []]
    if stale:
        items.append(Text("The latest load failed: the other tabs show the last good report (stale).", style="bold yellow"))
    if not errors:
        items.append(Text("No errors.", style="green"))
    for error in errors:
        items.extend(render_error(error))
    return Group(*items)


class ErrorsView(ReportPane):
    """``data`` is ``(errors, stale, notes)``."""

    PANEL = "errors"  # the registry's panel this widget renders (inspector/features/shown/panels.py)

    def render_data(self) -> RenderableType:
        errors, stale, shown_notes = self.data or ([], False, [])
        return render_errors(errors, stale, shown_notes)
