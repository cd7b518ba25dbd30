"""Asked before running an agent whose model is not a ScriptedModel: it costs money and runs real tools."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class ConfirmRun(ModalScreen[bool]):
    """Dismissed with ``True`` to run, ``False`` to cancel."""

    BINDINGS = [
        Binding("y", "answer(True)", "Run it"),
        Binding("n,escape", "answer(False)", "Cancel"),
    ]

    def __init__(self, target: str, model: str | None, estimate: str | None = None) -> None:
        super().__init__()
        self.target = target
        self.model = model  # the name of the model the worker is about to call
        self.estimate = estimate  # its first request priced at that model (``Prices.question``)

    yes_label = "Run (y)"

    def question(self) -> Text:
        return Text.assemble(("Run ", "bold"), (self.target, "bold cyan"), (" for real?", "bold"))

    def detail(self) -> Text:
        return Text(
            f"Its model is not a ScriptedModel (model: {self.model or 'unnamed'}): the run calls the model, which may cost "
            f"money, and executes the agent's real tools. {self.estimate + ' for the first request. ' if self.estimate else ''}"
            "It is recorded in the Runs tab."
        )

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-box"):
            yield Static(self.question(), id="confirm-question")
            yield Static(self.detail(), id="confirm-detail")
            with Horizontal(id="confirm-buttons"):
                yield Button(self.yes_label, variant="warning", id="confirm-yes")
                yield Button("Cancel (n)", variant="primary", id="confirm-no")

    def on_mount(self) -> None:
        self.query_one("#confirm-no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "confirm-yes")

    def action_answer(self, run: bool) -> None:
        self.dismiss(run)
