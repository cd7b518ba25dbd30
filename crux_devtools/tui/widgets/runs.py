"""The "Runs" tab: the project's recorded runs, newest first; Enter opens one.

The app hands the panel its rows (``show``); the panel posts ``OpenRun`` when the user picks one.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import DataTable, Static

from ..runs_render import RUN_COLUMNS, render_run_preview, run_row


class RunsTable(DataTable[Any]):
    """One row per run, keyed by the run's id."""

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.zebra_stripes = True
        for column in RUN_COLUMNS:
            self.add_column(column, key=column)


class RunsPanel(Vertical):
    """A line saying what is listed, the table of runs, and the highlighted run's error or answer."""

    class OpenRun(Message):
        """The user picked a run (Enter or a click on its row)."""

        def __init__(self, run_id: str) -> None:
            super().__init__()
            self.run_id = run_id

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.runs: list[dict[str, Any]] = []
        self._shown: list[tuple[Text, ...]] = []

    def compose(self) -> ComposeResult:
        yield Static(Text("Loading runs…", style="dim"), id="runs-heading")
        yield RunsTable(id="runs-table")
        yield Static(Text(""), id="runs-preview")

    def show(self, runs: list[dict[str, Any]], heading: Text) -> None:
        """List ``runs`` (newest first) under ``heading``; the cursor stays on the run it was on."""
        self.query_one("#runs-heading", Static).update(heading)
        table = self.query_one(RunsTable)
        now = datetime.now().astimezone()
        rows = [run_row(run, now) for run in runs]
        ids = [str(run.get("id")) for run in runs]
        if ids == [str(run.get("id")) for run in self.runs] and rows == self._shown:
            return  # nothing changed: no redraw
        current = self.highlighted_id()
        self.runs, self._shown = list(runs), rows
        table.clear()
        for run_id, row in zip(ids, rows, strict=True):
            table.add_row(*row, key=run_id)
        if current in ids:
            table.move_cursor(row=ids.index(current))
        self.show_preview()

    def highlighted_id(self) -> str | None:
        table = self.query_one(RunsTable)
        if not table.row_count or not self.runs:
            return None
        row = min(table.cursor_row, len(self.runs) - 1)
        return str(self.runs[row].get("id"))

    def select_run(self, run_id: str) -> None:
        """Put the cursor on ``run_id``'s row, if it is listed."""
        for index, run in enumerate(self.runs):
            if str(run.get("id")) == run_id:
                self.query_one(RunsTable).move_cursor(row=index)
                self.show_preview()
                return

    def show_preview(self) -> None:
        run_id = self.highlighted_id()
        run = next((r for r in self.runs if str(r.get("id")) == run_id), None)
        self.query_one("#runs-preview", Static).update(render_run_preview(run))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self.show_preview()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.row_key.value is not None:
            self.post_message(self.OpenRun(event.row_key.value))
