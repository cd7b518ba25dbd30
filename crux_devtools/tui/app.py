"""The TUI application: a thin adapter over a ``SessionLike`` (the same session as the web page).

Build it with ``make_tui(session)``; tests pass a fake session. Session events arrive through
``subscribe`` and are posted to the app as ``SessionChanged``; slow calls (``evaluate``, ``run``,
``reload``) run in workers that end by posting a message, so widgets are only touched here.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.notifications import SeverityLevel
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer, Header, Input, TabbedContent, TabPane

from ..inspector.api import SessionEvent, SessionLike, failed_run
from ..inspector.errors import FailedExample, LoadError
from ..inspector.report_types import ExampleReport, PromptReport
from ..inspector.visible import visible
from . import report as rp
from .editor import editor_command
from .messages import ExampleEvaluated, RunFinished, RunsChanged, SessionChanged
from .runs_tab import RunsTabApp, as_run, was_recorded
from .widgets.errors import collect_errors, notes
from .widgets import ContributorsTable, ErrorsView, PlanningView, PromptTree, RunsPanel, StatusLine, SystemTextView, ToolsView
from .navigation import NavigationActions, PromptCommands, typed_actions
from .panels import BAR_TABS, PANEL_BINDINGS, PanelActions, PanelTabs, TabRow, tab_table
from .request_actions import RequestActions
from .widgets.prompt_search import PromptSearch, SearchResults
from .widgets.request import RequestView

# The tabs of the prompt view, in order, from the panel registry (``tui/panels.py``): the number keys
# 1..7 show the bar's seven (their labels say which), ``m`` the panels beyond them.
TABS: tuple[TabRow, ...] = tab_table()

BUDGET_KEYS = Binding.Group("Budget", compact=True)


class CruxTui(NavigationActions, RequestActions, PanelActions, RunsTabApp):
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
        Binding("n", "search_step(1)", "Next match", tooltip="Open the next prompt the search matched"),
        Binding("N", "search_step(-1)", "Prev match", tooltip="Open the previous prompt the search matched"),
        Binding("escape", "clear_search", "Clear search", show=False),
        Binding("e", "next_example", "Example"),
        # one footer entry "+-0 Budget" (+ raises, - lowers, 0 clears): the footer fits 160 columns
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
        *RunsTabApp.RUNS_BINDINGS,
        *PANEL_BINDINGS,
    ]

    def __init__(self, session: SessionLike, starting: Awaitable[None] | None = None) -> None:
        super().__init__()
        self.session = session
        self._starting = starting  # ``session.start()`` already under way (see ``launch.py``)
        self._panes_shown: tuple[Any, Any] | None = None  # what the detail panes show now
        self.prompt_id: str | None = None
        self.example_names: dict[str, str | None] = {}
        self.budgets: dict[str, int | None] = {}
        self.budget_targets: dict[str, str] = {}  # "system" or "request", when the user switched it
        self.shown: ExampleReport | None = None  # the ExampleReport on screen
        self.selected_part: str | None = None
        self.busy: str | None = None
        self._unsubscribe: Any = None
        self._stopped = False
        self._tab_titles = {tab_id: title for tab_id, title, _, _ in TABS}

    # -- layout and lifecycle ------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with Horizontal(id="main"):
            with Vertical(id="left"):
                yield PromptTree(id="tree")
                yield SearchResults(id="results")
                yield PromptSearch(id="search")
            with Vertical(id="detail"):
                yield StatusLine(id="status")
                with PanelTabs(id="tabs"):
                    for tab_id, title, view, view_id in TABS:
                        with TabPane(title, id=tab_id):  # numbered by ``label_tabs`` when they fit
                            yield view(id=view_id)
        yield Footer(compact=True)  # every key in sight at 160 columns (the Runs tab's at 100)

    def on_mount(self) -> None:
        self.sub_title = str(self.session.root)
        self._unsubscribe = self.session.subscribe(
            lambda event: self.post_message(RunsChanged(event) if event.kind == "runs" else SessionChanged(event))
        )
        history_warning = getattr(self.session, "history_warning", None)  # a session-like may predate it
        if history_warning:
            self.notify(history_warning, title="Running without history", severity="warning", timeout=20)
        if self.session.report is not None:
            self.show_report()
        self.refresh_runs()
        self.call_after_refresh(self.label_tabs)
        self.start_session()

    @work(group="session", exit_on_error=False)
    async def start_session(self) -> None:
        try:
            await (self._starting if self._starting is not None else self.session.start())
        except Exception as exc:  # e.g. the worker could not start: say so, keep the UI up
            self.notify(f"{type(exc).__name__}: {exc}", title="Could not load the project", severity="error", timeout=30)
        self.post_message(SessionChanged(None))

    async def on_unmount(self) -> None:
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
        """``n`` / ``N`` and Escape step through and clear a submitted search: off (and out of the
        footer) when there is none."""
        allowed = super().check_action(action, parameters)
        if allowed and action in typed_actions(type(self)) and isinstance(self.focused, Input):
            return False  # its key is a character the input takes (and the footer should not offer)
        if allowed and action in ("search_step", "clear_search"):
            try:
                return self.search_active()
            except NoMatches:  # not composed yet
                return False
        return allowed

    # -- session events ------------------------------------------------------------------------
    def on_session_changed(self, message: SessionChanged) -> None:
        event: SessionEvent | None = message.event
        if event is not None and event.kind != "loading" and event.verification != "agreed":  # only the verified mark changed
            self.announce(event)
        if event is not None and event.kind == "loading":
            self.busy = "loading"
            self.update_status()
            return
        self.busy = None
        self.show_report()
        if event is None:  # the session started: its runs store is open now
            self.refresh_runs()

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
        report = self.session.report
        stale = report is not None and report["stale"]
        self.sub_title = f"{self.session.root}" + ("  ◌ stale" if stale else "")
        tree = self.query_one(PromptTree)
        tree.show_report(report, self.example_names, self.shown)
        prompts = report["prompts"] if report is not None else []
        if rp.find_prompt(report, self.prompt_id) is None and prompts:
            self.prompt_id = prompts[0]["id"]
            tree.select_prompt(self.prompt_id)
        self.show_selection()
        self.update_search_hint()

    # -- selection -----------------------------------------------------------------------------
    def on_prompt_tree_prompt_selected(self, message: PromptTree.PromptSelected) -> None:
        changed = message.prompt_id != self.prompt_id
        self.prompt_id = message.prompt_id
        if message.context_id is not None or changed:
            self.selected_part = message.context_id
        if changed:
            self.show_selection()
            if self.runs_follow_prompt:
                self.refresh_runs()
        else:
            self.update_part()

    def on_contributors_table_part_highlighted(self, message: ContributorsTable.PartHighlighted) -> None:
        self.selected_part = message.source
        self.query_one(SystemTextView).selected_part = message.source
        self.query_one(RequestView).selected_part = message.source

    def show_selection(self) -> None:
        """Show the selected example: from the report, or re-evaluated when a budget is set."""
        prompt = rp.find_prompt(self.session.report, self.prompt_id)
        if prompt is None:
            self.shown = None
        else:
            example = rp.find_example(prompt, self.example_names.get(prompt["id"]))
            self.example_names[prompt["id"]] = example["name"] if example else None
            custom = self.custom_inputs.get(prompt["id"])
            if custom is not None:  # a run's input, loaded from its detail: always evaluated
                self.busy = "evaluating"
                self.evaluate(prompt["id"], custom[1], self.budgets.get(prompt["id"]), self.budget_target(prompt), custom[0])
            elif self.budgets.get(prompt["id"]) is not None:
                self.busy = "evaluating" if self.budget_target(prompt) == "system" else "planning"
                self.evaluate(prompt["id"], self.example_names[prompt["id"]], self.budgets[prompt["id"]], self.budget_target(prompt))
            else:
                self.shown = example
        self.update_panes()

    def budget_target(self, prompt: PromptReport | None) -> str:
        """What the budget keys limit for ``prompt``: ``"system"`` text or the whole ``"request"``."""
        if prompt is None:
            return "system"
        return self.budget_targets.get(prompt["id"]) or rp.default_budget_target(prompt)

    def update_part(self) -> None:
        self.query_one(SystemTextView).selected_part = self.selected_part
        self.query_one(RequestView).selected_part = self.selected_part
        self.query_one(ContributorsTable).select_part(self.selected_part)

    def update_status(self) -> None:
        prompt = rp.find_prompt(self.session.report, self.prompt_id)
        report = self.session.report
        self.query_one(StatusLine).data = {
            "prompt": prompt,
            "example": self.example_names.get(self.prompt_id or ""),
            "custom": (self.custom_inputs.get(self.prompt_id or "") or (None, None))[1],
            "names": rp.example_names(prompt) if prompt else [],
            "budget": self.budgets.get(self.prompt_id or ""),
            "target": self.budget_target(prompt),
            "stale": rp.is_stale(report, prompt),
            "verified": report is None or report["verified"],
            "busy": self.busy,
            "shown": self.shown if prompt is not None else None,
        }

    def update_panes(self) -> None:
        """Attributes down: hand every pane the data it shows."""
        report = self.session.report
        prompt = rp.find_prompt(report, self.prompt_id)
        self.update_status()
        # Re-rendering a pane costs a redraw in the terminal: skip the ones whose data is unchanged
        # (a save elsewhere in the project leaves the prompt on screen as it was).
        if (prompt, self.shown) != self._panes_shown:
            self._panes_shown = (prompt, self.shown)
            self.query_one(SystemTextView).data = self.shown
            self.query_one(ContributorsTable).data = self.shown
            self.query_one(ToolsView).data = (prompt, self.shown)
            self.query_one(PlanningView).data = (prompt, self.shown)
            self.query_one(RequestView).data = (prompt, self.shown)
        errors = collect_errors(report, self.shown)
        self.query_one(ErrorsView).data = (errors, report is not None and report["stale"], notes(report, prompt))
        self.set_tab_label("tab-errors", f"Errors ({len(errors)})" if errors else "Errors")
        self.update_part()

    # -- workers -------------------------------------------------------------------------------
    # Not ``exclusive``: cancelling a request the worker process is already answering could leave its
    # answer unread; answers for a selection the user has left are dropped in ``on_example_evaluated``.
    @work(group="evaluate", exit_on_error=False)
    async def evaluate(self, prompt_id: str, example: str | None, budget: int | None, target: str = "system", input: Any = None) -> None:
        """``input`` set: evaluate it as a custom input, ``example`` then being its label."""
        try:
            result = await self.session.evaluate(
                prompt_id,
                example=None if input is not None else example,
                input=input,
                token_budget=budget if target == "system" else None,
                input_budget=budget if target == "request" else None,
                **({"messages": messages} if input is not None and (messages := self.custom_messages.get(prompt_id)) else {}),
            )
        except Exception as exc:  # the engine's own failure: shown like an example's error
            error = LoadError.plain(type(exc).__name__, f"could not evaluate {prompt_id}: {exc}")
            result = FailedExample(example or "", {}, error).to_dict()
        self.post_message(ExampleEvaluated(prompt_id, example, budget, result, target))

    def on_example_evaluated(self, message: ExampleEvaluated) -> None:
        pid = self.prompt_id or ""
        target = self.budget_target(rp.find_prompt(self.session.report, self.prompt_id))
        custom = self.custom_inputs.get(pid)
        current = (self.prompt_id, custom[1] if custom else self.example_names.get(pid), self.budgets.get(pid), target)
        if (message.prompt_id, message.example_name, message.budget, message.target) != current:
            return  # an answer for a selection the user already left
        self.busy = None
        self.shown = message.example
        self.update_panes()
        self.query_one(PromptTree).show_report(self.session.report, self.example_names, self.shown)

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
        if self.runs_store() is None or not was_recorded(message.result):
            self.local_runs.insert(0, run)  # listed with the store's runs until the app exits
        self.busy = None
        self.update_status()
        steps = len(run.get("steps") or [])
        if run.get("error"):
            error = run["error"]
            why = f"{error.get('type') or 'Error'}: {error.get('message')}" if isinstance(error, dict) else str(error)
            self.notify(visible(f"Run of {message.prompt_id} failed after {steps} step(s): {why}"), severity="error", timeout=10, markup=False)
        else:
            self.notify(f"Run of {message.prompt_id} finished ({run.get('status')}): {steps} step(s)", markup=False)
        self.refresh_runs()
        self.query_one(TabbedContent).active = "tab-runs"
        self.query_one(RunsPanel).select_run(str(run["id"]))
        if len(self.screen_stack) == 1:  # not over another run's detail or a dialog
            self.open_run(run)

    @work(group="session-reload", exit_on_error=False)
    async def reload_session(self) -> None:
        await self.session.reload()

    # -- actions -------------------------------------------------------------------------------
    def action_next_example(self) -> None:
        prompt = rp.find_prompt(self.session.report, self.prompt_id)
        if prompt is None:
            return
        if self.custom_inputs.pop(prompt["id"], None) is None:  # a run's input: back to the examples first
            self.example_names[prompt["id"]] = rp.next_example(prompt, self.example_names.get(prompt["id"]))
        self.show_selection()
        self.query_one(PromptTree).show_report(self.session.report, self.example_names, self.shown)

    def action_budget(self, direction: int) -> None:
        if self.prompt_id is None:
            return
        prompt = rp.find_prompt(self.session.report, self.prompt_id)
        target = self.budget_target(prompt)
        self.budgets[self.prompt_id] = rp.step_budget(self.shown, self.budgets.get(self.prompt_id), direction, target, prompt)
        self.show_selection()

    def action_toggle_budget_target(self) -> None:
        """Switch what the budget limits: the system text (whole contexts drop) or the request (the
        planner picks ladder rungs). The budget starts over from the new target's own base."""
        prompt = rp.find_prompt(self.session.report, self.prompt_id)
        if prompt is None:
            return
        self.budget_targets[prompt["id"]] = "request" if self.budget_target(prompt) == "system" else "system"
        self.budgets.pop(prompt["id"], None)
        self.notify(f"Budget keys now limit the {'whole request (planner)' if self.budget_target(prompt) == 'request' else 'system text'}")
        self.show_selection()
        self.query_one(PromptTree).show_report(self.session.report, self.example_names, self.shown)

    def action_clear_budget(self) -> None:
        if self.prompt_id is not None and self.budgets.pop(self.prompt_id, None) is not None:
            self.show_selection()
            self.query_one(PromptTree).show_report(self.session.report, self.example_names, self.shown)

    def action_run(self) -> None:
        prompt = rp.find_prompt(self.session.report, self.prompt_id)
        if prompt is None or not prompt["has_model"]:
            self.notify("Only an agent with a model can be run: select one on the left.", severity="warning")
            return
        if any(w.group == "run" and w.is_running for w in self.workers):
            self.notify("A run is already under way; its result will open in Runs.", severity="warning")
            return
        self.start_run(prompt["id"])  # a real model is refused by the worker until confirmed (ask_to_run)

    def start_run(self, prompt_id: str, confirm: str | None = None) -> None:
        """Run ``prompt_id`` on the example shown, or on the run input loaded from a run's detail."""
        self.busy = f"running {prompt_id}"
        self.update_status()
        custom = self.custom_inputs.get(prompt_id)
        self.run_agent(prompt_id, self.example_names.get(prompt_id), custom[0] if custom else None, confirm)

    def action_open_source(self) -> None:
        prompt = rp.find_prompt(self.session.report, self.prompt_id)
        location = rp.source_location(prompt, self.selected_part) if prompt else None
        if location is None:
            self.notify("No source location for this selection.", severity="warning")
            return
        note = "" if location.exact else f" (where {self.selected_part} is used)"
        self.notify(f"{location}{note}", title=f"Source of {location.label}")
        command = editor_command(location, Path(self.session.root), os.environ)
        if command is not None:
            with self.suspend():
                subprocess.call(command)

    def action_open_diff(self) -> None:
        from .screens.diff import DiffScreen

        self.push_screen(DiffScreen(self.session))

    def action_reload(self) -> None:
        self.busy = "reloading"
        self.update_status()
        self.reload_session()


def make_tui(session: SessionLike, *, starting: Awaitable[None] | None = None) -> CruxTui:
    """The TUI over ``session`` (a ``ProjectSession``, or a fake one in tests).

    The app starts the session itself, unless ``starting`` (a ``session.start()`` already running)
    is given; it stops the session when it exits.
    """
    return CruxTui(session, starting)
