"""The TUI's Expectations tab: each expectation of the example, held or not, under a real Textual pilot."""

from __future__ import annotations

from textual.widgets import TabbedContent

from test_tui import screen_text, settle
from tui_fakes import FakeSession

from crux_devtools import context, example, expect, prompt
from crux_devtools.tui import make_tui
from crux_devtools.tui.widgets import PromptTree
from crux_devtools.tui.widgets.expectations import render_expectations

STYLE = context("style-examples", system="Example one. " * 20, priority=45)
BRAND = context("brand-voice", system="Calm and exact. " * 20, priority=30)
CLAIMS = prompt(
    "claims", system="You help.", use=[STYLE, BRAND], token_budget=150, prompt="hi",
    examples={"tight": example({}, expect=expect().includes("style-examples").includes("brand-voice").tool("lookup"))},
)


def test_the_tab_renders_each_state_with_where_it_is_written_and_why() -> None:
    from rich.console import Console

    report = FakeSession(prompts=[CLAIMS]).report["prompts"][0]
    console = Console(width=220, record=True)
    console.print(render_expectations(report, report["examples"][0]))
    text = console.export_text()
    assert "1 of 3 expectations hold" in text
    assert "✓ holds" in text and "✗ does not hold" in text and "✗ invalid" in text
    assert "`brand-voice` left: budget 150, priority 30 < `style-examples` 45" in text
    assert "the prompt has no tool 'lookup'" in text and "test_tui_expectations.py:" in text


async def test_the_expectations_tab_is_reached_with_m_and_shows_the_examples_claims() -> None:
    app = make_tui(FakeSession(prompts=[CLAIMS]))
    async with app.run_test(size=(140, 40)) as pilot:
        app.query_one(PromptTree).select_prompt("claims")
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)
        for _ in range([tab_id for tab_id, _t, _d in app.screen.choices].index("tab-expectations")):
            await pilot.press("down")
        await pilot.press("enter")
        await settle(pilot)
        assert app.query_one(TabbedContent).active == "tab-expectations"
        shown = screen_text(app)
        assert "1 of 3 expectations hold" in shown
        assert "expect().includes('brand-voice')" in shown and "does not hold" in shown
