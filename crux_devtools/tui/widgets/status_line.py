"""One line above the tabs: which prompt and example are shown, the sent request's size against its
limit, and the budget in force (what ``+``/``-`` change), whether the report is stale, and
``◌ verifying`` while a fresh load of the whole project has yet to confirm it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from typing import Any

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from ...inspector.report_types import ExampleReport, PromptReport
from ..report import status_badge


MAX_LINES = 2  # the status line's height at most (app.tcss): what it must say fits in two lines


def request_size(shown: ExampleReport | None, compact: bool = False) -> Text:
    """``input 2,238 of 5,292 ✓ fits``: the planned request of the example on screen, with the one
    status of that example (so the line never says ``over`` beside ``fits``); ``compact`` drops
    the word ``input``."""
    if not shown:
        return Text("")
    preview = shown["preview"]
    text = Text()
    if preview is not None:
        if not compact:
            text.append("input ", "dim")
        text.append(f"{preview['input_tokens']:,}", "bold")
        text.append(" of ", "dim")
        text.append(f"{preview['max_input_tokens']:,}", "bold")
        text.append(" ")
    text.append(*status_badge(shown["status"]))
    return text


def budget_words(prompt: PromptReport, shown: ExampleReport | None, budget: int | None, target: str, compact: bool = False) -> Text:
    """What the budget keys limit and the value in force: ``input budget 4,000 (agent)`` for the
    whole request, ``token_budget 150 (prompt)`` for the system text; ``(set)`` when chosen here.
    ``compact``: ``budget 4,000 (set)`` whatever it limits."""
    name = "budget" if compact else "input budget" if target == "request" else "token_budget"
    text = Text(f"{name} ", "dim")
    if budget is not None:
        text.append(f"{budget:,}", "bold cyan")
        text.append(" (set)", "cyan")
        return text
    if target == "request":
        default = prompt["default_budget"] if prompt["kind"] == "agent" else None
        origin = "agent"
    else:
        inspection: Mapping[str, Any] = (shown["inspection"] if shown is not None else None) or {}
        default = inspection.get("token_budget")
        origin = "prompt"
    if default is not None:
        text.append(f"{default:,}", "cyan")
        text.append(f" ({origin})", "dim")
    else:
        text.append("none", "dim")
    return text


def status_text(
    prompt: PromptReport | None,
    example: str | None,
    names: list[str],
    budget: int | None,
    stale: bool,
    busy: str | None,
    target: str = "system",
    shown: ExampleReport | None = None,
    width: int | None = None,
    custom: str | None = None,
    verified: bool = True,
) -> Text:
    """The line; with ``width``, it breaks between its pieces (never inside one) to fit. When the
    pieces need more than ``MAX_LINES`` lines they are said shorter (``signed-in 1/2``, ``217 of
    5,702``, ``budget 99 (set)``), the budget before the size, so that the budget in force stays in
    sight in a narrow pane (an 80-column terminal). What the app is busy with goes last and is cut
    rather than wrapped, so that the line's height (and the layout under it) does not change while
    the project reloads."""
    if prompt is None:
        return Text("No prompt selected", style="dim")
    pieces = _pieces(prompt, example, names, budget, stale, target, shown, custom, compact=False)
    text = _laid_out(pieces, width)
    if width is not None and text.plain.count("\n") >= MAX_LINES:
        text = _laid_out(_pieces(prompt, example, names, budget, stale, target, shown, custom, compact=True), width)
    if not verified:  # a fresh load of the whole project is checking the report (it replaces it if they differ)
        text.append("  ◌ verifying", "yellow")
    if busy:  # never on a line of its own: the line's height stays put while the app is busy
        text.append(f"  … {busy}", "italic dim")
    return text


def _pieces(
    prompt: PromptReport, example: str | None, names: list[str], budget: int | None, stale: bool, target: str,
    shown: ExampleReport | None, custom: str | None, *, compact: bool,
) -> list[Text]:
    pieces: list[Text] = []
    if stale:
        pieces.append(Text(" ◌ STALE: last load failed ", "bold black on yellow"))
    who = Text()
    who.append(f" {prompt['kind']} ", "reverse")
    who.append(" ")
    who.append(prompt["id"], "bold")
    pieces.append(who)
    if custom is not None:  # a recorded run's input, loaded from the run's detail
        pieces.append(Text.assemble("input of ", (custom, "bold magenta")))
    elif names:
        index = names.index(example) + 1 if example in names else 1
        pieces.append(Text(f"{example} {index}/{len(names)}" if compact else f"example {example} ({index}/{len(names)})"))
    size = request_size(shown, compact)
    if not size.plain and prompt.get("status"):  # no example on screen (none to show): the prompt's own status
        size = Text(*status_badge(prompt["status"]))
    budget_piece = budget_words(prompt, shown, budget, target, compact)
    if compact:  # the budget first: the size is the one to be cut when even this does not fit
        pieces.append(budget_piece)
    if size.plain:
        pieces.append(size)
    if not compact:
        pieces.append(budget_piece)
    return pieces


def _laid_out(pieces: list[Text], width: int | None) -> Text:
    text = Text(no_wrap=True, overflow="ellipsis")
    column = 0
    for n, piece in enumerate(pieces):
        if n:
            if width is not None and column + 2 + piece.cell_len > width:
                text.append("\n")
                column = 0
            else:
                text.append("  ")
                column += 2
        text.append(piece)
        column += piece.cell_len
    return text


class StatusLine(Static):
    """``data`` is the keyword arguments of ``status_text``; the line is laid out for the widget's
    width again when it is resized."""

    data: reactive[dict[str, Any] | None] = reactive(None, always_update=True)

    def watch_data(self) -> None:
        self.show_status()

    def on_resize(self) -> None:
        # after this layout: an update made while the screen is laid out would not lay it out again
        self.call_after_refresh(self.show_status)

    _shown: Text | None = None  # the line on screen

    def show_status(self) -> None:
        # the last layout's outer size is cheap to read (content_size would ask the compositor)
        width = self.outer_size.width - self.styles.gutter.width
        text = status_text(**self.data, width=max(20, width) if width > 0 else None) if self.data else Text("")
        shown, self._shown = self._shown, text
        if shown is not None and text == shown:
            return  # the same line (a save elsewhere, a key that changed nothing here): no redraw
        # as many lines as before (the line is never wrapped): repainted, the screen not laid out again
        self.update(text, layout=shown is None or text.plain.count("\n") != shown.plain.count("\n"))
