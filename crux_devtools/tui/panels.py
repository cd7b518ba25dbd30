"""The TUI's side of the panel registry (``inspector/features/shown/panels.py``): each panel's widget, the tab table
the app composes, and the panels beyond the tab bar.

The tab bar has room for seven tabs, at 100 columns as at 160, and the number keys 1-7 select them.
It holds the first six TUI panels of the registry and the last one (Errors: a failed load is always in
sight). Any other TUI panel is composed like a tab, with its tab hidden: ``m`` lists them with their
descriptions, and the one picked is shown in the tabs' place (the bar then highlights no tab; 1-7 go
back). So a new panel never pushes a tab off the bar.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ..inspector.features.shown import panels as registry
from . import widgets as widget_package
from .widgets.panel_tabs import BAR_TABS as BAR_TABS
from .widgets.panel_tabs import PanelTabs, WidgetRef, split_bar

# The line of a widget class that names the panel it renders (``PANEL = "KEY"``), as written in its source.
PANEL_LINE = re.compile(r"""^[ \t]+PANEL = ["']([^"']+)["']""", re.MULTILINE)


def find_panel_widgets() -> dict[str, type[Widget]]:
    """The widget that renders each TUI panel, by the panel's key: every widget class in
    ``tui/widgets/`` that names a registry panel in its ``PANEL`` attribute (each module imported:
    ``panel_modules`` finds the same from the sources, and the TUI starts from that). Two widgets
    claiming one panel is an error."""
    found: dict[str, type[Widget]] = {}
    for module_info in sorted(pkgutil.iter_modules(widget_package.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{widget_package.__name__}.{module_info.name}")
        for value in vars(module).values():
            key = getattr(value, "PANEL", None) if isinstance(value, type) and value.__module__ == module.__name__ else None
            if isinstance(key, str) and issubclass(value, Widget):
                if key in found:
                    raise TypeError(f"two TUI widgets render the panel {key!r}: {found[key].__qualname__} and {value.__qualname__}")
                found[key] = value
    return found


def panel_modules() -> dict[str, str]:
    """The module of each TUI panel's widget, by the panel's key: the module of ``tui/widgets/`` whose
    source has a class line ``PANEL = "KEY"``. Read from the sources, not imported: importing every
    widget module (and what each imports: the cache advice, the planner's rows...) cost the first
    frame a tenth of a second, so a widget's module is imported when its tab is first shown. A new
    panel's widget is found by being there; two modules claiming one panel is an error."""
    found: dict[str, str] = {}
    for folder in widget_package.__path__:
        for source in sorted(Path(folder).glob("*.py")):
            module = f"{widget_package.__name__}.{source.stem}"
            for key in PANEL_LINE.findall(source.read_text(encoding="utf-8")):
                if key in found:
                    raise TypeError(f"two TUI widget modules render the panel {key!r}: {found[key]} and {module}")
                found[key] = module
    return found


# The widget that renders each TUI panel, by the panel's key: the name of its module (found once, at
# import, from the sources), or a widget class.
PANEL_WIDGETS: dict[str, WidgetRef] = dict(panel_modules())

# (tab id, title, widget class or module, widget id = the panel's key) of one tab.
TabRow = tuple[str, str, WidgetRef, str]


def tab_table(panels: tuple[registry.Panel, ...] | None = None, widgets: dict[str, WidgetRef] | None = None) -> tuple[TabRow, ...]:
    """The TUI panels as tabs, the bar's first (in their order), then those in More."""
    bar, more = split_bar(registry.panels_for("tui", panels))
    found = PANEL_WIDGETS if widgets is None else widgets
    return tuple((f"tab-{p.key}", p.title, found[p.key], p.key) for p in (*bar, *more))


class MorePanels(ModalScreen[str | None]):
    """The panels beyond the tab bar: dismissed with the tab id of the one picked (``None``: none)."""

    BINDINGS = [Binding("escape,m", "dismiss(None)", "Close")]
    DEFAULT_CSS = """
    MorePanels { align: center middle; }
    #more-box { width: 80%; max-width: 90; height: auto; max-height: 80%; border: round $accent; background: $surface; padding: 0 1; }
    #more-list { height: auto; max-height: 20; border: none; }
    """

    def __init__(self, choices: list[tuple[str, str, str]], active: str | None) -> None:
        super().__init__()
        self.choices = choices
        self.active = active

    def compose(self) -> ComposeResult:
        with Vertical(id="more-box"):
            yield Static(Text("More panels (Enter shows one; 1-7 go back to the tabs)", style="bold"), id="more-title")
            options = [
                Option(Text.assemble((title, "bold"), ("  ← shown" if tab_id == self.active else "", "green"), "\n", (description, "dim")), id=tab_id)
                for tab_id, title, description in self.choices
            ]
            yield OptionList(*options, id="more-list")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)


# ``m``: the panels beyond the bar, bound on the app with ``PanelActions``; the footer (full at 160
# columns) names it only when the registry has panels beyond the bar.
PANEL_BINDINGS = [
    Binding("m", "more_panels", "More", show=bool(split_bar(registry.panels_for("tui"))[1]), tooltip="The panels that are not on the tab bar")
]


class PanelActions:
    """The app's ``m`` action (a mixin of the app, like its other action groups)."""

    def action_more_panels(self: Any) -> None:
        tabs = self.query_one(PanelTabs)
        choices = tabs.more()
        if not choices:
            self.notify("Every panel is on the tab bar (keys 1-7).", timeout=3)
            return

        def show(tab_id: str | None) -> None:
            if tab_id:
                tabs.active = tab_id

        self.push_screen(MorePanels(choices, tabs.active), show)
