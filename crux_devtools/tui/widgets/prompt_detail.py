"""The right-hand side: the status line over the tabs of the prompt on screen.

``PromptDetail`` owns what the prompt view shows: ``selection`` (the prompt, its ``Choice`` of
example, budget and budget target, and the highlighted part), ``shown`` (the ``ExampleReport`` on
screen: the report's own, or re-evaluated for a budget or a run's input) and ``busy`` (what the app
is doing, in the status line). Each is reactive; its ``watch_`` method refreshes what depends on it:

    selection -> shown (from the report, or ``evaluate`` in a worker) -> every pane's ``data``
    selection.part -> the highlighted part in the Request, System text and Contributors tabs
    busy -> the status line

Every prompt keeps its ``Choice`` in ``choices`` while the user is elsewhere. The tabs are the
``tabs`` table the app passes in (id, title, widget class, widget id), composed in its order; the
number keys show them, and their labels carry the number when the bar has room.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, TypeVar

from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.reactive import reactive
from textual.widgets import TabbedContent, TabPane

from ...inspector.errors import FailedExample, LoadError
from ...inspector.report_types import ExampleReport, PromptReport
from .. import report as rp
from ..messages import ExampleEvaluated, MarksChanged, PaneTitled
from ..selection import Choice, CustomInput, Selection
from .contributors import ContributorsTable
from .errors import ErrorsView, collect_errors, notes
from .pane import ReportPane
from .panel_tabs import BAR_TABS, PanelTabs, WidgetRef, widget_class
from .request import RequestView
from .runs import RunsPanel
from .status_line import StatusLine
from .system_text import SystemTextView

PaneT = TypeVar("PaneT")

# A hidden tab's widgets are composed when the tab is first shown (a shorter first frame: fewer
# widgets to style, lay out and mount), except these: the Runs tab counts the stored runs in its
# title, and the app lists runs in its table at any time; the Contributors table sizes its columns
# by every row it has held, so it is filled from the start as before. A tab whose widget's module is
# not imported yet (the table names it by module) gets its widget when first shown too, handed then
# what it would have been handed meanwhile.
EAGER_PANES: tuple[type[Any], ...] = (RunsPanel, ContributorsTable)

# a narrow tab bar's labels (the count a title carries, ``Errors (2)``, is kept)
SHORT_TITLES = {"System text": "System", "Contributors": "Contrib", "Planning": "Plan"}
# a bar narrower still (the prompt pane of an 80-column terminal): the count kept without brackets
TINY_TITLES = {"Request": "Req", "System text": "Sys", "Contributors": "Ctb", "Tools": "Tool", "Planning": "Plan",
               "Expectations": "Exp", "Errors": "Err"}


def tab_label(index: int, title: str) -> Content:
    """A tab's label with its number key in front: ``1 Request``."""
    return Content.assemble((str(index), "bold"), " ", title)  # no user text here, but no markup either


def short_title(title: str, names: dict[str, str] = SHORT_TITLES) -> str:
    for long, short in names.items():
        if title.startswith(long):
            return short + title[len(long):]
    return title


def tiny_title(title: str) -> str:
    """``Err 2`` for ``Errors (2)``: the narrowest label that still says the tab and its count."""
    short = short_title(title, TINY_TITLES)
    return short.replace(" (", " ").removesuffix(")") if short.endswith(")") else short


def styled_title(title: str, style: str) -> str:
    """A tab's label in the ``label_style`` (but ``numbered``, which ``tab_label`` puts together)."""
    return short_title(title) if style == "short" else tiny_title(title) if style == "tiny" else title


def label_style(titles: list[str], width: int) -> str:
    """``"numbered"`` when the labels fit the bar with their number key, else ``"plain"``, else
    ``"short"``, else ``"tiny"`` (so that every tab, ``Errors (2)`` too, stays in sight)."""
    if sum(len(t) + 4 for t in titles) <= width:
        return "numbered"
    if sum(len(t) + 2 for t in titles) <= width:
        return "plain"
    return "short" if sum(len(short_title(t)) + 2 for t in titles) <= width else "tiny"


class PromptDetail(Vertical):
    """The status line and the tabs; ``selection`` says what they show."""

    selection: reactive[Selection] = reactive(Selection, init=False)
    shown: reactive[ExampleReport | None] = reactive(None, init=False, always_update=True)
    busy: reactive[str | None] = reactive(None, init=False)

    def __init__(self, session: Any, tabs: tuple[tuple[str, str, WidgetRef, str], ...], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.session = session  # a ``SessionLike``: its ``report`` and ``evaluate``
        self.tabs = tabs
        self.choices: dict[str, Choice] = {}  # prompt id -> what the user chose for it
        self._panes_shown: tuple[Any, Any] | None = None  # what the panes show now
        self._asked = 0  # the latest showing asked for: only its evaluation's answer is shown
        self._tab_titles = {tab_id: title for tab_id, title, _, _ in tabs}  # ``Runs (12)``: a pane's title now
        self._label_style: str | None = None  # how the labels are shown now
        self.status = StatusLine(id="status")
        self.tabbed = PanelTabs(id="tabs")  # the panes beyond the bar's seven have their tabs hidden
        self._panes: dict[type[Any], Any] = {}  # widget class -> the tab's widget
        self._unmounted: dict[str, Any] = {}  # tab id -> its widget, until the tab is first shown
        self._unmade: dict[str, tuple[WidgetRef, str]] = {}  # tab id -> its widget's module and id, until the tab is first shown

    def compose(self) -> ComposeResult:
        yield self.status
        with self.tabbed:
            for index, (tab_id, title, ref, view_id) in enumerate(self.tabs):
                view = widget_class(ref, view_id, load=index == 0)
                with TabPane(title, id=tab_id):  # numbered by ``label_tabs`` when they fit
                    if view is None:  # its module is imported, and its widget made, when the tab is first shown
                        self._unmade[tab_id] = (ref, view_id)
                        continue
                    pane = self._panes[view] = view(id=view_id)
                    if index == 0 or view in EAGER_PANES:
                        yield pane
                    else:  # mounted when its tab is first shown (``on_tabbed_content_tab_activated``); it keeps its data meanwhile
                        self._unmounted[tab_id] = pane

    def pane(self, view: type[PaneT]) -> PaneT:
        """The tab's widget of class ``view`` (made now if its tab has not been shown yet)."""
        if view not in self._panes:
            for tab_id, (ref, view_id) in list(self._unmade.items()):
                if widget_class(ref, view_id) is view:
                    self._unmounted[tab_id] = self._make_pane(tab_id)
        found: PaneT = self._panes[view]
        return found

    def _make_pane(self, tab_id: str) -> Any:
        """The widget of a tab not shown yet whose module was not imported: imported and made now, and
        handed the data every other report pane holds."""
        ref, view_id = self._unmade.pop(tab_id)
        view = widget_class(ref, view_id)
        assert view is not None
        pane = self._panes[view] = view(id=view_id)
        if isinstance(pane, ReportPane) and view not in (SystemTextView, ErrorsView) and self._panes_shown is not None:
            pane.data = self._panes_shown  # as ``update_panes`` hands it to every other report pane
        return pane

    def on_mount(self) -> None:
        self.call_after_refresh(self.label_tabs)

    # -- what is selected ------------------------------------------------------------------------
    def prompt(self) -> PromptReport | None:
        return rp.find_prompt(self.session.report, self.selection.prompt_id)

    def select(self, prompt_id: str, part: str | None = None) -> None:
        """Show ``prompt_id`` as the user left it, ``part`` highlighted."""
        self.selection = Selection(prompt_id, self.choices.get(prompt_id, Choice()), part)

    def choose(self, **changes: Any) -> None:
        """Change what is chosen for the prompt on screen (``example``, ``budget``, ``target``, ``custom``)."""
        prompt_id = self.selection.prompt_id
        if prompt_id is None:
            return
        choice = self.choices[prompt_id] = replace(self.choices.get(prompt_id, Choice()), **changes)
        self.selection = replace(self.selection, choice=choice)

    def example_names(self) -> dict[str, str | None]:
        """Prompt id -> the example chosen for it (the tree marks that example's contexts)."""
        return {prompt_id: choice.example for prompt_id, choice in self.choices.items()}

    def budget_target(self, prompt: PromptReport | None) -> str:
        """What the budget keys limit for ``prompt``: ``"system"`` text or the whole ``"request"``."""
        if prompt is None:
            return "system"
        return self.choices.get(prompt["id"], Choice()).target or rp.default_budget_target(prompt)

    def watch_selection(self, old: Selection, new: Selection) -> None:
        if old.shows != new.shows:
            self.show_selection()
        else:
            self.update_part()
        if old.prompt_id != new.prompt_id:
            self.pane(RunsPanel).prompt_id = new.prompt_id  # its filter follows the selection

    def show_report(self) -> None:
        """The session has a new report: show the selection from it (the first prompt when the one
        selected is gone)."""
        report = self.session.report
        if rp.find_prompt(report, self.selection.prompt_id) is None and report is not None and report["prompts"]:
            self.select(report["prompts"][0]["id"], self.selection.part)
        else:
            self.show_selection()

    def show_selection(self) -> None:
        """Show the selected example: from the report, or re-evaluated when a budget is set or a
        run's input is loaded."""
        self._asked += 1  # an evaluation still running is for an older showing: its answer is dropped
        prompt = self.prompt()
        if prompt is None:
            self.shown = None
            return
        choice = self.selection.choice
        example = rp.find_example(prompt, choice.example)
        name = example["name"] if example else None
        if name != choice.example:  # the prompt's first example, or the chosen one is gone: no re-show
            self.choices[prompt["id"]] = choice = replace(choice, example=name)
            self.set_reactive(PromptDetail.selection, replace(self.selection, choice=choice))
        if choice.custom is not None or choice.budget is not None:
            target = self.budget_target(prompt)
            self.busy = "evaluating" if choice.custom is not None or target == "system" else "planning"
            self.evaluate(self.selection, target, self._asked)
            self.update_panes()  # the new prompt's status line at once; its panes when the answer comes
        else:
            self.shown = example

    def watch_shown(self) -> None:
        self.update_panes()

    def watch_busy(self) -> None:
        self.update_status()

    # -- the user's keys on the prompt view ---------------------------------------------------------
    def next_example(self) -> None:
        prompt = self.prompt()
        if prompt is None:
            return
        choice = self.selection.choice
        if choice.custom is not None:  # a run's input: back to the examples first
            self.choose(custom=None)
        else:
            self.choose(example=rp.next_example(prompt, choice.example))
        self.post_message(MarksChanged(prompt["id"]))

    def step_budget(self, direction: int) -> None:
        prompt = self.prompt()
        if prompt is None:
            return
        self.choose(budget=rp.step_budget(self.shown, self.selection.choice.budget, direction, self.budget_target(prompt), prompt))

    def clear_budget(self) -> None:
        if self.selection.choice.budget is not None:
            self.choose(budget=None)
            self.post_message(MarksChanged(str(self.selection.prompt_id)))

    def toggle_budget_target(self) -> str | None:
        """Switch what the budget limits: the system text (whole contexts drop) or the request (the
        planner picks ladder rungs). The budget starts over from the new target's own base. Returns
        the new target."""
        prompt = self.prompt()
        if prompt is None:
            return None
        target = "request" if self.budget_target(prompt) == "system" else "system"
        self.choose(target=target, budget=None)
        self.post_message(MarksChanged(prompt["id"]))
        return target

    def show_input(self, prompt_id: str, custom: CustomInput) -> None:
        """Show ``prompt_id`` with a run's input in its examples' place, on the System text tab."""
        self.choices[prompt_id] = replace(self.choices.get(prompt_id, Choice()), custom=custom)
        self.select(prompt_id)
        self.tabbed.active = "tab-system"

    # -- evaluating --------------------------------------------------------------------------------
    # Not ``exclusive``: cancelling a request the worker process is already answering could leave its
    # answer unread; answers for a selection the user has left are dropped in ``on_example_evaluated``.
    @work(group="evaluate", exit_on_error=False)
    async def evaluate(self, selection: Selection, target: str, asked: int) -> None:
        """Evaluate ``selection``'s example (or run input) with its budget on ``target``."""
        prompt_id, choice = str(selection.prompt_id), selection.choice
        custom = choice.custom
        try:
            result = await self.session.evaluate(
                prompt_id,
                example=None if custom is not None else choice.example,
                input=custom.input if custom is not None else None,
                token_budget=choice.budget if target == "system" else None,
                input_budget=choice.budget if target == "request" else None,
                **({"messages": custom.messages} if custom is not None and custom.messages else {}),
            )
        except Exception as exc:  # the engine's own failure: shown like an example's error
            error = LoadError.plain(type(exc).__name__, f"could not evaluate {prompt_id}: {exc}")
            result = FailedExample(custom.label if custom else choice.example or "", {}, error).to_dict()
        self.post_message(ExampleEvaluated(selection, result, asked))

    def on_example_evaluated(self, message: ExampleEvaluated) -> None:
        if message.asked != self._asked or message.selection.shows != self.selection.shows:
            return  # an answer for a selection the user already left, or overtaken by a newer report
        self.busy = None
        self.shown = message.example
        self.post_message(MarksChanged(str(message.selection.prompt_id)))

    # -- the panes -----------------------------------------------------------------------------
    def update_status(self) -> None:
        prompt = self.prompt()
        report = self.session.report
        choice = self.selection.choice
        self.status.data = {
            "prompt": prompt,
            "example": choice.example,
            "custom": choice.custom.label if choice.custom is not None else None,
            "names": rp.example_names(prompt) if prompt else [],
            "budget": choice.budget,
            "target": self.budget_target(prompt),
            "stale": rp.is_stale(report, prompt),
            "verified": report is None or report["verified"],
            "busy": self.busy,
            "shown": self.shown if prompt is not None else None,
        }

    def update_panes(self) -> None:
        """Attributes down: hand every pane the data it shows."""
        report = self.session.report
        prompt = self.prompt()
        self.update_status()
        # Re-rendering a pane costs a redraw in the terminal: skip the ones whose data is unchanged
        # (a save elsewhere in the project leaves the prompt on screen as it was).
        if (prompt, self.shown) != self._panes_shown:
            self._panes_shown = (prompt, self.shown)
            self.pane(SystemTextView).data = self.shown
            self.pane(ContributorsTable).data = self.shown
            # Every other report pane (a new panel's widget too) is handed the prompt and the example shown.
            for view, pane in self._panes.items():
                if isinstance(pane, ReportPane) and view not in (SystemTextView, ErrorsView):
                    pane.data = (prompt, self.shown)
        errors = collect_errors(report, self.shown)
        self.pane(ErrorsView).data = (errors, report is not None and report["stale"], notes(report, prompt))
        self.set_tab_label("tab-errors", f"Errors ({len(errors)})" if errors else "Errors")
        self.update_part()

    def update_part(self) -> None:
        part = self.selection.part
        self.pane(SystemTextView).selected_part = part
        self.pane(RequestView).selected_part = part
        self.pane(ContributorsTable).select_part(part)

    def on_contributors_table_part_highlighted(self, message: ContributorsTable.PartHighlighted) -> None:
        self.selection = replace(self.selection, part=message.source)

    # -- tabs ------------------------------------------------------------------------------------
    @property
    def active_tab(self) -> str:
        return str(self.tabbed.active)

    def show_tab(self, tab_id: str) -> None:
        self.tabbed.active = tab_id

    def tab_ids(self) -> list[str]:
        """The tabs on the bar (the panes beyond it are listed by ``m``: ``tui/panels.py``)."""
        return [tab_id for tab_id, _, _, _ in self.tabs][:BAR_TABS]

    async def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        tab_id = str(event.pane.id)
        pane = self._make_pane(tab_id) if tab_id in self._unmade else self._unmounted.pop(tab_id, None)
        if pane is not None:
            await event.pane.mount(pane)
            self.update_part()  # a table's cursor on the selected part

    def on_pane_titled(self, message: PaneTitled) -> None:
        message.stop()
        self.set_tab_label(str(message.pane.query_ancestor(TabPane).id), message.title)

    def set_tab_label(self, tab_id: str, title: str) -> None:
        if self._tab_titles.get(tab_id) != title:
            self._tab_titles[tab_id] = title
            self._label_style = None  # the widths changed: number the labels again if they fit
        self.label_tabs()

    def label_tabs(self) -> None:
        """Put each tab's number key in its label (``1 Request``) when the labels then still fit the
        tab bar; else plain labels, else short ones (``Contrib``)."""
        tabs = self.tabbed
        width = tabs.size.width
        if width <= 0:
            return
        ids = self.tab_ids()
        style = label_style([self._tab_titles[t] for t in ids], width)
        if style == self._label_style:
            return
        self._label_style = style
        for number, tab_id in enumerate(ids, 1):
            title = self._tab_titles[tab_id]
            tabs.get_tab(tab_id).label = tab_label(number, title) if style == "numbered" else Content(styled_title(title, style))

    def on_resize(self) -> None:
        self.call_after_refresh(self.label_tabs)
