"""The Diff screen: what the working tree's edits do to every request, against a git revision.

The same review as ``crux-devtools diff`` and the web page's ``/diff`` (``crux_devtools.review``),
recomputed whenever the session reports a new load (a save); the base revision is evaluated once
per commit and kept for the session. Every text from the project is shown as plain ``Text``.
"""

from __future__ import annotations

import weakref
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Header, Input, Static

from ...inspector.features.diff.live import LiveDiff
from ...review.view import ReviewView, review_view
from ..widgets.footer import KeysFooter

_DIFF_STYLES = {"add": "green", "del": "red", "hunk": "cyan", "more": "dim"}  # a text change's diff lines
_LIVE: weakref.WeakKeyDictionary[Any, LiveDiff] = weakref.WeakKeyDictionary()


def live_diff(session: Any) -> LiveDiff:
    """One ``LiveDiff`` per session, so each base revision is evaluated once."""
    live = _LIVE.get(session)
    if live is None:
        live = _LIVE[session] = LiveDiff(session)
    return live


def render_review(view: ReviewView) -> Text:
    """The review as plain text with styles (never markup)."""
    text = Text()
    if view.error:
        text.append("Cannot compare: ", style="bold red")
        text.append(view.error)
        return text
    text.append(view.base, style="bold")
    text.append(" → ")
    text.append(view.head, style="bold")
    text.append(": ")
    text.append(view.headline, style="bold yellow" if view.rows else "bold green")
    text.append("\n")
    if view.rows and not view.priced:
        text.append("no model planned here has a price: costs are unpriced\n", style="dim")
    current = None
    for row in view.rows:
        if row.prompt != current:
            current = row.prompt
            text.append("\n")
            text.append(row.prompt, style="bold cyan")
            text.append(f" ({row.kind}, {row.where})\n", style="dim")
        text.append(f"  {row.example}", style="bold")
        cost = f"  {row.cost} / 1,000 calls" if view.priced else ""
        text.append(f"  {row.tokens} tokens ({row.delta})  cacheable prefix {row.cache}{cost}\n")
        for change in row.changes:
            text.append(f"    {change.text}\n")
            for kind, line in change.diff:
                text.append(f"      {line}\n", style=_DIFF_STYLES.get(kind, ""))
    for note in view.notes:
        text.append(f"\n{note}", style="dim")
    return text


class DiffScreen(Screen[None]):
    """``escape`` goes back; ``B`` edits the base revision (default ``HEAD``)."""

    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("B", "edit_base", "Base revision"),
    ]
    DEFAULT_CSS = """
    DiffScreen #diff-base { display: none; }
    DiffScreen #diff-base.editing { display: block; }
    DiffScreen #diff-body { padding: 0 1; }
    """

    class Stale(Message):
        """The session reported a new load: recompute."""

    def __init__(self, session: Any, base: str = "HEAD") -> None:
        super().__init__()
        self.session = session
        self.base = base
        self.computed = 0  # reviews shown so far (tests wait on it)
        self._unsubscribe: Any = None

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        yield Input(self.base, id="diff-base", placeholder="base revision, e.g. HEAD, main, HEAD~3")
        with VerticalScroll(id="diff-scroll"):
            yield Static(Text("comparing with the base revision…"), id="diff-body")
        yield KeysFooter(compact=True)  # whole entries only, at any width

    def on_mount(self) -> None:
        self.sub_title = f"changes against {self.base}"
        self._unsubscribe = self.session.subscribe(lambda event: self.post_message(self.Stale()) if event.kind in ("report", "error") else None)
        self.query_one("#diff-scroll").focus()
        self.recompute()

    def on_unmount(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()

    def on_diff_screen_stale(self, _message: Stale) -> None:
        self.recompute()

    @work(exclusive=True, group="diff", exit_on_error=False)
    async def recompute(self) -> None:
        document = await live_diff(self.session).document(self.base)
        self.query_one("#diff-body", Static).update(render_review(review_view(document)))
        self.computed += 1

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_edit_base(self) -> None:
        field = self.query_one("#diff-base", Input)
        field.add_class("editing")
        field.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.base = event.value.strip() or "HEAD"
        event.input.remove_class("editing")
        self.sub_title = f"changes against {self.base}"
        self.query_one("#diff-scroll").focus()
        self.recompute()
