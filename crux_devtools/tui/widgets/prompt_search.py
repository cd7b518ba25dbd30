"""The search bar under the prompt tree: ``/`` opens it; while a query is typed, ``SearchResults``
lists the matching prompts in the tree's place (the tree itself is left as it is, hidden, so
closing the search costs nothing on a project of hundreds of prompts).

``SearchInput`` is the line the query is typed in: Up/Down step through the matches and Escape
cancels (``PromptBrowser`` handles both through ``PromptSearch.Step`` / ``PromptSearch.Cancelled``); Enter is
the Input's own ``Submitted``. Below it, or alone once the search is submitted, a hint says how many
prompts match and which keys step through them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from ..search import PromptMatch
from .prompt_tree import search_label


class SearchInput(Input):
    """The query line. Its keys (in the footer while it has the focus) step and cancel."""

    BINDINGS = [
        Binding("down", "step(1)", "Next match", key_display="↓"),
        Binding("up", "step(-1)", "Prev match", key_display="↑"),
        Binding("enter", "submit", "Open match"),
        Binding("escape", "cancel", "Cancel search"),
    ]

    def action_step(self, direction: int) -> None:
        self.post_message(PromptSearch.Step(direction))

    def action_cancel(self) -> None:
        self.post_message(PromptSearch.Cancelled())


class SearchResults(OptionList):
    """The prompts a query matches, one line each, what matched highlighted. The focus stays in
    the query line: Up/Down there move this list's highlight."""

    LISTED = 100  # drawing hundreds of lines would be charged to the next keystroke: type more instead

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.can_focus = False
        self.listed = 0  # matches listed (selectable); a last, disabled line may say how many more

    def show(self, report: Mapping[str, Any] | None, matches: list[PromptMatch]) -> None:
        by_id = {p.get("id", "?"): p for p in (report or {}).get("prompts", [])}
        stale = bool((report or {}).get("stale"))
        found = [m for m in matches if m.prompt_id in by_id]
        options = [Option(search_label(by_id[m.prompt_id], stale, m), id=m.prompt_id) for m in found[: self.LISTED]]
        self.listed = len(options)
        if len(found) > self.listed:
            options.append(Option(Text(f"… {len(found) - self.listed} more: type more to narrow", "dim italic"), disabled=True))
        self.clear_options()
        self.add_options(options)
        self.highlighted = 0 if self.listed else None

    def step(self, direction: int) -> None:
        if self.listed:
            self.highlighted = ((self.highlighted or 0) + direction) % self.listed

    def chosen(self) -> str | None:
        """The prompt id under the highlight (the first match unless the user stepped)."""
        if self.highlighted is None or not self.listed:
            return None
        return self.get_option_at_index(min(self.highlighted, self.listed - 1)).id


class PromptSearch(Vertical):
    """The query line and the hint; hidden until ``/``."""

    @dataclass
    class Step(Message):
        """Up/Down in the query line: move to the next (``1``) or previous (``-1``) match."""

        direction: int

    @dataclass
    class Cancelled(Message):
        """Escape in the query line: close the search and go back to where the user was."""

    def compose(self) -> ComposeResult:
        yield Static(Text(""), id="search-hint")
        yield SearchInput(placeholder="id, module or file", id="search-input", select_on_focus=False)

    @property
    def input(self) -> SearchInput:
        return self.query_one(SearchInput)

    def open(self, query: str = "") -> None:
        self.display = True
        self.input.display = True
        self.input.value = query
        self.input.cursor_position = len(query)
        # At once, not ``focus()`` (which waits its turn in the queue): keys the user typed right
        # after "/" may already be queued, and they belong to the query, not to the view's bindings.
        self.screen.set_focus(self.input)

    def close(self, keep_hint: bool) -> None:
        """Hide the query line; the hint stays (``keep_hint``) while its matches can be stepped through."""
        self.input.display = False
        self.display = keep_hint

    def show_hint(self, query: str, matched: int, total: int, typing: bool, position: int | None = None) -> None:
        """``matched`` of ``total`` prompts; once submitted, which one is shown (``position``, 1-based)."""
        hint = Text()
        if not typing:
            hint.append("/", "bold")
            hint.append(query, "bold yellow")  # the user's text, literally
            hint.append("  ")
        if not query.strip():
            hint.append(f"{total} prompts · type to search", "dim")
        elif matched == 0:
            hint.append("no prompt matches", "bold red")
        elif typing:
            hint.append(f"{matched} of {total} prompts", "bold")
        else:
            hint.append(f"{position or '-'}/{matched}", "bold")
            hint.append(" · n N · esc clears", "dim")
        self.query_one("#search-hint", Static).update(hint)
