"""Getting to a prompt and a tab without scrolling: ``/`` search, the command palette, number keys.

A mixin of ``CruxTui`` (its keys are in ``CruxTui.BINDINGS``):

- ``/`` opens the search bar under the tree; typing lists, in the tree's place, the prompts whose
  id, module or file contain every word typed; Up/Down step through them, Enter opens the one
  highlighted, Escape goes back to the tree as it was. Once submitted, the matches stay highlighted
  in the tree and ``n`` / ``N`` open the next / previous one; Escape clears them.
- Ctrl+P: ``PromptCommands`` offers "Open prompt <id> (module, file)" for every prompt and agent.
- ``1``..``7`` show the Nth tab: the tab labels carry their number when they all fit (else plain
  labels, else short ones, so that ``Errors (2)`` stays in sight); the footer says ``1-7 Tabs``.
"""

from __future__ import annotations

import functools
from typing import Any

from textual import events
from textual.app import App
from textual.binding import Binding
from textual.command import Hit, Hits, Provider
from textual.content import Content
from textual.style import Style
from textual.widgets import Input, TabbedContent, TabPane

from . import report as rp
from .panels import BAR_TABS
from .search import find_matches, step, terms
from .widgets.prompt_search import PromptSearch, SearchInput, SearchResults
from .widgets.prompt_tree import NodeRef, PromptTree


@functools.cache
def typed_actions(app_class: type[App[None]]) -> frozenset[str]:
    """The actions of ``app_class.BINDINGS`` bound to a character key (``e``, ``+``, ``1``, ``/``):
    an input with the focus types these characters, so the actions are off meanwhile."""
    names = set()
    for binding in Binding.make_bindings(app_class.BINDINGS):
        key = binding.key
        if len(key) == 1 or key in ("plus", "minus", "equals_sign", "slash", "space"):
            names.add(binding.action.split("(", 1)[0])
    return frozenset(names)


def tab_label(index: int, title: str) -> Content:
    """A tab's label with its number key in front: ``1 Request``."""
    return Content.assemble((str(index), "bold"), " ", title)  # no user text here, but no markup either


# a narrow tab bar's labels (the count a title carries, ``Errors (2)``, is kept)
SHORT_TITLES = {"System text": "System", "Contributors": "Contrib", "Planning": "Plan"}


def short_title(title: str) -> str:
    for long, short in SHORT_TITLES.items():
        if title.startswith(long):
            return short + title[len(long):]
    return title


def palette_text(prompt: dict[str, Any]) -> str:
    kind = "agent" if prompt.get("kind") == "agent" else "prompt"
    where = ", ".join(str(prompt[f]) for f in ("module", "file") if prompt.get(f))
    return f"Open {kind} {prompt.get('id', '?')}" + (f" ({where})" if where else "")


class PromptCommands(Provider):
    """The command palette's prompts: one command per prompt and agent of the report on screen."""

    def _entries(self) -> list[tuple[str, str]]:
        report = getattr(self.app, "session").report  # CruxTui; typed loosely to avoid an import cycle
        return [(palette_text(p), str(p.get("id", "?"))) for p in (report or {}).get("prompts", [])]

    def _open(self, prompt_id: str) -> None:
        getattr(self.app, "open_prompt")(prompt_id)

    # No ``discover``: with hundreds of prompts the empty palette would bury Textual's own commands
    # (Keys, Theme, Quit). The prompts come up as soon as something is typed.

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for text, prompt_id in self._entries():
            score, offsets = matcher.fuzzy_search.match(query, text)
            if score > 0:
                # Matcher.highlight would parse ``text`` as markup; an id is the user's literal text
                display = Content(text)
                for offset in offsets:
                    display = display.stylize(Style(reverse=True), offset, offset + 1)
                yield Hit(score, display, functools.partial(self._open, prompt_id), text=text)


class NavigationActions:
    """``/``, ``n`` / ``N``, Escape, the number keys, and ``open_prompt`` (the palette's command)."""

    prompt_id: str | None
    runs_follow_prompt: bool
    selected_part: str | None

    # -- tabs --------------------------------------------------------------------------------------
    _tab_titles: dict[str, str]  # tab id -> its title now (``Runs (12)``), numbered or not on screen
    _tab_label_style: str | None = None  # how the labels are shown now: "numbered", "plain" or "short"

    def tab_ids(self: Any) -> list[str]:
        """The tabs on the bar (the panes beyond it are reached with ``m``: ``tui/panels.py``)."""
        return [str(pane.id) for pane in self.query_one(TabbedContent).query(TabPane)][:BAR_TABS]

    def set_tab_label(self: Any, tab_id: str, title: str) -> None:
        if self._tab_titles.get(tab_id) != title:
            self._tab_titles[tab_id] = title
            self._tab_label_style = None  # the widths changed: number the labels again if they fit
        self.label_tabs()

    def label_tabs(self: Any) -> None:
        """Put each tab's number key in its label (``1 Request``) when the labels then still fit the
        tab bar; else plain labels, else short ones (``Contrib``), so that every tab, ``Errors (2)``
        too, stays in sight (the footer says ``1-7``)."""
        tabs = self.query_one(TabbedContent)
        ids = self.tab_ids()
        titles = self._tab_titles
        width = tabs.size.width
        if width <= 0:
            return
        style = "numbered" if sum(len(titles[t]) + 4 for t in ids) <= width else "plain"
        if style == "plain" and sum(len(titles[t]) + 2 for t in ids) > width:
            style = "short"
        if style == self._tab_label_style:
            return
        self._tab_label_style = style
        for number, tab_id in enumerate(ids, 1):
            title = titles[tab_id]
            tabs.get_tab(tab_id).label = tab_label(number, title) if style == "numbered" else Content(short_title(title) if style == "short" else title)

    def on_resize(self: Any) -> None:
        self.call_after_refresh(self.label_tabs)

    def action_show_tab(self: Any, number: int) -> None:
        ids = self.tab_ids()
        if 1 <= number <= len(ids):
            self.query_one(TabbedContent).active = ids[number - 1]

    # -- opening a prompt ----------------------------------------------------------------------
    def open_prompt(self: Any, prompt_id: str) -> None:
        """Select ``prompt_id`` in the tree and show it (from the search, ``n``/``N`` or the palette)."""
        if rp.find_prompt(self.session.report, prompt_id) is None:
            self.notify(f"{prompt_id} is not in the project as loaded now.", severity="warning")
            return
        if self.query_one(PromptSearch).input.display:  # the palette over an open search: the search gives way
            self.close_search(highlight="")
        tree = self.query_one(PromptTree)
        changed = prompt_id != self.prompt_id
        self.prompt_id = prompt_id
        self.selected_part = None
        tree.select_node_ref(NodeRef(prompt_id), center=True)
        tree.focus()
        if changed:
            self.show_selection()
            if self.runs_follow_prompt:
                self.refresh_runs()
        else:
            self.update_part()
        self.update_search_hint()

    # -- search --------------------------------------------------------------------------------
    def action_search(self: Any) -> None:
        """``/``: the query line opens with the last query, the cursor at its end."""
        tree = self.query_one(PromptTree)
        self.query_one(PromptSearch).open(tree.query_text)
        self.show_results(tree.query_text)

    def show_results(self: Any, query: str) -> None:
        """While typing: the matches listed in the tree's place (the tree again for an empty query)."""
        tree = self.query_one(PromptTree)
        results = self.query_one(SearchResults)
        report = self.session.report
        matches = find_matches(report, query) if terms(query) else None
        if matches is None:
            results.display, tree.display = False, True
        else:
            results.show(report, matches)
            results.display, tree.display = True, False
        self.query_one(PromptSearch).show_hint(query, len(matches or []), len(tree.prompt_ids()), True)

    def on_key(self: Any, event: events.Key) -> None:
        """A character typed right after ``/`` can reach the app after the focus moved to the query
        line (it was already queued at the tree): it belongs to the query, in order."""
        search = self.focused
        if isinstance(search, SearchInput) and event.is_printable and event.character:
            event.stop()
            search.insert_text_at_cursor(event.character)

    def on_input_changed(self: Any, event: Input.Changed) -> None:
        if event.input.id != "search-input" or not event.input.display:
            return
        event.stop()
        self.show_results(event.value)

    def on_prompt_search_step(self: Any, message: PromptSearch.Step) -> None:
        self.query_one(SearchResults).step(message.direction)

    def on_input_submitted(self: Any, event: Input.Submitted) -> None:
        if event.input.id != "search-input":
            return
        event.stop()
        query = event.value
        if not terms(query):
            self.close_search(highlight="")
            return
        chosen = self.query_one(SearchResults).chosen()
        if chosen is None:
            self.notify(f"No prompt's id, module or file contains {query.strip()!r}.", severity="warning")
            return
        self.close_search(highlight=query)
        self.open_prompt(chosen)

    def on_prompt_search_cancelled(self: Any, message: PromptSearch.Cancelled) -> None:
        """Escape while typing: the tree again, as it was (its cursor never moved)."""
        self.close_search(highlight="")

    def close_search(self: Any, highlight: str) -> None:
        """Close the query line and show the tree again, with ``highlight``'s matches marked (``""``:
        none; the hint then goes too)."""
        tree = self.query_one(PromptTree)
        self.query_one(SearchResults).display = False
        tree.display = True
        if highlight != tree.query_text:
            tree.highlight(highlight)
        self.query_one(PromptSearch).close(keep_hint=bool(terms(highlight)))
        tree.focus()
        self.update_search_hint()

    def action_search_step(self: Any, direction: int) -> None:
        """``n`` / ``N``: open the next / previous match of the submitted search."""
        tree = self.query_one(PromptTree)
        target = step(tree.prompt_ids(), tree.match_ids(), self.prompt_id, direction)
        if target is not None:
            self.open_prompt(target)

    def action_clear_search(self: Any) -> None:
        self.close_search(highlight="")

    def search_active(self: Any) -> bool:
        """A submitted search whose matches ``n`` / ``N`` step through (the query line closed)."""
        tree = self.query_one(PromptTree)
        return bool(terms(tree.query_text)) and not self.query_one(PromptSearch).input.display

    def update_search_hint(self: Any) -> None:
        """After the report or the selection changed: the results (while typing) or the hint."""
        search = self.query_one(PromptSearch)
        if not search.display:
            return
        if search.input.display:
            self.show_results(search.input.value)
            return
        tree = self.query_one(PromptTree)
        ids = tree.match_ids()
        position = ids.index(self.prompt_id) + 1 if self.prompt_id in ids else None
        search.show_hint(tree.query_text, len(ids), len(tree.prompt_ids()), False, position)
