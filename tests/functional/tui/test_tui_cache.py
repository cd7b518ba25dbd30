"""The TUI's Cache tab under a pilot, over a real ProjectSession (real worker processes): the request
as a line of blocks coloured by class, the breakpoints, the blocks and the suggestion, the same
advice as ``crux-devtools cache``; and its renderables without an app."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from textual import events

sys.path.insert(0, str(Path(__file__).parents[2]))

from waits import pilot_until  # noqa: E402

from crux_devtools.inspector.session.service import ProjectSession  # noqa: E402
from crux_devtools.tui.app import make_tui  # noqa: E402
from crux_devtools.tui.widgets import PromptTree  # noqa: E402
from crux_devtools.tui.widgets.cache import CacheView, render_bar, render_cache, render_marks  # noqa: E402
from crux_devtools.inspector.transport.inprocess import in_process  # noqa: E402

pytestmark = pytest.mark.slow  # a whole Textual app over real worker processes
PROJECTS = Path(__file__).parents[2] / "projects"
TARGET = {
    "id": "t", "kind": "prompt", "requests": 2, "prefix_tokens": 10, "suggestion": {"text": "move clock after catalog", "moves": []},
    "breakpoints": [{"after": "system", "offset": 5, "tokens": 90, "ttl": "5m"}],
    "blocks": [
        {"id": "prompt", "part": "system", "class": "static", "fields": [], "tokens": 10, "file": "a.py", "line": 1, "differs_in": 0},
        {"id": "clock", "part": "system", "class": "per-request", "fields": [], "tokens": 10, "file": "a.py", "line": 2, "differs_in": 1},
        {"id": "catalog", "part": "system", "class": "static", "fields": [], "tokens": 80, "file": "a.py", "line": 3, "differs_in": 0},
    ],
}


def screen_text(app: Any) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def text_of(renderable: Any) -> str:
    console = Console(width=100, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def test_the_bar_gives_each_block_cells_in_proportion_and_its_class_colour():
    line = render_bar(TARGET, width=50)
    assert line.plain == "█" * 50
    assert [(span.end - span.start, str(span.style)) for span in line.spans] == [(5, "green"), (5, "red"), (40, "green")]
    assert render_marks(TARGET, width=50).plain.index("▼") == 45  # after 90 of 100 tokens
    shown = text_of(render_cache(TARGET))
    assert "cacheable prefix 10 tokens over 2 requests" in shown and "suggestion: move clock after catalog" in shown
    assert "per-request" in shown and "a.py:2" in shown


async def shows_the_advice(tmp_path: Path) -> None:
    """Select ``timestamp``, show the Cache tab, and wait until it shows the advice of that prompt."""
    root = tmp_path / "breakers"
    shutil.copytree(PROJECTS / "cache_breakers", root)
    session = ProjectSession(root, transport=in_process, history=False)
    app = make_tui(session)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot_until(pilot, lambda: session.report is not None and app.screen.query("PromptTree"), "the first report is shown")
        app.query_one(PromptTree).select_prompt("timestamp")
        await pilot_until(pilot, lambda: app.prompt_id == "timestamp" and app.busy is None, "timestamp is shown")
        app.detail.show_tab("tab-cache")
        await pilot_until(pilot, lambda: app.screen.query(CacheView), "the Cache tab is composed")
        def view() -> CacheView:
            return app.screen.query_one(CacheView)  # the tab's widget as it is now (a recompose replaces it)

        await pilot_until(pilot, lambda: view().note is not None or (view().advice or {}).get("id") == "timestamp",
                          "the advice is made (or the tab says why not)")
        assert view().note is None, view().note
        await pilot_until(pilot, lambda: "suggestion: move clock" in screen_text(app), "the tab shows it")
        screen = screen_text(app)
        assert "breakers.py:36" in screen and "per-request" in screen and "4,904" in screen
        classes = {b["id"]: b["class"] for b in view().advice["blocks"]}
        assert classes == {"tools": "static", "prompt": "static", "clock": "per-request", "catalog": "static"}
        app.save_screenshot(str(tmp_path / "cache-tab.svg"))


async def test_the_cache_tab_shows_the_advice_of_the_prompt_over_the_real_session(tmp_path: Path) -> None:
    await shows_the_advice(tmp_path)


async def test_the_cache_tab_fetches_its_advice_even_when_textual_sends_it_no_show_event(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A widget whose first frame on screen comes from a scroll-only refresh gets no ``Show`` from
    Textual (seen on a loaded machine: the tab said "Planning each example a second time…" for ever).
    Here no ``Show`` reaches the tab at all, and the advice still comes."""
    post = CacheView.post_message
    dropped: list[CacheView] = []

    def without_show(self: CacheView, message: Any) -> bool:
        if isinstance(message, events.Show):
            dropped.append(self)
            return False
        return post(self, message)

    monkeypatch.setattr(CacheView, "post_message", without_show)
    await shows_the_advice(tmp_path)
    assert dropped  # the tab was meant to hear it was shown, and did not
