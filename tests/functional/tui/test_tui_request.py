"""The TUI shows what is sent: the Request tab, tool schemas and costs, the plan's capacity profile
and limits, a status line that agrees with the plan, and the key that prepares summaries.

Pilot tests over the fake session, whose reports carry real inspections and real plans.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

sys.path.insert(0, str(Path(__file__).parents[2]))

from test_tui import Recorder, detail_lines, notifications, screen_text, settle  # noqa: E402
from tui_fakes import FakeSession, build_prompts, ladder_prompt  # noqa: E402

from crux_devtools.inspector.features.shown.limits import LIMITS  # noqa: E402
from crux_devtools.tui import make_tui  # noqa: E402
from crux_devtools.tui.request_actions import SummariesPrepared  # noqa: E402
from crux_devtools.tui.widgets import PromptTree  # noqa: E402
from crux_devtools.tui.widgets.planning import render_planning  # noqa: E402
from crux_devtools.tui.widgets.request import RequestView, render_request  # noqa: E402

SIZE = (140, 60)


@pytest.fixture
def session() -> FakeSession:
    return FakeSession(prompts=[*build_prompts(), ladder_prompt()])


def plain(renderable: Any, width: int = 120) -> str:
    console = Console(width=width, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


async def show(pilot: Any, prompt_id: str, example: str | None = None) -> None:
    app = pilot.app
    app.query_one(PromptTree).select_prompt(prompt_id)
    await settle(pilot)
    while example is not None and app.detail.example_names().get(prompt_id) != example:
        await pilot.press("e")
        await settle(pilot)


def request_lines(app: Any) -> list[str]:
    """Every line of the Request tab's body (not just what fits on the screen)."""
    return [line.rstrip() for line in plain(app.query_one(RequestView).render_data(), width=400).splitlines()]


async def test_the_request_tab_is_first_and_shows_the_authored_alternative_and_offload_preview_as_sent(session: FakeSession) -> None:
    app = make_tui(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.query_one("#tabs").active == "tab-request"
        await show(pilot, "ladder-reply", "busy")
        example = app.shown
        preview = example["preview"]
        text = screen_text(app)
        assert f"input {preview['input_tokens']:,} of max {preview['max_input_tokens']:,} tokens · ✓ fits" in text
        assert "catalog · ladder · authored: catalog-index · 19 tok" in text
        assert "## Catalog (index)" in text and "## Catalog (complete)" not in text
        handle = next(c["handle"] for c in preview["contributions"] if c["contributor"] == "sync-log")
        assert f"sync-log · ladder · offload preview · 252 tok · handle {handle}" in text
        assert f'read_offload(handle="{handle}", offset, limit)' in " ".join(text.split())
        # the body holds every character of the sent system text, part by part, in order
        body = "\n".join(request_lines(app))
        for line in preview["sent"]["system"].splitlines():
            assert line.strip() in body
        assert "2026-11-29T00:30:00Z" not in body  # the middle of the log is offloaded, not sent


async def test_the_request_tab_lists_messages_and_every_tool_with_description_schema_and_tokens(session: FakeSession) -> None:
    app = make_tui(session)
    async with app.run_test(size=SIZE) as pilot:
        await show(pilot, "ladder-reply", "busy")
        preview = app.shown["preview"]
        lines = request_lines(app)
        text = "\n".join(lines)
        assert "Messages · 1 · 15 tok" in text and "  Why did my laptop stop syncing?" in text
        total = sum(preview["tool_tokens"].values())
        assert f"Tools · 2 · {total} tok" in text
        for tool in preview["sent"]["tools"]:
            assert f"{tool['name']} · {preview['tool_tokens'][tool['name']]} tok" in text
            assert tool["description"][:40] in text
            for schema_line in json.dumps(tool["parameters"], indent=2).splitlines():
                assert "  " + schema_line in lines  # the schema, literally, indented under its tool
        assert "max_tokens not set (output reserve 512 planned)" in text


async def test_an_omitted_rung_is_named_with_nothing_under_it_and_its_tool_leaves(session: FakeSession) -> None:
    app = make_tui(session)
    async with app.run_test(size=SIZE) as pilot:
        await show(pilot, "ladder-reply", "busy")
        for _ in range(14):  # lower the request's input budget until the planner omits parts
            await pilot.press("minus")
            await settle(pilot)
            if any(c["representation"] == "omitted" and c["contributor"] == "catalog" for c in app.shown["preview"]["contributions"]):
                break
        text = "\n".join(request_lines(app))
        assert "catalog · ladder · omitted: not sent" in text
        assert "(omitted by the planner: nothing is sent in place of catalog)" in text
        assert "lookup_sku" not in "\n".join(line for line in text.splitlines() if "tok" in line and "lookup_sku" in line)
        app.query_one("#tabs").active = "tab-tools"
        await settle(pilot)
        row = next(line for line in detail_lines(app) if line.strip().startswith("lookup_sku"))
        assert "no (catalog omitted by the planner)" in row


async def test_the_status_line_agrees_with_the_plan_and_names_the_agents_budget(session: FakeSession) -> None:
    report = session.build_report()
    triage = next(p for p in report["prompts"] if p["id"] == "triage-agent")
    triage["default_budget"] = 4000
    session._report = report
    app = make_tui(session)
    async with app.run_test(size=SIZE) as pilot:
        await show(pilot, "triage-agent")
        text = screen_text(app)
        assert "input budget 4,000 (agent)" in text
        assert "budget none" not in text
        await show(pilot, "support-reply")
        assert f"input {app.shown['preview']['input_tokens']} of 5,292 ✓ fits  token_budget none" in screen_text(app)


async def test_a_system_text_over_its_budget_says_over_and_never_fits(session: FakeSession) -> None:
    app = make_tui(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for _ in range(30):  # below the prompt's own text: nothing more can be dropped
            await pilot.press("minus")
            await settle(pilot)
            if app.shown["status"] == "over-budget":
                break
        assert app.shown["status"] == "over-budget"
        status = screen_text(app).splitlines()[1:3]
        assert any("▲ over budget" in line for line in status)
        assert not any("fits" in line for line in status)
        assert "the system text is over its token_budget even after every drop" in screen_text(app)


async def test_planning_names_the_capacity_profile_and_the_same_limits_as_the_web_page(session: FakeSession) -> None:
    app = make_tui(session)
    async with app.run_test(size=SIZE) as pilot:
        await show(pilot, "ladder-reply", "busy")
        app.query_one("#tabs").active = "tab-planning"
        await settle(pilot)
        text = screen_text(app)
        prompt = next(p for p in session.report["prompts"] if p["id"] == "ladder-reply")
        whole = plain(render_planning(app.shown, prompt), width=400)
        assert "Planned for: named by the prompt (model=...)" in whole
        labels = [line.split("  ")[0].strip() for line in detail_lines(app) if line.strip()]
        start = labels.index("Limits")
        assert labels[start + 1 : start + 1 + len(LIMITS)] == [label for _key, label, _write, _hint in LIMITS]
        assert re.search(r"context window +2,048 ", whole) and re.search(r"capacity from +a capacity profile ", whole)
        row = next(line for line in detail_lines(app) if "sync-log" in line and " summary " in line and "rejected" in line)
        assert "not prepared" in row and "rejected: unprepared" in row
        assert "None" not in text


def test_no_pane_ever_shows_none_tokens_for_an_unprepared_summary() -> None:
    session = FakeSession(prompts=[ladder_prompt()])
    prompt = session.report["prompts"][0]
    for example in prompt["examples"]:
        assert any(c["rejection_reason"] == "unprepared" for c in example["preview"]["candidates"])
        for renderable in (render_request(prompt, example), render_planning(example, prompt)):
            text = plain(renderable)
            assert "None" not in text
            assert "summary of sync-log (extractive:0.3): not prepared" in text.replace("Summary", "summary")


async def test_v_switches_between_the_request_as_sent_and_the_resolved_system_text(session: FakeSession) -> None:
    app = make_tui(session)
    async with app.run_test(size=SIZE) as pilot:
        await show(pilot, "ladder-reply", "busy")
        await pilot.press("v")
        await settle(pilot)
        assert app.query_one("#tabs").active == "tab-system"
        text = screen_text(app)
        assert "## Catalog (complete)" in text  # resolved: every part in full
        assert "planned request" in text and "catalog → authored" in text
        await pilot.press("v")
        await settle(pilot)
        assert app.query_one("#tabs").active == "tab-request"
        assert "## Catalog (index)" in screen_text(app)


async def test_p_prepares_the_summary_and_the_plan_then_sends_it(session: FakeSession) -> None:
    recorder = Recorder()
    app = make_tui(session)
    async with app.run_test(size=SIZE, message_hook=recorder, notifications=True) as pilot:
        await show(pilot, "ladder-reply", "busy")
        assert "press p to prepare it (no model needed)" in screen_text(app)
        assert "sync-log · ladder · offload preview" in screen_text(app)
        await pilot.press("p")
        await settle(pilot)
        calls = [c[1] for c in session.calls if c[0] == "prepare_summaries"]
        assert calls == [{"prompt_id": "ladder-reply", "example": "busy", "allow_models": False, "token_budget": None}]
        [prepared] = recorder.of(SummariesPrepared)[-1].result["prepared"]
        assert prepared["contributor"] == "sync-log" and prepared["strategy"] == "extractive:0.3"
        assert f"prepared sync-log (extractive:0.3, {prepared['tokens']} tok)" in notifications(app)
        assert ("reload", None) in session.calls and app.busy is None
        # the new plan sends the summary: a higher rung than the offload preview
        summary = next(c for c in app.shown["preview"]["contributions"] if c["contributor"] == "sync-log")
        assert summary["representation"] == "summary"
        text = screen_text(app)
        assert f"sync-log · ladder · summary · {summary['tokens']} tok" in text
        assert "not prepared" not in text


async def test_a_summary_that_needs_its_model_is_prepared_only_with_capital_p(session: FakeSession) -> None:
    async def needs_model(prompt_id: str, **kwargs: Any) -> dict[str, Any]:
        session.calls.append(("prepare_summaries", kwargs))
        if kwargs["allow_models"]:
            return {"prepared": [{"contributor": "digest", "strategy": "hierarchical", "tokens": 40}], "skipped": [], "error": None}
        return {"prepared": [], "skipped": [{"contributor": "digest", "reason": "needs-model", "needs_model": True, "model": "m"}], "error": None}

    session.prepare_summaries = needs_model  # type: ignore[method-assign]
    app = make_tui(session)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await show(pilot, "ladder-reply", "busy")
        await pilot.press("p")
        await settle(pilot)
        assert notifications(app)[-1] == "skipped digest: needs-model\nP prepares it with its model (this calls the model)."
        await pilot.press("P")
        await settle(pilot)
        assert [c[1]["allow_models"] for c in session.calls if c[0] == "prepare_summaries"] == [False, True]
        assert notifications(app)[-1] == "prepared digest (hierarchical, 40 tok)"


async def test_a_failed_preparation_is_an_error_notification_not_a_crash(session: FakeSession) -> None:
    async def broken(*args: Any, **kwargs: Any) -> dict[str, Any]:
        raise RuntimeError("worker [/] went away")

    session.prepare_summaries = broken  # type: ignore[method-assign]
    app = make_tui(session)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await show(pilot, "ladder-reply", "busy")
        await pilot.press("p")
        await settle(pilot)
        assert notifications(app)[-1] == "Could not prepare the summaries of ladder-reply: RuntimeError: worker [/] went away"
        assert app.busy is None


async def test_an_over_limit_plan_says_nothing_would_be_sent(session: FakeSession) -> None:
    app = make_tui(session)
    async with app.run_test(size=SIZE) as pilot:
        await show(pilot, "ladder-reply", "busy")
        app.detail.choose(budget=50)
        await settle(pilot)
        assert app.shown["preview"]["sent"] is None
        text = screen_text(app)
        assert "Nothing would be sent: no plan fits the limit." in text
        assert "▲ over limit" in text and "✓ fits" not in text


async def test_selecting_a_context_scrolls_the_request_to_its_part(session: FakeSession) -> None:
    app = make_tui(session)
    async with app.run_test(size=(140, 22)) as pilot:
        await show(pilot, "ladder-reply", "quiet")  # the full catalog: the log sits below the screen
        app.query_one(PromptTree).select_prompt("ladder-reply")
        await settle(pilot)
        assert "sync-log · ladder" not in screen_text(app)
        tree = app.query_one(PromptTree)
        node = next(n for n in tree._shown_nodes if n.data and n.data.prompt_id == "ladder-reply" and n.data.context_id == "sync-log")
        tree.move_cursor(node)
        await settle(pilot)
        assert app.query_one(RequestView).selected_part == "sync-log"
        assert app.query_one(RequestView).scroll_y > 10
        assert "sync-log · ladder · full" in screen_text(app)


@pytest.mark.parametrize(("width", "lines"), [(136, 1), (110, 2)])
async def test_the_status_line_keeps_its_height_while_the_project_reloads(session: FakeSession, width: int, lines: int) -> None:
    """A status line that grew a line for "… loading" would re-lay and repaint every pane under
    it on every save (it once cost the save-to-screen benchmark about 40 ms)."""
    from crux_devtools.tui.widgets import StatusLine

    app = make_tui(session)
    async with app.run_test(size=(width, 40)) as pilot:
        await settle(pilot)
        status = app.query_one(StatusLine)
        assert status.outer_size.height == lines
        app.detail.busy = "loading"
        await pilot.pause()
        assert status.outer_size.height == lines
        assert "token_budget none" in screen_text(app)
        app.detail.busy = None
        await pilot.pause()
        assert status.outer_size.height == lines


async def test_markup_in_sent_text_tool_schemas_and_ids_is_shown_literally() -> None:
    from pydantic import BaseModel, Field

    from crux_devtools import context, prompt, tool

    class Query(BaseModel):
        q: str = Field(description="a [bold]query[/bold] [/]")

    lookup = tool("look[/]up", description="Find [red]rows[/red] [/]", parameters=Query, execute=lambda p: p.q)
    hostile = prompt(
        "hostile[/]",
        system="Say [bold]hi[/bold] then [/] and [@click=app.quit]quit[/].",
        use=[context("notes[bold]", system="Notes [/] here", tools=[lookup])],
        prompt=lambda i: "user [i]text[/i] [/]",
    )
    app = make_tui(FakeSession(prompts=[hostile]))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        text = screen_text(app)
        assert "Say [bold]hi[/bold] then [/] and [@click=app.quit]quit[/]." in text
        assert "notes[bold] · context · full" in text and "Notes [/] here" in text
        assert "user [i]text[/i] [/]" in text
        lines = "\n".join(request_lines(app))
        assert "look[/]up · " in lines and "Find [red]rows[/red] [/]" in lines
        assert '"description": "a [bold]query[/bold] [/]"' in lines
        for tab in ("tab-tools", "tab-planning"):
            app.query_one("#tabs").active = tab
            await settle(pilot)
        assert "look[/]up" in screen_text(app)  # Planning: "Tools sent: look[/]up (… tok)"
