"""The prompt view's tab bar: seven tabs at most (the number keys 1-7); the panes of the panels beyond
it are composed with their tabs hidden (``tui/panels.py`` lists them on ``m``)."""

from __future__ import annotations

import importlib
import sys
from typing import Any

from textual.widgets import TabbedContent, TabPane

from ...inspector.features.shown import panels as registry

BAR_TABS = 7  # tabs on the bar: the number keys 1-7

# A panel's widget in the tab table: its class, or the name of the module that defines it while that
# module is not imported (``tui/panels.py`` reads which module from the sources). The module is
# imported when the tab is first shown, not before the first frame.
WidgetRef = type[Any] | str


def widget_class(ref: WidgetRef, key: str, *, load: bool = True) -> type[Any] | None:
    """The widget class of the panel ``key``: ``ref`` itself, or the class in the module ``ref`` whose
    ``PANEL`` is ``key`` (imported now; with ``load=False``, ``None`` while the module is not imported)."""
    if not isinstance(ref, str):
        return ref
    module = importlib.import_module(ref) if load else sys.modules.get(ref)
    if module is None:
        return None
    for value in vars(module).values():
        if isinstance(value, type) and value.__module__ == ref and getattr(value, "PANEL", None) == key:
            return value
    raise LookupError(f"{ref} has no class with PANEL = {key!r}: name the panel in the class attribute PANEL of its widget")


def split_bar(panels: tuple[registry.Panel, ...]) -> tuple[tuple[registry.Panel, ...], tuple[registry.Panel, ...]]:
    """``(on the bar, in More)``: all of them when they fit; else the first six and the last on the bar."""
    if len(panels) <= BAR_TABS:
        return panels, ()
    return (*panels[: BAR_TABS - 1], panels[-1]), panels[BAR_TABS - 1 : -1]


class PanelTabs(TabbedContent):
    """The prompt view's tabs: the panes after the bar's seven have their tabs hidden (see ``m``)."""

    def on_mount(self) -> None:
        for pane in list(self.query(TabPane))[BAR_TABS:]:
            self.hide_tab(str(pane.id))

    def more(self) -> list[tuple[str, str, str]]:
        """``(tab id, title, description)`` of each pane whose tab is not on the bar."""
        described = {f"tab-{p.key}": (p.title, p.description) for p in registry.PANELS}
        return [(str(pane.id), *described.get(str(pane.id), (str(pane.id), ""))) for pane in list(self.query(TabPane))[BAR_TABS:]]
