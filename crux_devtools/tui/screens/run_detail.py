"""One recorded run, step by step: its steps on the left, the chosen step on the right.

The right side shows the run's header (input, answer, error), then the step's tokens beside the
provider's usage, the planner's decisions, what came back, and what was sent (system text part by
part with its rung, messages, tool schemas). ``i`` leaves with ``OpenInPrompt``: the app loads the
run's input as the custom input of its prompt, with the shown step's messages (the tool traffic
before it), so the prompt view plans the request as that step sent it and the budget keys replay it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Header, OptionList, Static
from textual.widgets.option_list import Option

from ...inspector.api import find_prompt
from ...inspector.features.shown.visible import visible
from ..glance_render import render_glance
from ..runs_render import no_steps_text, render_run_header, render_step_outcome, render_step_sent, step_label
from ..widgets.footer import KeysFooter


@dataclass(frozen=True, slots=True)
class OpenInPrompt:
    """What the detail screen is dismissed with when the user asks for the prompt view."""

    target: str
    input: Any
    label: str  # e.g. "run 3f2a… step 1": what the status line says the input is
    messages: dict[str, Any] | None = None  # the step's messages (``replaying.step_messages``); None: the input alone


class RunDetailScreen(Screen[OpenInPrompt | None]):
    """``run`` is the whole run (with ``steps``); ``step`` the one shown first."""

    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("n,right_square_bracket", "step(1)", "Next step", key_display="n"),
        Binding("p,left_square_bracket", "step(-1)", "Prev step", key_display="p"),
        Binding("s", "jump_sent", "Sent / top"),
        Binding("i", "open_in_prompt", "Open in prompt view"),
        Binding("R", "replay", "Replay step"),
    ]

    def __init__(self, run: dict[str, Any], step: int | None = None) -> None:
        super().__init__()
        self.run = run
        steps = run.get("steps") or []
        self.step_index: int | None = None if not steps else max(0, min(step if step is not None else 0, len(steps) - 1))

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with Horizontal(id="run-detail"):
            options = [Option(step_label(s), id=str(i)) for i, s in enumerate(self.run.get("steps") or [])]
            steps = OptionList(*options, id="run-steps")
            steps.can_focus = False  # the body keeps the focus (arrows scroll it); n/p change the step
            yield steps
            with VerticalScroll(id="run-body"):
                yield Static(render_run_header(self.run), id="run-head")
                yield Static(Text(""), id="run-glance")
                yield Static(Text(""), id="step-outcome")
                yield Static(Text(""), id="step-sent")
        yield KeysFooter(compact=True)  # whole entries only, at any width

    def on_mount(self) -> None:
        self.sub_title = visible(f"run {self.run.get('id', '?')} of {self.run.get('target', '?')}")
        self.query_one("#run-body").focus()
        self.show_step()

    def show_step(self) -> None:
        steps = self.run.get("steps") or []
        outcome = self.query_one("#step-outcome", Static)
        sent = self.query_one("#step-sent", Static)
        if self.step_index is None:
            outcome.update(no_steps_text())
            sent.update(Text(""))
            return
        self.query_one("#run-glance", Static).update(render_glance(self.run, self.step_index, self.context_names()))
        step = steps[self.step_index]
        outcome.update(render_step_outcome(step))
        sent.update(render_step_sent(step))
        options = self.query_one("#run-steps", OptionList)
        if options.highlighted != self.step_index:
            options.highlighted = self.step_index

    def context_names(self) -> list[str]:
        """The target prompt's contexts, so the bars colour each one as the prompt's views do."""
        session = getattr(self.app, "session", None)
        prompt = find_prompt(getattr(session, "report", None), str(self.run.get("target") or ""))
        return [c["id"] for c in prompt["contexts"]] if prompt is not None else []

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        index = event.option_index
        if index != self.step_index:
            self.step_index = index
            self.show_step()
            self.query_one("#run-body", VerticalScroll).scroll_to_widget(self.query_one("#step-outcome"), animate=False, top=True)

    def action_step(self, direction: int) -> None:
        steps = self.run.get("steps") or []
        if self.step_index is None:
            return
        index = max(0, min(self.step_index + direction, len(steps) - 1))
        if index != self.step_index:
            self.step_index = index
            self.show_step()
            self.query_one("#run-body", VerticalScroll).scroll_to_widget(self.query_one("#step-outcome"), animate=False, top=True)

    def action_jump_sent(self) -> None:
        """To what was sent in this step, or back to the top when already there."""
        body = self.query_one("#run-body", VerticalScroll)
        sent = self.query_one("#step-sent")
        if body.scroll_y >= sent.virtual_region.y - 1 and body.scroll_y > 0:
            body.scroll_home(animate=False)
        else:
            body.scroll_to_widget(sent, animate=False, top=True)

    def action_back(self) -> None:
        self.dismiss(None)

    def action_open_in_prompt(self) -> None:
        from ...inspector.features.replay.document import step_messages

        label = f"run {str(self.run.get('id', '?'))[:12]}"
        messages = None
        if self.step_index is not None:
            label += f" step {self.step_index}"
            index = (self.run.get("steps") or [])[self.step_index].get("index", self.step_index)
            opener = getattr(getattr(self.app, "session", None), "runs", None)
            try:
                store = opener() if callable(opener) else None
                messages = step_messages(store, self.run, int(index))
            except Exception:  # noqa: BLE001 - an unreadable store: the step's messages split without its plan inputs
                messages = step_messages(None, self.run, int(index))
        self.dismiss(OpenInPrompt(str(self.run.get("target") or ""), self.run.get("input"), label, messages))

    def action_replay(self) -> None:
        """Replay the shown step from its recording, beside variants (``screens/replay.py``)."""
        from .replay import ReplayScreen

        steps = self.run.get("steps") or []
        session = getattr(self.app, "session", None)
        if self.step_index is not None and session is not None:
            self.app.push_screen(ReplayScreen(self.run, int(steps[self.step_index].get("index", self.step_index)), session))
