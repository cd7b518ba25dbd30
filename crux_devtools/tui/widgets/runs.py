"""The "Runs" tab: the project's recorded runs, newest first; Enter opens one.

``RunsPanel`` reads the session's ``RunStore`` (``session.runs()``, ``core/record/runstore.py``) on the UI
thread: a list of 50 summaries is one indexed SQLite query (WAL, so a writer never blocks it). When
the store cannot be opened, it lists the runs this TUI started and says that history is off.

It owns its keys (in the footer while the runs table has the focus): ``f`` lists only the runs of
the prompt selected in the tree (``prompt_id``, set by the prompt view; the list follows it), ``x``
all runs again. Picking a run posts ``OpenRun``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import DataTable, Static

from ..messages import PaneTitled
from ..runs_render import RUN_COLUMNS, cost_column, render_run_preview, run_row

LIST_LIMIT = 50  # rows in the Runs tab (newest first); the CLI and the web page page through the rest


def runs_heading(target: str | None, total: int, shown_total: int, listed: int, cost: str, note: str | None) -> Text:
    """What is listed (all runs, or one prompt's), how many, their cost, and the keys."""
    heading = Text()
    if target is None:
        heading.append("All runs", "bold")
        heading.append(f" · {total:,} · cost {cost}", "dim")
        heading.append("   f: only the selected prompt's", "dim")
    else:
        heading.append("Runs of ", "bold")
        heading.append(target, "bold cyan")
        heading.append(f" · {shown_total:,} of {total:,} · cost {cost}", "dim")
        heading.append("   f or x: all runs", "dim")
    if shown_total > listed:
        heading.append(f"   newest {listed} shown", "dim")
    heading.append("   Enter: open a run", "dim")
    if not listed:
        heading.append(
            "\nNo runs yet. Press r on an agent, or record your application's runs: record_runs(dir) in its code, "
            "or CRUX_DEVTOOLS_RECORD=DIR in its environment.",
            "dim italic",
        )
    if note:
        heading.append(f"\n{note}", "yellow")
    return heading


class RunsTable(DataTable[Any]):
    """One row per run, keyed by the run's id."""

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.zebra_stripes = True
        for column in RUN_COLUMNS:
            self.add_column(column, key=column)


class RunsPanel(Vertical):
    """A line saying what is listed, the table of runs, and the highlighted run's error or answer."""

    PANEL = "runs"  # the registry's panel this widget renders (inspector/features/shown/panels.py)

    BINDINGS = [
        Binding("f", "filter_runs", "Filter runs"),
        Binding("x", "clear_run_filters", "All runs"),
    ]

    follow: reactive[bool] = reactive(False, init=False)  # only the runs of ``prompt_id``
    prompt_id: reactive[str | None] = reactive(None, init=False)  # the prompt selected in the tree

    @dataclass
    class OpenRun(Message):
        """The user picked a run (Enter or a click on its row)."""

        run_id: str

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.runs: list[dict[str, Any]] = []
        self.local_runs: list[dict[str, Any]] = []  # this TUI's runs that did not reach the store
        self._shown: list[tuple[Text, ...]] = []

    def compose(self) -> ComposeResult:
        yield Static(Text("Loading runs…", style="dim"), id="runs-heading")
        yield RunsTable(id="runs-table")
        yield Static(Text(""), id="runs-preview")

    # -- what is listed ------------------------------------------------------------------------
    @property
    def session(self) -> Any:
        return getattr(self.app, "session", None)  # the app's ``SessionLike``

    def runs_store(self) -> Any:
        """The project's ``RunStore``, or ``None`` (a session without one, or it could not be opened)."""
        runs = getattr(self.session, "runs", None)
        if runs is None:
            return None
        try:
            return runs()
        except Exception:  # noqa: BLE001 - shown as "history is off" in the tab, never a crash
            return None

    def run_filter(self) -> str | None:
        return self.prompt_id if self.follow else None

    def watch_follow(self) -> None:
        self.refresh_runs()

    def watch_prompt_id(self) -> None:
        if self.follow:
            self.refresh_runs()

    def action_filter_runs(self) -> None:
        """Toggle: only the runs of the prompt selected in the tree (it follows the selection)."""
        self.follow = not self.follow

    def action_clear_run_filters(self) -> None:
        self.follow = False

    def add_local(self, run: dict[str, Any]) -> None:
        """List ``run`` (one that never reached the store) with the store's runs until the app exits."""
        self.local_runs.insert(0, run)

    def refresh_runs(self) -> None:
        """Re-read the store and show the newest runs (those of the selected prompt when filtered)."""
        target = self.run_filter()
        store = self.runs_store()
        note: str | None = None
        runs: list[dict[str, Any]] = []
        total = shown_total = 0
        cost = "unpriced"
        if store is not None:
            try:
                runs = store.list(target=target, limit=LIST_LIMIT)
                shown_total = store.count(target=target) if len(runs) >= LIST_LIMIT or target else len(runs)
                total = store.count() if target else shown_total
                from ...inspector.features.runs.costs import prices_for  # the prices: not needed before the first frame

                prices = prices_for(getattr(self.session, "root", None))
                for run in runs:
                    run["cost_usd"] = prices.run_cost(run)
                cost = prices.total(store.usage_by_model(target=target)).label
            except Exception as exc:  # noqa: BLE001 - a corrupt or locked file is a note, not a crash
                note = f"The runs store could not be read ({type(exc).__name__}: {exc}): only this session's runs are listed."
                runs, total, shown_total = [], 0, 0
        else:
            note = "Run history is off (the project's .crux/runs.sqlite3 could not be opened): only this session's runs are listed."
        local = [r for r in self.local_runs if target is None or r.get("target") == target]
        if local:
            runs = sorted(local + runs, key=lambda r: str(r.get("started_at") or ""), reverse=True)[:LIST_LIMIT]
            total += len(self.local_runs)
            shown_total += len(local)
        self.show(runs, runs_heading(target, total, shown_total, len(runs), cost, note))
        self.post_message(PaneTitled(self, f"Runs ({total:,})" if total else "Runs"))

    def find_run(self, run_id: str) -> dict[str, Any] | None:
        local = next((r for r in self.local_runs if str(r.get("id")) == run_id), None)
        if local is not None:
            return local
        store = self.runs_store()
        if store is None:
            return None
        try:
            run: dict[str, Any] | None = store.get(run_id)
        except Exception as exc:  # noqa: BLE001
            self.app.notify(f"Could not read run {run_id}: {type(exc).__name__}: {exc}", severity="error", markup=False)
            return None
        return run

    # -- the table -------------------------------------------------------------------------------
    def show(self, runs: list[dict[str, Any]], heading: Text) -> None:
        """List ``runs`` (newest first) under ``heading``; the cursor stays on the run it was on."""
        self.query_one("#runs-heading", Static).update(heading)
        table = self.query_one(RunsTable)
        now = datetime.now().astimezone()
        rows = [run_row(run, now, cost) for run, cost in zip(runs, cost_column(runs), strict=True)]
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
