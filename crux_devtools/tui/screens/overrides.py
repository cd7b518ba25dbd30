"""The replay screen's overrides (``o``): one input per override of ``Overrides`` whose kind has a line
in ``_EDITS`` (a number, a text, a list of names, a list of ``C=R`` pairs), in the table's order,
each named by its form name and titled by its CLI option's help. ``enter`` replays with what the
inputs say (a blank input: as recorded), ``escape`` leaves the replay as it was; a value the
override refuses (``Overrides.from_dict``'s words) is said under the inputs and the screen stays.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from ...core.record.replay_overrides import Overrides, form_name, wire_fields


def _number(text: str) -> Any:
    return int(text) if text.lstrip("-").isdigit() else text


def _pairs(text: str) -> Any:
    pairs = [part.partition("=") for part in _names(text)]
    return {first.strip(): second.strip() for first, _sep, second in pairs} if all(sep for _first, sep, _second in pairs) else text


def _names(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


# Each kind of override (``replay_overrides._KINDS``) the screen edits: its value as the input's text,
# and the text as the value ``Overrides.from_dict`` checks (a list: comma-separated). A kind not
# here has no input.
_EDITS: dict[str, tuple[Any, Any]] = {
    "int | None": (lambda v: "" if v is None else str(v), _number),
    "str | None": (lambda v: v or "", lambda text: text),
    "tuple[tuple[str, str], ...]": (lambda v: ", ".join(f"{c}={r}" for c, r in v), _pairs),
    "tuple[str, ...]": (lambda v: ", ".join(v), _names),
}


def edited_fields() -> tuple[dataclasses.Field[Any], ...]:
    """The overrides the screen has an input for."""
    return tuple(f for f in wire_fields() if str(f.type) in _EDITS)


def input_text(f: dataclasses.Field[Any], overrides: Overrides) -> str:
    """The override's value in ``overrides`` as its input's text."""
    return str(_EDITS[str(f.type)][0](getattr(overrides, f.name)))


def read_inputs(texts: dict[str, str]) -> Overrides:
    """The overrides the inputs say (form name -> text; blank: as recorded). ``ValueError`` in the
    words of ``Overrides.from_dict`` for a value it refuses."""
    values = {f.name: _EDITS[str(f.type)][1](texts[form_name(f)].strip()) for f in edited_fields() if texts.get(form_name(f), "").strip()}
    return Overrides.from_dict(values)


class OverridesScreen(ModalScreen[Overrides | None]):
    """Dismissed with the overrides the inputs say, or ``None`` (``escape``): nothing changes."""

    DEFAULT_CSS = """
    OverridesScreen { align: center middle; }
    #overrides-box { width: 84; height: auto; padding: 1 2; border: thick $accent; background: $surface; }
    #overrides-box Input { margin-bottom: 1; }
    #overrides-problem { color: $error; }
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, now: Overrides) -> None:
        super().__init__()
        self.now = now

    def compose(self) -> ComposeResult:
        with Vertical(id="overrides-box"):
            yield Static(Text("Replay with (blank: as recorded; a list: comma-separated; enter replays, escape leaves it as it was)", style="bold"))
            for f in edited_fields():
                yield Static(Text.assemble((form_name(f), "bold cyan"), (f" {f.metadata['metavar']}  ", "cyan"), (f.metadata["help"], "dim")))
                yield Input(input_text(f, self.now), id=f"override-{form_name(f)}", placeholder="as recorded")
            yield Static(Text(""), id="overrides-problem")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        texts = {str(i.id).removeprefix("override-"): i.value for i in self.query(Input)}
        try:
            overrides = read_inputs(texts)
        except ValueError as exc:
            self.query_one("#overrides-problem", Static).update(Text(str(exc)))
            return
        self.dismiss(overrides)

    def action_cancel(self) -> None:
        self.dismiss(None)


__all__ = ["OverridesScreen", "edited_fields", "input_text", "read_inputs"]
