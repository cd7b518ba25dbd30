"""The TUI application: a thin adapter over a ``SessionLike`` (the same session as the web page).

Build it with ``make_tui(session)``; tests pass a fake session. Two widgets own the state:
``PromptBrowser`` (the tree and the ``/`` search, on the left) and ``PromptDetail`` (the selection
and the tabs, on the right). Session events arrive through ``subscribe`` and are posted to the app
as ``SessionChanged``; the app hands the new report to both. Slow calls (``evaluate``, ``run``,
``reload``) run in workers that end by posting a message. The app keeps the app-wide keys.
"""

from __future__ import annotations

import gc
import os
import subprocess
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.notifications import SeverityLevel
from textual.timer import Timer
from textual.containers import Horizontal
from textual.widgets import Header, Input

from ..inspector.api import SessionEvent, SessionLike, failed_run
from ..inspector.errors import LoadError
from ..inspector.report_types import ExampleReport
from ..inspector.features.shown.visible import visible
from . import report as rp
from .change_marks import ChangeMarksApp
from .editor import editor_command
from .messages import MarksChanged, RunFinished, RunsChanged, SessionChanged
from .runs_tab import RunsTabApp, as_run, was_recorded
from .widgets import PromptTree, RunsPanel
from .navigation import NavigationActions, PromptCommands, typed_actions
from .panels import BAR_TABS, PANEL_BINDINGS, PanelActions, TabRow, tab_table
from .request_actions import RequestActions
from .widgets.footer import FOCUSED, KeysFooter
from .widgets.prompt_browser import PromptBrowser
from .widgets.prompt_detail import PromptDetail

# The tabs of the prompt view, in order (``PromptDetail`` composes them from this table), built from
# the panel registry (``tui/panels.py``): the number keys 1..7 show the bar's seven (their labels say
# which), ``m`` the panels beyond them.
TABS: tuple[TabRow, ...] = tab_table()
ERRORS_KEY = 1 + [tab_id for tab_id, _, _, _ in TABS[:BAR_TABS]].index("tab-errors")  # the key that shows the Errors tab

BUDGET_KEYS = Binding.Group("Budget", compact=True)

# The footer's entries by importance: when they do not all fit, the last go first (``^p``, the
# command palette, always stays: every key is listed there).
FOOTER_IMPORTANCE = (
    "quit", "search", "show_tab(1)", FOCUSED, "next_example", "budget(1)", "open_diff", "run",
    "toggle_budget_target", "open_source", "prepare_summaries", "more_panels", "reload",
)

# A save's report usually follows its "loading" event within a frame or two: the status line says
# "loading" only when no report came after this many seconds (no flash, and no frame spent on it).
LOADING_SHOWN_AFTER = 0.1

# While the app runs, a young collection after this many new objects (Python's default is 700): a
# frame allocates tens of thousands of short-lived ones (strips, segments, styles), and every tenth
# collection of the middle generation walks the whole heap (tens of milliseconds in a process that
# holds more than the app). Put back when the app ends.
YOUNG_COLLECTION_AFTER = 10_000


class CruxTui(NavigationActions, RequestActions, PanelActions, ChangeMarksApp, RunsTabApp):
    """Prompts and agents on the left, one report in tabs on the right."""

    CSS_PATH = ["app.tcss", "runs.tcss"]
    TITLE = "crux-devtools"
    COMMANDS = App.COMMANDS | {PromptCommands}
    BINDINGS = [
        Binding("slash", "search", "Search", key_display="/", tooltip="Find a prompt by id, module or file"),
        *(
            Binding(str(i), f"show_tab({i})", "Tabs" if i == 1 else f"Tab {title}", show=i == 1, key_display=f"1-{len(TABS[:BAR_TABS])}" if i == 1 else None)
            for i, (_, title, _, _) in enumerate(TABS[:BAR_TABS], 1)
        ),
        Binding("e", "next_example", "Example"),
        # one footer entry "+-0 Budget" (+ raises, - lowers, 0 clears): the footer holds them all at 160 columns
        Binding("plus", "budget(1)", "Budget +", key_display="+", group=BUDGET_KEYS),
        Binding("equals_sign", "budget(1)", "Budget +", show=False),
        Binding("minus", "budget(-1)", "Budget -", key_display="-", group=BUDGET_KEYS),
        Binding("0", "clear_budget", "No budget", group=BUDGET_KEYS),
        Binding("b", "toggle_budget_target", "Budget for"),
        Binding("r", "run", "Run agent"),
        Binding("o", "open_source", "Open source"),
        Binding("ctrl+r", "reload", "Reload"),
        Binding("d", "open_diff", "Changes", tooltip="What your uncommitted edits do to every request (against HEAD)"),
        Binding("q", "quit", "Quit"),
        Binding("v", "toggle_view", "Sent/resolved", show=False),
        Binding("p", "prepare_summaries", "Summarize"),
        Binding("P", "prepare_summaries(True)", "Summarize with model", show=False),
        *PANEL_BINDINGS,
    ]

    def __init__(self, session: SessionLike, starting: Awaitable[None] | None = None) -> None:
        super().__init__()
        self.session = session
        self._starting = starting  # ``session.start()`` already under way (see ``launch.py``)
        self._unsubscribe: Any = None
        self._stopped = False
        self._report_shown: Any = None  # the session report ``show_report`` last drew
        self._report_compared: Any = None  # the last report whose change marks were asked for
        self._loading: Timer | None = None  # shows "loading" unless the report comes first
        self._gc_threshold: tuple[int, ...] | None = None  # the collector's thresholds before the app ran
        self.browser = PromptBrowser(id="left")
        self.detail = PromptDetail(session, TABS, id="detail")

    # what the prompt view shows, read from the widget that owns it
    @property
    def prompt_id(self) -> str | None:
        return self.detail.selection.prompt_id

    @property
    def shown(self) -> ExampleReport | None:
        return self.detail.shown

    @property
    def busy(self) -> str | None:
        return self.detail.busy

    # -- layout and lifecycle ------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with Horizontal(id="main"):
            yield self.browser
            yield self.detail
        yield KeysFooter(compact=True, importance=FOOTER_IMPORTANCE)  # every key at 160 columns, the most important ones below

    def on_load(self) -> None:
        threshold = gc.get_threshold()
        if threshold[0] < YOUNG_COLLECTION_AFTER:
            self._gc_threshold = threshold
            gc.set_threshold(YOUNG_COLLECTION_AFTER, *threshold[1:])

    def on_mount(self) -> None:
        self.sub_title = str(self.session.root)
        self._unsubscribe = self.session.subscribe(
            lambda event: None if event.kind == "run" else self.post_message(RunsChanged(event) if event.kind == "runs" else SessionChanged(event))
        )
        history_warning = getattr(self.session, "history_warning", None)  # a session-like may predate it
        if history_warning:
            self.notify(history_warning, title="Running without history", severity="warning", timeout=20)
        if self.session.report is not None:
            self.show_report()
        self.call_after_refresh(self.watch_head_moves)  # git's HEAD (and the review's modules) after the first frame
        self.call_after_refresh(self.refresh_runs)  # the store's read (a hidden tab's title) after the first frame
        self.start_session()

    @work(group="session", exit_on_error=False)
    async def start_session(self) -> None:
        try:
            await (self._starting if self._starting is not None else self.session.start())
        except Exception as exc:  # e.g. the worker could not start: say so, keep the UI up
            self.notify(f"{type(exc).__name__}: {exc}", title="Could not load the project", severity="error", timeout=30)
        self.post_message(SessionChanged(None))

    async def on_unmount(self) -> None:
        if self._gc_threshold is not None and gc.get_threshold()[0] == YOUNG_COLLECTION_AFTER:
            gc.set_threshold(*self._gc_threshold)
        self._gc_threshold = None
        self.stop_watching_head()
        if self._unsubscribe is not None:
            self._unsubscribe()
        if not self._stopped:
            self._stopped = True
            await self.session.stop()

    def notify(
        self, message: str, *, title: str = "", severity: SeverityLevel = "information", timeout: float | None = None, markup: bool = False
    ) -> None:
        """A toast. Unlike Textual's default, ``message`` is never parsed as markup: notifications
        carry ids, file names and error messages from the user's project, where ``[/]`` is text."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        allowed = super().check_action(action, parameters)
        if allowed and action in typed_actions(type(self)) and isinstance(self.focused, Input):
            return False  # its key is a character the input takes (and the footer should not offer)
        return allowed

    # -- session events ------------------------------------------------------------------------
    def on_session_changed(self, message: SessionChanged) -> None:
        event: SessionEvent | None = message.event
        if event is not None and event.kind != "loading" and event.verification != "agreed":  # only the verified mark changed
            self.announce(event)
        if event is not None and event.kind == "loading":
            if self._loading is None:
                self._loading = self.set_timer(LOADING_SHOWN_AFTER, self.show_loading)
            return
        if self._loading is not None:
            self._loading.stop()
            self._loading = None
        self.detail.busy = None
        if event is not None or self.session.report is None or self.session.report is not self._report_shown:
            self.show_report()  # (not when the session's start returns: its first report is on screen already)
        if event is None:  # the session started: its runs store is open now
            self.refresh_runs()

    def show_loading(self) -> None:
        """No report yet, ``LOADING_SHOWN_AFTER`` seconds after the session said it was loading."""
        self._loading = None
        self.detail.busy = "loading"

    def announce(self, event: SessionEvent) -> None:
        """One notification per update: the session's sentence, and which prompts changed."""
        message = event.summary
        if event.changed_prompts:
            shown = ", ".join(event.changed_prompts[:5]) + ("…" if len(event.changed_prompts) > 5 else "")
            message += f"\nchanged: {shown}"
        if event.kind == "error":
            self.notify(message, title="Load failed", severity="error", timeout=8)
        else:
            self.notify(message, title="Project loaded" if event.version <= 1 else "Project updated")

    def show_report(self) -> None:
        """Rebuild the tree from the session's report and re-show the selection."""
        report = self._report_shown = self.session.report
        self.show_sub_title()
        tree = self.browser.prompt_tree
        tree.show_report(report, self.detail.example_names(), self.detail.shown)
        before = self.detail.selection.prompt_id
        self.detail.show_report()
        if self.detail.selection.prompt_id != before and self.detail.selection.prompt_id is not None:
            tree.select_prompt(self.detail.selection.prompt_id)  # the one selected is gone: the first
        self.browser.update_search_hint()
        if report is not None and report is not self._report_compared:
            self._report_compared = report
            self.request_change_marks()

    def show_sub_title(self) -> None:
        """The header: how many load errors there are and how many prompts differ from git (when any),
        the project's folder, ``stale`` after a failed load. The counts come first, so a narrow
        terminal (whose tab bar may not reach the Errors tab) still says there are errors."""
        report = self._report_shown
        stale = report is not None and report["stale"]
        count = len(report["errors"]) if report is not None else 0
        errors = f"✗ {count} load error{'s' if count != 1 else ''} (key {ERRORS_KEY})" if count else ""
        legend = self.change_marks.legend() if self.change_marks is not None else ""
        counts = "  ".join(part for part in (errors, legend) if part)
        self.sub_title = (f"{counts}  " if counts else "") + f"{self.session.root}" + ("  ◌ stale" if stale else "")

    # -- selection -----------------------------------------------------------------------------
    def on_prompt_tree_prompt_selected(self, message: PromptTree.PromptSelected) -> None:
        selection = self.detail.selection
        changed = message.prompt_id != selection.prompt_id
        part = message.context_id if message.context_id is not None or changed else selection.part
        self.detail.select(message.prompt_id, part)

    def on_marks_changed(self, message: MarksChanged) -> None:
        self.browser.prompt_tree.show_report(self.session.report, self.detail.example_names(), self.detail.shown)

    # -- workers -------------------------------------------------------------------------------
    @work(group="run", exit_on_error=False)
    async def run_agent(self, prompt_id: str, example: str | None, input: Any = None, confirm: str | None = None) -> None:
        try:
            if input is not None:
                result = await self.session.run(prompt_id, input=input, confirm=confirm)
            else:
                result = await self.session.run(prompt_id, example=example, confirm=confirm)
        except Exception as exc:  # shown in the Runs tab like any failed run
            result = failed_run(prompt_id, LoadError.plain(type(exc).__name__, str(exc)).to_dict(), input=input)
        self.post_message(RunFinished(prompt_id, result))

    def on_run_finished(self, message: RunFinished) -> None:
        """The run is in the store (or, with history off, kept here): list it and open its detail."""
        if self.ask_to_run(message.prompt_id, message.result):
            return
        run = as_run(message.result, rp.find_prompt(self.session.report, message.prompt_id), message.prompt_id)
        panel = self.query_one(RunsPanel)
        if panel.runs_store() is None or not was_recorded(message.result):
            panel.add_local(run)
        self.detail.busy = None
        steps = len(run.get("steps") or [])
        if run.get("error"):
            error = run["error"]
            why = f"{error.get('type') or 'Error'}: {error.get('message')}" if isinstance(error, dict) else str(error)
            self.notify(visible(f"Run of {message.prompt_id} failed after {steps} step(s): {why}"), severity="error", timeout=10, markup=False)
        else:
            self.notify(f"Run of {message.prompt_id} finished ({run.get('status')}): {steps} step(s)", markup=False)
        panel.refresh_runs()
        self.detail.show_tab("tab-runs")
        panel.select_run(str(run["id"]))
        if len(self.screen_stack) == 1:  # not over another run's detail or a dialog
            self.open_run(run)

    @work(group="session-reload", exit_on_error=False)
    async def reload_session(self) -> None:
        await self.session.reload()

    # -- actions -------------------------------------------------------------------------------
    def action_next_example(self) -> None:
        self.detail.next_example()

    def action_budget(self, direction: int) -> None:
        self.detail.step_budget(direction)

    def action_toggle_budget_target(self) -> None:
        target = self.detail.toggle_budget_target()
        if target is not None:
            self.notify(f"Budget keys now limit the {'whole request (planner)' if target == 'request' else 'system text'}")

    def action_clear_budget(self) -> None:
        self.detail.clear_budget()

    def action_run(self) -> None:
        prompt = self.detail.prompt()
        if prompt is None or not prompt["has_model"]:
            self.notify("Only an agent with a model can be run: select one on the left.", severity="warning")
            return
        if any(w.group == "run" and w.is_running for w in self.workers):
            self.notify("A run is already under way; its result will open in Runs.", severity="warning")
            return
        self.start_run(prompt["id"])  # a real model is refused by the worker until confirmed (ask_to_run)

    def start_run(self, prompt_id: str, confirm: str | None = None) -> None:
        """Run ``prompt_id`` on the example shown, or on the run input loaded from a run's detail."""
        self.detail.busy = f"running {prompt_id}"
        choice = self.detail.choices.get(prompt_id)
        custom = choice.custom if choice is not None else None
        self.run_agent(prompt_id, choice.example if choice is not None else None, custom.input if custom else None, confirm)

    def action_open_source(self) -> None:
        prompt = self.detail.prompt()
        part = self.detail.selection.part
        location = rp.source_location(prompt, part) if prompt else None
        if location is None:
            self.notify("No source location for this selection.", severity="warning")
            return
        note = "" if location.exact else f" (where {part} is used)"
        self.notify(f"{location}{note}", title=f"Source of {location.label}")
        command = editor_command(location, Path(self.session.root), os.environ)
        if command is not None:
            with self.suspend():
                subprocess.call(command)

    def action_open_diff(self) -> None:
        from .screens.diff import DiffScreen

        self.push_screen(DiffScreen(self.session))

    def action_reload(self) -> None:
        self.detail.busy = "reloading"
        self.reload_session()


def make_tui(session: SessionLike, *, starting: Awaitable[None] | None = None) -> CruxTui:
    """The TUI over ``session`` (a ``ProjectSession``, or a fake one in tests).

    The app starts the session itself, unless ``starting`` (a ``session.start()`` already running)
    is given; it stops the session when it exits.
    """
    return CruxTui(session, starting)
