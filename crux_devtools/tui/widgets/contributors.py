"""The "Contributors" tab: every part with its status, reason, tokens and priority."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import DataTable

from ...inspector.features.shown.count_labels import FULL_TEXT
from ...inspector.report_types import ExampleReport, PartDict

STATUS = {"active": ("● active", "green"), "excluded": ("○ excluded", "dim"), "dropped": ("✂ dropped", "red")}


def reason_text(part: PartDict) -> str:
    """Why a part is not active, in words: ``when: …``, ``budget``, ``parent-dropped``."""
    reason = part["reason"] or ""
    detail = part["detail"] or ""
    return f"{reason} · {detail}" if reason and detail else reason or detail


class ContributorsTable(DataTable[Any]):
    """One row per part of ``data`` (an ``ExampleReport``); highlighting a row posts ``PartHighlighted``."""

    PANEL = "contributors"  # the registry's panel this widget renders (inspector/features/shown/panels.py)

    data: reactive[ExampleReport | None] = reactive(None, always_update=True)

    @dataclass
    class PartHighlighted(Message):
        """The cursor is on a part: ``o`` opens this one's source."""

        source: str

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.zebra_stripes = True
        self.add_column("Source", key="source")
        self.add_column("Status", key="status")
        self.add_column(FULL_TEXT.capitalize(), key="tokens")  # the tokens of the resolved text alone (count_labels)
        self.add_column("Priority", key="priority")
        self.add_column("Reason", key="reason")
        self.watch_data()

    def watch_data(self) -> None:
        if not self.columns:
            return
        cursor = self.cursor_row
        self.clear()
        inspection = self.data["inspection"] if self.data is not None else None
        for part in inspection["parts"] if inspection is not None else []:
            label, style = STATUS.get(part["status"], (part["status"], ""))
            prio = part["priority"]
            eff = part["effective_priority"]
            prio_text = "" if prio is None else str(prio) if eff in (None, prio) else f"{prio}→{eff}"
            self.add_row(
                Text(part["source"], style="bold" if part["status"] == "active" else style),
                Text(label, style=style),
                Text(str(part["tokens"]), justify="right"),
                Text(prio_text, justify="right"),
                Text(reason_text(part), style=style),
                key=part["source"],
            )
        if self.row_count:
            self.move_cursor(row=min(cursor, self.row_count - 1))

    def select_part(self, source: str | None) -> None:
        """Put the cursor on ``source``'s row, if it is in the table."""
        if source is None:
            return
        for index, row_key in enumerate(self.rows):
            if row_key.value == source:
                self.move_cursor(row=index)
                return

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        # only the user's own moves count: a refill of the table must not steal the selection
        if self.has_focus and event.row_key.value is not None:
            self.post_message(self.PartHighlighted(event.row_key.value))
