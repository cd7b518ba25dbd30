"""The "Cache" tab: the request as a line of blocks in order, coloured by class (static, per-input,
per-request), the breakpoints above it, each block with its tokens and where it is defined, the
cacheable prefix and the suggested ``use`` order. The advice is ``inspector/features/shown/cache_view``'s (the
web panel's and ``crux-devtools cache``'s): each example is planned once more in the worker, so it
is fetched in a worker of the widget while the tab is on screen, never on the UI thread.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual import work

from ...inspector.features.shown.cache_view import bar, target_advice
from ...review.render import plural
from .pane import ReportPane

CLASS_STYLE = {"static": "green", "per-input": "yellow", "per-request": "red"}
WIDTH = 60  # cells of the bar


def render_bar(target: Mapping[str, Any], width: int = WIDTH) -> Text:
    """The blocks as cells (each at least one), coloured by class, in request order."""
    laid = bar(target)
    line = Text()
    for segment in laid.segments:
        cells = max(1, round(segment.width * width / 100))
        line.append("█" * cells, style=CLASS_STYLE.get(segment.cls, "white"))
    return line


def render_marks(target: Mapping[str, Any], width: int = WIDTH) -> Text:
    """A ``▼`` above the bar at each breakpoint."""
    laid = bar(target)
    cells = [" "] * (width + 1)
    for x, _label in laid.breakpoints:
        cells[min(width, round(x * width / 100))] = "▼"
    return Text("".join(cells).rstrip(), style="bold")


def render_cache(target: Mapping[str, Any] | None, note: str | None = None) -> RenderableType:
    if target is None:
        return Text(note or "Planning each example a second time…", style="dim")
    if not target.get("blocks"):
        return Text("Nothing to send: no example was planned.", style="dim")
    items: list[RenderableType] = [render_marks(target), render_bar(target)]
    legend = Text()
    for cls, style in CLASS_STYLE.items():
        legend.append("█ ", style=style).append(f"{cls}  ", style="dim")
    items.append(legend.append("▼ breakpoint", style="dim"))
    items.append(Text.assemble("cacheable prefix ", (f"{target['prefix_tokens']:,}", "bold"), f" tokens over {plural(target['requests'], 'request')}, each planned twice"))
    if target.get("suggestion"):
        items.append(Text.assemble(("suggestion: ", "bold"), str(target["suggestion"]["text"])))
    table = Table(expand=True, box=None, header_style="bold", pad_edge=False)
    for name, justify in (("Block", "left"), ("Class", "left"), ("Tokens", "right"), ("Defined", "left"), ("Differs", "right")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for b in target["blocks"]:
        kind = Text(b["class"], style=CLASS_STYLE.get(b["class"], ""))
        if b["fields"]:
            kind.append(f" ({', '.join(b['fields'])})", style="dim")
        where = f"{b['file']}:{b['line']}" if b.get("file") else "—"
        table.add_row(Text(b["id"]), kind, f"{b['tokens']:,}", Text(where), f"{b['differs_in']}/{target['requests']}")
    items.append(table)
    return Group(*items)


class CacheView(ReportPane):
    """``data`` is ``(PromptReport, ExampleReport)``; the advice is fetched for its prompt."""

    PANEL = "cache"  # the registry's panel this widget renders (inspector/features/shown/panels.py)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.advice: dict[str, Any] | None = None
        self.note: str | None = None
        self._asked: Any = None
        self._fetching: Any = None  # the prompt whose advice is being made
        self._visible = False

    def render_data(self) -> RenderableType:
        return render_cache(self.advice, self.note)

    def watch_data(self) -> None:
        prompt, _example = self.data or (None, None)
        if prompt is not None and prompt is not self._asked:
            self._asked = prompt
            self.advice, self.note = None, None
            self.want_advice()
        self.refresh_body()

    def on_mount(self) -> None:
        # Textual sends no Show to a widget whose first frame on screen came from a scroll-only
        # refresh: once the screen has been drawn with the tab, look whether it is on it.
        self.call_after_refresh(self._look)

    def _look(self) -> None:
        if self.is_on_screen:
            self.on_show()

    def on_show(self) -> None:
        self._visible = True
        self.want_advice()

    def on_hide(self) -> None:
        self._visible = False

    def want_advice(self) -> None:
        """Fetch the advice of the prompt shown, once, when the tab is on screen (planning every
        example again is worth it only then)."""
        prompt, _example = self.data or (None, None)
        if prompt is None or not self._visible or self.advice is not None or self.note is not None or self._fetching is prompt:
            return
        self._fetching = prompt
        self.fetch(prompt)

    @work(exclusive=True, group="cache", exit_on_error=False)
    async def fetch(self, prompt: Mapping[str, Any]) -> None:
        try:
            self.advice, _economics = await target_advice(self.app.session, prompt)  # type: ignore[attr-defined]
        except Exception as exc:  # a worker that failed: say so in the tab, the app runs on
            self.note = f"The cache advice could not be made: {type(exc).__name__}: {exc}"
        finally:
            if self._fetching is prompt:
                self._fetching = None
        self.refresh_body()
