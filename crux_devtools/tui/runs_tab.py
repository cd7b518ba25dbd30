"""The app's side of the Runs tab: news of runs, opening a run's detail, and its input in the prompt view.

``CruxTui`` builds on ``RunsTabApp``. The tab itself (what is listed, the ``f`` / ``x`` filter keys)
is ``RunsPanel`` (``widgets/runs.py``); the app tells it when runs change and opens what it picks.
"""

from __future__ import annotations

import functools
import itertools
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.widgets import TabbedContent

from ..inspector.api import SessionLike
from ..inspector.report_types import PromptReport
from ..inspector.features.runs.text import located
from ..inspector.features.shown.visible import visible
from .messages import RunsChanged
from .selection import CustomInput
from .widgets.prompt_browser import PromptBrowser
from .widgets.prompt_detail import PromptDetail
from .widgets.runs import RunsPanel, RunsTable

if TYPE_CHECKING:  # the screens load on first use: the first frame does not wait for them
    from .screens import OpenInPrompt

# keys that only change what the prompt tabs show (example, budget, view, summaries, source): off on the Runs tab
PROMPT_VIEW_ACTIONS = frozenset({"next_example", "budget", "clear_budget", "toggle_budget_target", "toggle_view", "prepare_summaries", "open_source"})
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
    """The Runs tab's handlers on the app; ``CruxTui`` builds on it and provides the rest."""

    session: SessionLike
    browser: PromptBrowser
    detail: PromptDetail

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
            return self.detail.active_tab == "tab-runs"
        except (AttributeError, NoMatches):  # not composed yet
            return False

    def runs_panel(self) -> RunsPanel | None:
        """The Runs tab's panel; ``None`` while the main screen is not up (the app starting or closing)."""
        panels = self.query(RunsPanel)
        return panels.first() if panels else None

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        """The Runs tab takes the keys (Up/Down pick a run, Enter opens it, ``f`` / ``x`` filter);
        leaving it gives them back to the tree. The footer shows the keys of the tab on screen."""
        if event.tabbed_content.id != "tabs":
            return
        if event.pane.id == "tab-runs":
            self.query_one(RunsTable).focus()
        elif self.focused is None or isinstance(self.focused, RunsTable):
            self.browser.prompt_tree.focus()
        self.refresh_bindings()

    def refresh_runs(self) -> None:
        """Re-read the store into the Runs tab (nothing to do while the main screen is not up)."""
        panel = self.runs_panel()
        if panel is not None:
            panel.refresh_runs()

    def on_runs_changed(self, message: RunsChanged) -> None:
        self.refresh_runs()
        if message.event.summary:
            self.notify(visible(message.event.summary), title="Runs", timeout=3, markup=False)

    def on_runs_panel_open_run(self, message: RunsPanel.OpenRun) -> None:
        panel = self.runs_panel()
        run = panel.find_run(message.run_id) if panel is not None else None
        if run is None:
            self.notify(f"Run {message.run_id} is no longer in the store.", severity="warning", markup=False)
            self.refresh_runs()
            return
        self.open_run(run)

    def open_run(self, run: dict[str, Any]) -> None:
        """Push the run's detail; it opens on the step that failed, if one did."""
        from ..inspector.features.runs.costs import prices_for  # the prices: read when a run is opened, not at start
        from .screens import RunDetailScreen

        steps = run.get("steps") or []
        root = getattr(self.session, "root", None)
        prices = prices_for(root)
        run["cost_usd"] = prices.run_cost(run)
        run["error"] = located(run.get("error"), root)  # the project's line up front, as ``run`` prints it
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
        self.browser.prompt_tree.select_prompt(chosen.target)
        self.detail.show_input(chosen.target, CustomInput(chosen.input, chosen.label, chosen.messages))
        self.notify(f"{chosen.target}: input of {chosen.label}. The budget keys replay it; e goes back to the examples.", markup=False)
