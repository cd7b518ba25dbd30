"""The prompt view's tab bar: seven tabs at most (the number keys 1-7); the panes of the panels beyond
it are composed with their tabs hidden (``tui/panels.py`` lists them on ``m``)."""

from __future__ import annotations

from textual.widgets import TabbedContent, TabPane

from ...inspector.features.shown import panels as registry

BAR_TABS = 7  # tabs on the bar: the number keys 1-7


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
