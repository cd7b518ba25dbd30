"""The panel registry (inspector/features/shown/panels.py): both front ends iterate it, every panel has a renderer
in each front end that shows it, and an eighth TUI panel neither pushes a tab off the bar nor hides
Errors (it is reached with ``m``).
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from rich.text import Text
from textual.widgets import Static, TabbedContent, Tabs

sys.path.insert(0, str(Path(__file__).parent))
from test_tui import screen_text, settle  # noqa: E402
from tui_fakes import FakeSession as TuiSession  # noqa: E402
from web_fakes import FakeSession as WebSession  # noqa: E402
from web_fakes import app_client, load_error  # noqa: E402

from crux_devtools.inspector.features.shown import panels as registry  # noqa: E402
from crux_devtools.tui import app as tui_app  # noqa: E402
from crux_devtools.tui import make_tui  # noqa: E402
from crux_devtools.tui import panels as tui_panels  # noqa: E402
from crux_devtools.tui.widgets import PromptTree  # noqa: E402
from crux_devtools.tui.widgets.pane import ReportPane  # noqa: E402
from crux_devtools.tui.widgets.panel_tabs import widget_class  # noqa: E402
from crux_devtools.web.app import make_templates, panel_template  # noqa: E402
from crux_devtools.web.paths import asset_dir  # noqa: E402


def test_every_panel_has_a_renderer_in_each_front_end_that_shows_it() -> None:
    env = make_templates().env
    keys = [p.key for p in registry.PANELS]
    assert len(set(keys)) == len(keys)
    for panel in registry.panels_for("web"):
        env.get_template(panel_template(panel))  # raises TemplateNotFound when the partial is missing
    assert set(tui_panels.PANEL_WIDGETS) == {p.key for p in registry.panels_for("tui")}
    # no partial is left over from a panel that is gone
    partials = {p.name for p in asset_dir("templates").glob("_panel_*.html")}
    assert partials == {panel_template(p) for p in registry.panels_for("web")}
    # the TUI's tabs are the registry's TUI panels: the bar's in their order (Errors last), then the rest
    bar, more = tui_panels.split_bar(registry.panels_for("tui"))
    assert [row[0] for row in tui_app.TABS] == [f"tab-{p.key}" for p in (*bar, *more)]
    assert len(bar) <= tui_panels.BAR_TABS and bar[-1].key == "errors"


def test_a_tui_panel_without_a_widget_fails_when_the_tabs_are_built() -> None:
    extra = registry.Panel("extra", "Extra", "a panel with no widget", None, True)
    with pytest.raises(KeyError):
        tui_panels.tab_table((*registry.PANELS, extra))


@pytest.fixture
def web_session(tmp_path: Path) -> WebSession:
    return WebSession(tmp_path)


@pytest.fixture
async def client(web_session: WebSession) -> AsyncIterator[httpx.AsyncClient]:
    async with app_client(web_session) as c:
        yield c


async def test_the_web_page_renders_its_panels_in_the_registry_order(client: httpx.AsyncClient, web_session: WebSession) -> None:
    await web_session.fail(load_error("prompts.py", 3, "bad"))
    order = [p.key for place in ("top", "view", "main", "side") for p in registry.web_panels(place)]
    for view, hidden in (("sent", "system"), ("resolved", "request")):  # the view tabs show one "view" panel
        page = (await client.get(f"/prompts/support-reply?view={view}")).text
        shown = re.findall(r'<div class="panel-slot" data-panel="([^"]+)">', page)
        assert shown == [key for key in order if key != hidden]
    errors = page.split('data-panel="errors">', 1)[1]
    assert 'aria-label="load errors"' in errors.split('data-panel=', 1)[0]


class NotesPanel(Static):
    """A panel added in the test only: it shows a fixed line."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(Text("notes panel body"), **kwargs)


@pytest.fixture
def eight_panels(monkeypatch: pytest.MonkeyPatch) -> tuple[registry.Panel, ...]:
    """The registry with one more TUI panel (an eighth today), placed just before Errors, and its widget."""
    notes = registry.Panel("test-notes", "Test notes", "the author's notes on this prompt", None, True)
    panels = (*registry.PANELS[:-1], notes, registry.PANELS[-1])
    monkeypatch.setattr(registry, "PANELS", panels)
    monkeypatch.setitem(tui_panels.PANEL_WIDGETS, "test-notes", NotesPanel)
    monkeypatch.setattr(tui_app, "TABS", tui_panels.tab_table())
    return panels


def bar_labels(app: Any) -> list[str]:
    tabs = app.query_one(TabbedContent).query_one(Tabs)
    return [str(tab.label) for tab in tabs.query("Tab") if tab.display]


@pytest.mark.parametrize("width", [100, 160])
async def test_an_eighth_panel_keeps_seven_tabs_on_the_bar_with_errors_in_sight_and_is_reached_with_m(
    eight_panels: tuple[registry.Panel, ...], width: int
) -> None:
    assert len(registry.panels_for("tui")) > tui_panels.BAR_TABS
    session = TuiSession()
    session._report = session.build_report(errors=[load_error("prompts.py", 3, "bad")])
    app = make_tui(session)
    async with app.run_test(size=(width, 40)) as pilot:
        app.query_one(PromptTree).select_prompt("support-reply")
        await settle(pilot)
        labels = bar_labels(app)
        assert len(labels) == tui_panels.BAR_TABS
        assert "Test notes" not in " ".join(labels) and re.search(r"Errors \(\d+\)", labels[-1])
        top = "\n".join(screen_text(app).splitlines()[:6])
        assert re.search(r"Errors \(\d+\)", top), top  # on screen, not scrolled off the bar
        await pilot.press("7")
        await settle(pilot)
        assert app.query_one(TabbedContent).active == "tab-errors"
        await pilot.press("m")
        await settle(pilot)
        assert isinstance(app.screen, tui_panels.MorePanels)
        shown = screen_text(app)
        assert "Test notes" in shown and "the author's notes on this prompt" in shown
        for _ in range([tab_id for tab_id, _t, _d in app.screen.choices].index("tab-test-notes")):
            await pilot.press("down")
        await pilot.press("enter")
        await settle(pilot)
        assert app.query_one(TabbedContent).active == "tab-test-notes"
        assert "notes panel body" in screen_text(app)
        assert bar_labels(app) == labels  # the bar did not change
        await pilot.press("1")
        await settle(pilot)
        assert app.query_one(TabbedContent).active == "tab-request"


async def test_m_lists_exactly_the_panels_beyond_the_bar() -> None:
    bar, more = tui_panels.split_bar(registry.panels_for("tui"))
    app = make_tui(TuiSession())
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        assert len(bar_labels(app)) == len(bar)
        await pilot.press("m")
        await settle(pilot)
        if not more:
            assert not isinstance(app.screen, tui_panels.MorePanels)
            assert any("Every panel is on the tab bar" in n.message for n in app._notifications)
        else:
            assert isinstance(app.screen, tui_panels.MorePanels)
            assert [t for t, _title, _d in app.screen.choices] == [f"tab-{p.key}" for p in more]


def test_a_panels_tui_widget_is_found_by_the_key_it_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A widget module dropped into ``tui/widgets/`` with ``PANEL = key`` is the panel's widget: no
    table to edit; two widgets claiming one key is refused with both names. The TUI reads which module
    from the sources (``panel_modules``): what it reads is what importing every module finds."""
    from crux_devtools.tui import widgets as widget_package

    found = tui_panels.find_panel_widgets()
    assert all(cls.PANEL == key for key, cls in found.items())  # type: ignore[attr-defined]
    assert {key: widget_class(ref, key) for key, ref in tui_panels.PANEL_WIDGETS.items()} == found
    assert tui_panels.panel_modules() == {key: cls.__module__ for key, cls in found.items()}
    extra = tmp_path / "widgets"
    extra.mkdir()
    (extra / "notes_panel.py").write_text(
        "from textual.widgets import Static\n\nclass NotesView(Static):\n    PANEL = 'notes'\n", encoding="utf-8"
    )
    monkeypatch.setattr(widget_package, "__path__", [*widget_package.__path__, str(extra)])
    assert tui_panels.find_panel_widgets()["notes"].__name__ == "NotesView"
    assert tui_panels.panel_modules()["notes"] == "crux_devtools.tui.widgets.notes_panel"
    (extra / "other_notes.py").write_text(
        "from textual.widgets import Static\n\nclass OtherNotes(Static):\n    PANEL = 'notes'\n", encoding="utf-8"
    )
    with pytest.raises(TypeError, match="NotesView and OtherNotes"):
        tui_panels.find_panel_widgets()
    with pytest.raises(TypeError, match="notes_panel and crux_devtools.tui.widgets.other_notes"):
        tui_panels.panel_modules()


def test_the_tui_imports_no_panel_widget_the_first_frame_does_not_show() -> None:
    """Importing the app imports the widgets of the tabs the first frame composes (Request, and those
    handed data by class: System text, Contributors, Runs, Errors), not those of the other panels
    (nor what they import: the cache advice): each is imported when its tab is first shown."""
    lazy = sorted(m for key, m in tui_panels.panel_modules().items() if key in {"tools", "planning", "expectations", "cache"})
    assert len(lazy) == 4
    code = "import sys, crux_devtools.tui.app; print('\\n'.join(sorted(sys.modules)))"
    loaded = set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split())
    assert "crux_devtools.tui.widgets.request" in loaded
    assert [m for m in lazy if m in loaded] == []
    assert "crux_devtools.review.cache_advice" not in loaded


async def test_a_panels_widget_module_is_imported_when_its_tab_is_first_shown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tab whose widget's module is not imported yet is composed empty: the module is imported, and
    the widget made and handed the prompt and example on screen, when the tab is first shown."""
    from crux_devtools.tui import widgets as widget_package

    extra = tmp_path / "widgets"
    extra.mkdir()
    (extra / "about_panel.py").write_text(
        "from rich.text import Text\n"
        "from crux_devtools.tui.widgets.pane import ReportPane\n\n"
        "class AboutView(ReportPane):\n"
        "    PANEL = 'test-lazy'\n\n"
        "    def render_data(self):\n"
        "        prompt, example = self.data or (None, None)\n"
        "        return Text(f'lazy about {prompt[\"id\"]}: example {example[\"name\"]}' if prompt and example else 'no data handed over')\n",
        encoding="utf-8",
    )
    module = "crux_devtools.tui.widgets.about_panel"
    monkeypatch.setattr(widget_package, "__path__", [*widget_package.__path__, str(extra)])
    monkeypatch.delitem(sys.modules, module, raising=False)
    lazy = registry.Panel("test-lazy", "Test lazy", "a panel whose widget is imported late", None, True)
    monkeypatch.setattr(registry, "PANELS", (*registry.PANELS[:-1], lazy, registry.PANELS[-1]))
    monkeypatch.setitem(tui_panels.PANEL_WIDGETS, "test-lazy", tui_panels.panel_modules()["test-lazy"])
    monkeypatch.setattr(tui_app, "TABS", tui_panels.tab_table())
    app = make_tui(TuiSession())
    async with app.run_test(size=(160, 40)) as pilot:
        app.query_one(PromptTree).select_prompt("support-reply")
        await settle(pilot)
        assert module not in sys.modules
        app.query_one(TabbedContent).active = "tab-test-lazy"
        await settle(pilot)
        assert module in sys.modules
        shown = screen_text(app)
        assert "lazy about support-reply: example " in shown and "no data handed over" not in shown, shown
    sys.modules.pop(module, None)  # the test's module: gone with its folder


class ExampleNamePane(ReportPane):
    """A report pane added in the test only: it shows the name of the example on screen."""

    def render_data(self) -> Text:
        prompt, example = self.data or (None, None)
        return Text(f"about {prompt['id']}: example {example['name']}" if prompt and example else "no data handed over")


async def test_a_new_panels_report_pane_is_handed_the_prompt_and_the_example_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    """A panel is its registry line, its partial and its widget: the widget needs no line in the
    prompt view to receive its data."""
    about = registry.Panel("test-about", "Test about", "the example on screen", None, True)
    monkeypatch.setattr(registry, "PANELS", (*registry.PANELS[:-1], about, registry.PANELS[-1]))
    monkeypatch.setitem(tui_panels.PANEL_WIDGETS, "test-about", ExampleNamePane)
    monkeypatch.setattr(tui_app, "TABS", tui_panels.tab_table())
    app = make_tui(TuiSession())
    async with app.run_test(size=(160, 40)) as pilot:
        app.query_one(PromptTree).select_prompt("support-reply")
        await settle(pilot)
        app.query_one(TabbedContent).active = "tab-test-about"
        await settle(pilot)
        shown = screen_text(app)
        assert "about support-reply: example " in shown and "no data handed over" not in shown, shown
