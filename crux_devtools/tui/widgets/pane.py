"""A scrollable pane that renders one data attribute with a pure ``render_*`` function."""

from __future__ import annotations

from typing import Any

from rich.console import RenderableType
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.widgets import Static


class ReportPane(VerticalScroll):
    """Set ``data`` (attributes down); the pane re-renders its body from it."""

    data: reactive[Any] = reactive(None, always_update=True)

    def compose(self) -> ComposeResult:
        yield Static(self.render_data(), classes="pane-body")

    def render_data(self) -> RenderableType:
        raise NotImplementedError

    def refresh_body(self, *, layout: bool = True) -> None:
        """Render the body again; ``layout=False`` when its lines are the same but for their styles
        (a highlight moved): the screen is then repainted without laying out every widget again."""
        for body in self.query(".pane-body").results(Static):
            body.update(self.render_data(), layout=layout)

    def watch_data(self) -> None:
        self.refresh_body()
