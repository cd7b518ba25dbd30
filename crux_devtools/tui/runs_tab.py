"""The app's side of the Runs tab: read the project's runs store, list, filter, open, replay.

``CruxTui`` builds on ``RunsTabApp``, which reads ``session.runs()`` (the project's ``RunStore``,
``core/record/runstore.py``) on the UI thread: a list of 50 summaries is one indexed SQLite query (WAL, so a
writer never blocks it). When the store cannot be opened, the tab lists the runs this TUI started
and says that history is off.
"""

from __future__ import annotations

import functools
import itertools
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import App
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.widgets import TabbedContent

from ..inspector.api import SessionLike
from ..inspector.report_types import PromptReport
from ..inspector.run_costs import prices_for
from ..inspector.visible import visible
from .messages import RunsChanged
from .widgets.prompt_tree import PromptTree
from .widgets.runs import RunsPanel, RunsTable

if TYPE_CHECKING:  # the screens load on first use: the first frame does not wait for them
    from .screens import OpenInPrompt

# keys that only change what the prompt tabs show (example, budget, view, summaries, source): off on the Runs tab
PROMPT_VIEW_ACTIONS = frozenset({"next_example", "budget", "clear_budget", "toggle_budget_target", "toggle_view", "prepare_summaries", "open_source"})
LIST_LIMIT = 50  # rows in the Runs tab (newest first); the CLI and the web page page through the rest
_local_ids = itertools.count(1)


def as_run(result: dict[str, Any], prompt: PromptReport | None, prompt_id: str) -> dict[str, Any]:
    """A run dict as the store holds it, from what ``session.run`` returned (an older session returns
    only ``{text, steps, error}``): missing fields are filled, the status follows the error."""
    run = dict(result)
    defaults: dict[str, Any] = {
        "id": f"local-{next(_local_ids)}",  # a run that never reached the store has no id
        "target": prompt_id,
        "kind": prompt["kind"] if prompt is not None else "agent",
        "origin": "inspector",
        "started_at": datetime.now(UTC).isoformat(),
        "status": "error" if run.get("error") else "ok",
        "steps": [],
    }
    for key, value in defaults.items():
        if run.get(key) is None:
            run[key] = value
    return run


def was_recorded(result: dict[str, Any]) -> bool:
    """Whether ``session.run`` says its run reached the store (an older session says nothing)."""
    return bool(result.get("id")) and result.get("recorded", True) is not False


@functools.cache
def main_view_actions(app_class: type[App[None]]) -> frozenset[str]:
    """The action names bound by ``app_class.BINDINGS`` (``"budget(1)"`` is ``budget``)."""
    names = set()
    for binding in app_class.BINDINGS:
        action = binding.action if isinstance(binding, Binding) else binding[1]
        names.add(action.split("(", 1)[0])
    return frozenset(names)


class RunsTabApp(App[None]):
    """The Runs tab's keys, state and handlers; ``CruxTui`` builds on it and provides the rest."""

    # in the footer after the main view's keys (``CruxTui.BINDINGS`` adds them at its end)
    RUNS_BINDINGS = [
        Binding("f", "filter_runs", "Filter runs"),
        Binding("x", "clear_run_filters", "All runs"),
    ]

    session: SessionLike
    prompt_id: str | None
    runs_follow_prompt: bool = False  # list only the runs of the prompt selected in the tree
    local_runs: list[dict[str, Any]]  # this TUI's own runs, listed when the store cannot be opened
    custom_inputs: dict[str, tuple[Any, str]]  # prompt id -> (input, label), from "open in prompt view"

    def __init__(self) -> None:
        super().__init__()
        self.local_runs = []
        self.custom_inputs = {}
        self.custom_messages: dict[str, Any] = {}  # prompt id -> the step's messages that go with its custom input

    def show_selection(self) -> None:
        """Show the selected prompt (``CruxTui`` implements it)."""
        raise NotImplementedError

    def set_tab_label(self, tab_id: str, title: str) -> None:
        """Label a tab of the prompt view (``CruxTui`` adds its number key)."""
        raise NotImplementedError

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The main view's keys (this app's ``BINDINGS``, but quit) are off, and out of the footer,
        while another screen is on top: ``-`` behind a run's detail must not re-plan the prompt.
        On the Runs tab the keys that only change the prompt view are off too (the footer then has
        room for the Runs keys)."""
        if len(self.screen_stack) > 1 and action != "quit" and action in main_view_actions(type(self)):
            return False
        if action in PROMPT_VIEW_ACTIONS and self.runs_tab_active():
            return False
        return True

    def runs_tab_active(self) -> bool:
        try:
            return self.query_one(TabbedContent).active == "tab-runs"
        except NoMatches:  # not composed yet
            return False

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        """The Runs tab takes the keys (Up/Down pick a run, Enter opens it); leaving it gives them
        back to the tree. The footer shows the keys of the tab on screen."""
        if event.tabbed_content.id != "tabs":
            return
        if event.pane.id == "tab-runs":
            self.query_one(RunsTable).focus()
        elif self.focused is None or isinstance(self.focused, RunsTable):
            self.query_one(PromptTree).focus()
        self.refresh_bindings()

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
        return self.prompt_id if self.runs_follow_prompt else None

    def refresh_runs(self) -> None:
        """Re-read the store and show the newest runs (those of the selected prompt when filtered).
        Nothing to do while the main screen is not up (a run written as the app starts or closes)."""
        if not self.query(RunsPanel):
            return
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
                prices = prices_for(getattr(self.session, "root", None))
                for run in runs:
                    run["cost_usd"] = prices.run_cost(run)
                cost = prices.total(store.usage_by_model(target=target)).label
            except Exception as exc:  # noqa: BLE001 - a corrupt or locked file is a note, not a crash
                note = f"The runs store could not be read ({type(exc).__name__}: {exc}): only this session's runs are listed."
                runs, total, shown_total = [], 0, 0
        elif note is None:
            note = "Run history is off (the project's .crux/runs.sqlite3 could not be opened): only this session's runs are listed."
        # this TUI's runs that did not reach the store (history off, or a run that never started)
        local = [r for r in self.local_runs if target is None or r.get("target") == target]
        if local:
            runs = sorted(local + runs, key=lambda r: str(r.get("started_at") or ""), reverse=True)[:LIST_LIMIT]
            total += len(self.local_runs)
            shown_total += len(local)
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
        if shown_total > len(runs):
            heading.append(f"   newest {len(runs)} shown", "dim")
        heading.append("   Enter: open a run", "dim")
        if not runs:
            heading.append(
                "\nNo runs yet. Press r on an agent, or record your application's runs: record_runs(dir) in its code, "
                "or CRUX_DEVTOOLS_RECORD=DIR in its environment.",
                "dim italic",
            )
        if note:
            heading.append(f"\n{note}", "yellow")
        self.query_one(RunsPanel).show(runs, heading)
        self.set_tab_label("tab-runs", f"Runs ({total:,})" if total else "Runs")

    def on_runs_changed(self, message: RunsChanged) -> None:
        self.refresh_runs()
        if message.event.summary:
            self.notify(visible(message.event.summary), title="Runs", timeout=3, markup=False)

    def show_runs_tab(self) -> None:
        self.query_one(TabbedContent).active = "tab-runs"
        self.query_one(RunsTable).focus()

    def action_filter_runs(self) -> None:
        """Toggle: only the runs of the prompt selected in the tree (it follows the selection)."""
        self.runs_follow_prompt = not self.runs_follow_prompt
        self.refresh_runs()
        self.show_runs_tab()

    def action_clear_run_filters(self) -> None:
        self.runs_follow_prompt = False
        self.refresh_runs()
        self.show_runs_tab()

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
            self.notify(f"Could not read run {run_id}: {type(exc).__name__}: {exc}", severity="error", markup=False)
            return None
        return run

    def on_runs_panel_open_run(self, message: RunsPanel.OpenRun) -> None:
        run = self.find_run(message.run_id)
        if run is None:
            self.notify(f"Run {message.run_id} is no longer in the store.", severity="warning", markup=False)
            self.refresh_runs()
            return
        self.open_run(run)

    def open_run(self, run: dict[str, Any]) -> None:
        """Push the run's detail; it opens on the step that failed, if one did."""
        from .screens import RunDetailScreen

        steps = run.get("steps") or []
        prices = prices_for(getattr(self.session, "root", None))
        run["cost_usd"] = prices.run_cost(run)
        for step in steps:
            if isinstance(step, dict) and isinstance(step.get("usage"), dict):
                step["cost_usd"] = prices.step_cost(step, run.get("model"))
        failed = next((i for i, s in enumerate(steps) if s.get("error")), None)
        first = failed if failed is not None else (len(steps) - 1 if run.get("error") and steps else 0)
        self.push_screen(RunDetailScreen(run, first), callback=self.run_detail_closed)

    def run_detail_closed(self, result: OpenInPrompt | None) -> None:
        if result is not None:
            self.load_custom_input(result)

    def load_custom_input(self, chosen: OpenInPrompt) -> None:
        """Show ``chosen.target`` with the run's input as its custom input: the budget keys replay it."""
        from . import report as rp

        prompt = rp.find_prompt(self.session.report, chosen.target)
        if prompt is None:
            self.notify(f"{chosen.target} is not in the project as loaded now: it cannot be shown.", severity="warning", markup=False)
            return
        if not isinstance(chosen.input, dict):
            self.notify(f"The input of {chosen.label} was not recorded as JSON: it cannot be loaded.", severity="warning", markup=False)
            return
        self.custom_inputs[chosen.target] = (chosen.input, chosen.label)
        self.custom_messages[chosen.target] = chosen.messages
        self.prompt_id = chosen.target
        self.query_one(PromptTree).select_prompt(chosen.target)
        self.query_one(TabbedContent).active = "tab-system"
        self.show_selection()
        self.notify(f"{chosen.target}: input of {chosen.label}. The budget keys replay it; e goes back to the examples.", markup=False)
