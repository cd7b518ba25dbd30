"""The left pane: the prompt tree, and the ``/`` search over it.

``PromptBrowser`` owns the search: ``open_search`` (the app's ``/``) opens the query line under the
tree; typing lists, in the tree's place, the prompts whose id, module or file contain every word
typed; Up/Down step through them, Enter opens the one highlighted, Escape goes back to the tree as it
was. Once submitted, the matches stay highlighted in the tree and ``n`` / ``N`` (this widget's keys,
in the footer only then) open the next / previous one; Escape clears them. Opening a prompt posts
``PromptOpened``: the app shows it on the right.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input

from ..messages import PromptOpened
from ..search import find_matches, step, terms
from .prompt_search import PromptSearch, SearchResults
from .prompt_tree import NodeRef, PromptTree


class PromptBrowser(Vertical):
    """The tree, the search's matches (in the tree's place while a query is typed) and the search bar."""

    BINDINGS = [
        Binding("n", "search_step(1)", "Next match", tooltip="Open the next prompt the search matched"),
        Binding("N", "search_step(-1)", "Prev match", tooltip="Open the previous prompt the search matched"),
        Binding("escape", "clear_search", "Clear search", show=False),
    ]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.prompt_tree = PromptTree(id="tree")
        self.results = SearchResults(id="results")
        self.search = PromptSearch(id="search")

    def compose(self) -> ComposeResult:
        yield self.prompt_tree
        yield self.results
        yield self.search

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``n`` / ``N`` and Escape step through and clear a submitted search: off (and out of the
        footer) when there is none."""
        if action in ("search_step", "clear_search"):
            return self.search_active()
        return True

    def search_active(self) -> bool:
        """A submitted search whose matches ``n`` / ``N`` step through (the query line closed)."""
        return bool(terms(self.prompt_tree.query_text)) and not self.search.input.display

    def current(self) -> str | None:
        ref = self.prompt_tree.current
        return ref.prompt_id if ref is not None else None

    def open_prompt(self, prompt_id: str) -> None:
        """Select ``prompt_id`` in the tree at once (in the frame that closes the search), and have
        the app show it."""
        self.reveal(prompt_id)
        self.post_message(PromptOpened(prompt_id))

    def reveal(self, prompt_id: str) -> None:
        """Select ``prompt_id`` in the tree, centred, and give the tree the focus (an open search gives way)."""
        if self.search.input.display:
            self.close_search(highlight="")
        self.prompt_tree.select_node_ref(NodeRef(prompt_id), center=True)
        self.prompt_tree.focus()
        self.update_search_hint()

    # -- typing a query ----------------------------------------------------------------------------
    def open_search(self) -> None:
        """``/``: the query line opens with the last query, the cursor at its end."""
        self.search.open(self.prompt_tree.query_text)
        self.show_results(self.prompt_tree.query_text)

    def show_results(self, query: str) -> None:
        """While typing: the matches listed in the tree's place (the tree again for an empty query)."""
        report = self.prompt_tree.report
        matches = find_matches(report, query) if terms(query) else None
        if matches is None:
            self.results.display, self.prompt_tree.display = False, True
        else:
            self.results.show(report, matches)
            self.results.display, self.prompt_tree.display = True, False
        self.search.show_hint(query, len(matches or []), len(self.prompt_tree.prompt_ids()), True)

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id != "search-input" or not event.input.display:
            return
        event.stop()
        self.show_results(event.value)

    def on_prompt_search_step(self, message: PromptSearch.Step) -> None:
        self.results.step(message.direction)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "search-input":
            return
        event.stop()
        query = event.value
        if not terms(query):
            self.close_search(highlight="")
            return
        chosen = self.results.chosen()
        if chosen is None:
            self.app.notify(f"No prompt's id, module or file contains {query.strip()!r}.", severity="warning")
            return
        self.close_search(highlight=query)
        self.open_prompt(chosen)

    def on_prompt_search_cancelled(self, message: PromptSearch.Cancelled) -> None:
        """Escape while typing: the tree again, as it was (its cursor never moved)."""
        self.close_search(highlight="")

    def close_search(self, highlight: str) -> None:
        """Close the query line and show the tree again, with ``highlight``'s matches marked (``""``:
        none; the hint then goes too)."""
        self.results.display = False
        self.prompt_tree.display = True
        if highlight != self.prompt_tree.query_text:
            self.prompt_tree.highlight(highlight)
        self.search.close(keep_hint=bool(terms(highlight)))
        self.prompt_tree.focus()
        self.update_search_hint()

    # -- a submitted search ------------------------------------------------------------------------
    def action_search_step(self, direction: int) -> None:
        """``n`` / ``N``: open the next / previous match of the submitted search."""
        target = step(self.prompt_tree.prompt_ids(), self.prompt_tree.match_ids(), self.current(), direction)
        if target is not None:
            self.open_prompt(target)

    def action_clear_search(self) -> None:
        self.close_search(highlight="")

    def update_search_hint(self) -> None:
        """After the report or the selection changed: the results (while typing) or the hint."""
        if not self.search.display:
            return
        if self.search.input.display:
            self.show_results(self.search.input.value)
            return
        ids = self.prompt_tree.match_ids()
        current = self.current()
        position = ids.index(current) + 1 if current in ids else None
        self.search.show_hint(self.prompt_tree.query_text, len(ids), len(self.prompt_tree.prompt_ids()), False, position)
