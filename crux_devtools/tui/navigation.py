"""Getting to a prompt and a tab without scrolling: ``/`` search, the command palette, number keys.

A mixin of ``CruxTui`` (its keys are in ``CruxTui.BINDINGS``; the search itself, with its ``n`` /
``N`` keys, is ``PromptBrowser``'s):

- ``/`` opens the search bar under the tree (``PromptBrowser.open_search``), from anywhere.
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

from ..inspector.report_types import PromptReport, Report
from . import report as rp
from .messages import PromptOpened
from .widgets.prompt_browser import PromptBrowser
from .widgets.prompt_detail import PromptDetail
from .widgets.prompt_search import SearchInput


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


def palette_text(prompt: PromptReport) -> str:
    where = ", ".join(field for field in (prompt["module"], prompt["file"]) if field)
    return f"Open {prompt['kind']} {prompt['id']}" + (f" ({where})" if where else "")


class PromptCommands(Provider):
    """The command palette's prompts: one command per prompt and agent of the report on screen."""

    def _entries(self) -> list[tuple[str, str]]:
        report: Report | None = getattr(self.app, "session").report  # CruxTui; typed loosely to avoid an import cycle
        return [(palette_text(p), p["id"]) for p in (report["prompts"] if report is not None else [])]

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
    """``/``, the number keys, and ``open_prompt`` (the palette's and the search's command)."""

    browser: PromptBrowser
    detail: PromptDetail

    def action_show_tab(self: Any, number: int) -> None:
        ids = self.detail.tab_ids()
        if 1 <= number <= len(ids):
            self.detail.show_tab(ids[number - 1])

    def open_prompt(self: Any, prompt_id: str) -> None:
        """Select ``prompt_id`` in the tree and show it (from the search, ``n``/``N`` or the palette)."""
        if rp.find_prompt(self.session.report, prompt_id) is None:
            self.notify(f"{prompt_id} is not in the project as loaded now.", severity="warning")
            return
        self.browser.reveal(prompt_id)
        self.detail.select(prompt_id)

    def on_prompt_opened(self: Any, message: PromptOpened) -> None:
        self.detail.select(message.prompt_id)

    def action_search(self: Any) -> None:
        self.browser.open_search()

    def on_key(self: Any, event: events.Key) -> None:
        """A character typed right after ``/`` can reach the app after the focus moved to the query
        line (it was already queued at the tree): it belongs to the query, in order."""
        search = self.focused
        if isinstance(search, SearchInput) and event.is_printable and event.character:
            event.stop()
            search.insert_text_at_cursor(event.character)
