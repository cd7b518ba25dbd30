"""The TUI's Runs tab and run detail over a real RunStore (a tmp SQLite file) and real runs.

Every run here is a real ``generate`` of a real prompt with a ``ScriptedModel`` (``recorded_run``),
written with the real ``RunStore``; the app is a real Textual app driven by a pilot.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from waits import pilot_until
from rich.console import Console

sys.path.insert(0, str(Path(__file__).parents[2]))

from test_tui import notifications, screen_text, settle  # noqa: E402
from tui_fakes import FakeSession, Ticket, house_rules, recorded_run  # noqa: E402

from crux_devtools import (  # noqa: E402
    InputBudget,
    ScriptedModel,
    context,
    droppable,
    generate,
    offloadable,
    prefer,
    prompt,
    summarizable,
    summarize,
    tool,
    tool_call,
)
from crux_devtools.core.record.runstore import RunStore  # noqa: E402
from crux_devtools.tui import make_tui  # noqa: E402
from crux_devtools.tui.app import TABS, CruxTui  # noqa: E402
from crux_devtools.tui.runs_render import render_step, system_pieces  # noqa: E402
from crux_devtools.tui.screens import ConfirmRun, RunDetailScreen  # noqa: E402
from crux_devtools.tui.widgets import PromptTree  # noqa: E402
from crux_devtools.tui.widgets.runs import RunsTable  # noqa: E402
from textual.widgets import Static  # noqa: E402
from crux_devtools.inspector.transport.inprocess import in_process  # noqa: E402

SIZE = (150, 50)
MARKUP_INPUT = {"message": "why [/] was I [bold]charged[/bold] twice?", "signed_in": True}


class Explode(Exception):
    pass


def _crash(_: Any) -> Any:
    raise Explode("the ledger [/] is [bold]locked")


refund_tool = tool("refund", description="Refund an order [/] now.", parameters=Ticket, execute=_crash)


def flat(text: str) -> str:
    return " ".join(text.split())


def rendered(renderable: Any, width: int = 160) -> str:
    console = Console(width=width, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


@pytest.fixture
def session(tmp_path: Path) -> FakeSession:
    return FakeSession(runs_file=tmp_path / ".crux" / "runs.sqlite3")


def seed(session: FakeSession) -> dict[str, dict[str, Any]]:
    """Three runs, oldest first: an answered one with a tool call, a failed one, one of the agent."""
    support = session.prompts["support-reply"]
    triage = session.prompts["triage-agent"]
    runs = {
        "answered": recorded_run(
            support, MARKUP_INPUT, [[tool_call("lookup_order", {"order_id": "A-[/]1"})], "Refund [bold]soon[/]"],
            started_at="2026-11-30T09:00:00+00:00", run_id="run-answered",
        ),
        "failed": recorded_run(support, {"message": "hi"}, [[tool_call("no_such_tool", {})]], started_at="2026-11-30T10:00:00+00:00", run_id="run-failed"),
        "agent": recorded_run(triage, {"message": "My invoice is wrong."}, ["billing"], origin="inspector", started_at="2026-11-30T11:00:00+00:00", run_id="run-agent"),
    }
    assert session.store is not None
    for run in runs.values():
        session.store.write(run)
    return runs


def table_rows(app: CruxTui) -> list[str]:
    table = app.query_one(RunsTable)
    return [" | ".join(cell.plain for cell in table.get_row_at(i)) for i in range(table.row_count)]


def target_of(row: str) -> str:
    return row.split(" | ")[1].split()[0]


async def press_run(pilot: Any, app: CruxTui, prompt_id: str) -> None:
    """Select ``prompt_id`` in the tree and press ``r``, letting each step settle."""
    await settle(pilot)
    app.query_one(PromptTree).select_prompt(prompt_id)
    await settle(pilot)
    await pilot.press("r")
    await settle(pilot)


RUNS_KEY = str(1 + [tab_id for tab_id, _, _, _ in TABS].index("tab-runs"))  # the number key of the Runs tab


async def open_runs_tab(pilot: Any) -> None:
    await settle(pilot)
    await pilot.press(RUNS_KEY, "x")  # the tab, its table focused; x: all runs
    await settle(pilot)


async def test_the_runs_tab_lists_the_recorded_runs_newest_first_with_their_figures(session: FakeSession) -> None:
    runs = seed(session)
    app = make_tui(session)
    async with app.run_test(size=SIZE) as pilot:
        await open_runs_tab(pilot)
        rows = table_rows(app)
        assert [target_of(row) for row in rows] == ["triage-agent", "support-reply", "support-reply"]
        agent, failed, answered = rows
        assert "| inspector | ✓ ok | 1 |" in agent
        assert "| app | ✗ error | 1 |" in failed
        answered_tokens = sum(s["request"]["input_tokens"] for s in runs["answered"]["steps"])
        assert f"| app | ✓ ok | 2 | {answered_tokens:,} | — |" in answered  # no usage: the ScriptedModel reports none
        text = screen_text(app)
        assert "All runs · 3" in text
        assert "Runs (3)" in text
        # the highlighted run's error, under the table
        await pilot.press("down")
        await settle(pilot)
        assert "UnknownTool: model asked for unknown tool 'no_such_tool'" in screen_text(app)


async def test_a_run_written_by_another_process_appears_without_a_key_press(session: FakeSession, tmp_path: Path) -> None:
    seed(session)
    app = make_tui(session)
    async with app.run_test(size=SIZE) as pilot:
        await open_runs_tab(pilot)
        assert len(table_rows(app)) == 3
        # another writer (its own connection, as another process would have), then the session's event
        other = RunStore(tmp_path / ".crux" / "runs.sqlite3")
        late = recorded_run(session.prompts["triage-agent"], {"message": "late"}, ["other"], started_at="2026-11-30T12:00:00+00:00", run_id="run-late")
        other.write(late)
        other.close()
        session.emit_runs_event("1 new run: triage-agent (ok)")
        await settle(pilot)
        rows = table_rows(app)
        assert len(rows) == 4 and target_of(rows[0]) == "triage-agent" and "| app |" in rows[0]
        assert "Runs (4)" in screen_text(app)
        assert "1 new run: triage-agent (ok)" in notifications(app)


async def test_f_lists_only_the_selected_prompts_runs_following_the_tree_and_x_lists_all_again(session: FakeSession) -> None:
    seed(session)
    app = make_tui(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f")  # the Runs tab's key: nothing from the tree
        await settle(pilot)
        assert app.query_one("#tabs").active == "tab-request"
        await pilot.press(RUNS_KEY, "f")
        await settle(pilot)
        assert app.query_one("#tabs").active == "tab-runs"
        assert [target_of(row) for row in table_rows(app)] == ["support-reply", "support-reply"]
        assert "Runs of support-reply · 2 of 3" in screen_text(app)
        app.query_one(PromptTree).select_prompt("triage-agent")  # the filter follows the tree
        await settle(pilot)
        assert [target_of(row) for row in table_rows(app)] == ["triage-agent"]
        await pilot.press("x")
        await settle(pilot)
        assert len(table_rows(app)) == 3 and "All runs · 3" in screen_text(app)
        await pilot.press("f", "f")  # f toggles
        await settle(pilot)
        assert len(table_rows(app)) == 3


async def test_enter_opens_a_run_step_by_step_with_the_system_text_part_by_part_messages_tools_and_results(session: FakeSession) -> None:
    runs = seed(session)
    app = make_tui(session)
    async with app.run_test(size=(150, 200)) as pilot:
        await open_runs_tab(pilot)
        await pilot.press("down", "down", "enter")  # the oldest: answered after a tool call
        await settle(pilot)
        assert isinstance(app.screen, RunDetailScreen)
        step = runs["answered"]["steps"][0]
        receipt = step["request"]
        text = screen_text(app)
        assert f"Step 0   {receipt['input_tokens']} input tokens (ours)  provider usage not reported" in text
        assert "answer Refund [bold]soon[/]" in text
        # the planner's limits and decisions
        assert f"input {receipt['input_tokens']}  max 5,292  optimize at 5,292" in text
        assert "adaptations: none (every part at full fidelity)" in text
        # the response: the tool call and its result, canonical and as the model saw it
        assert '→ tool call lookup_order({ "order_id": "A-[/]1" })  ' + step["tool_calls"][0]["id"] in text
        assert '{"order_id":"A-[/]1","status":"shipped"}' in text
        # what was sent: each part of the system text under its source and rung, from its span
        billing = next(c for c in receipt["contributions"] if c["contributor"] == "billing")
        assert f"billing · context · full · {billing['tokens']} tok · tools lookup_order" in text
        assert "house_rules · context · full · 11 tok" in text
        assert "The customer is signed in on the free plan." in text
        assert "why [/] was I [bold]charged[/bold] twice?" in text  # the user message, literally
        tokens = receipt["tool_tokens"]["lookup_order"]
        assert f"lookup_order · {tokens} tok" in text
        assert "Find an order by its number." in text
        assert '"description": "Order number"' in text  # its JSON schema
        # the next step: the conversation grew by the tool result
        await pilot.press("n")
        await settle(pilot)
        text = screen_text(app)
        assert "Step 1 " in text and "assistant" in text and f"tool (reply to {step['tool_calls'][0]['id']})" in text
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, RunDetailScreen)


def test_a_ladder_runs_parts_are_labelled_with_their_rung_authored_summary_and_offload(tmp_path: Path) -> None:
    log = offloadable(context("sync-log", priority=50, system="\n".join(f"2026-11-29 line {i} device synced" for i in range(300))), above_tokens=100)
    notes = summarizable(context("notes", priority=60, system=" ".join(f"Note {i}: the sync agent restarted after an update." for i in range(120))), strategy=summarize.extractive(0.1))
    catalog = droppable(prefer(context("catalog", priority=70, system="Catalog entry with many words. " * 200), context("catalog-index", system="Index: NB-PRO, NB-FREE")))
    ladder = prompt("ladder-reply", system="You are Ari.", use=[catalog, notes, log], prompt=lambda i: "Why?")
    result = generate(ladder, input={}, model=ScriptedModel(["ok"]), input_budget=InputBudget(optimize_at=900, max=1100))
    step = result.to_dict()["steps"][0]
    rungs = {c["contributor"]: c["representation"] for c in step["request"]["contributions"]}
    assert {rungs["catalog"], rungs["sync-log"]} == {"authored", "offload"}
    shown = rendered(render_step(step))
    assert "catalog · ladder · authored (catalog-index) · " in shown
    handle = next(c["handle"] for c in step["request"]["contributions"] if c["contributor"] == "sync-log")
    assert f"sync-log · ladder · offload · preview + handle {handle} · " in shown
    assert "Index: NB-PRO, NB-FREE" in shown
    if rungs["notes"] == "summary":
        assert "notes · ladder · summary · " in shown
    assert "rejected: " in shown  # the candidates the planner turned down, with their reasons
    # every character of the system text is shown, cut exactly at the spans
    pieces = system_pieces(step["sent"]["system"], step["request"]["contributions"])
    assert "".join(p.text for p in pieces) == step["sent"]["system"]


def test_system_pieces_keep_every_character_even_when_spans_overrun_a_cut_text() -> None:
    contributions = [
        {"contributor": "a", "span": [0, 5]},
        {"contributor": "b", "span": [7, 40]},  # the stored text was cut at 12 characters
        {"contributor": "c", "span": None},
        {"contributor": "d", "span": [50, 60]},
    ]
    pieces = system_pieces("Hello\n\nWorld, more", contributions)
    assert [(p.text, (p.contribution or {}).get("contributor")) for p in pieces] == [("Hello", "a"), ("\n\n", None), ("World, more", "b")]


async def test_a_failed_run_shows_as_failed_with_its_error_and_traceback(session: FakeSession) -> None:
    failing = prompt("refund-agent", system="Refund when asked.", input=Ticket, use=[house_rules], tools=[refund_tool], prompt=lambda i: i.message, examples={"default": {"message": "refund [/] me"}})
    session.prompts["refund-agent"] = failing
    session._report = session.build_report()
    session.run_responses = ([tool_call("refund", {"message": "[bold]now"})], "never reached")
    app = make_tui(session)
    async with app.run_test(size=(150, 80), notifications=True) as pilot:
        await press_run(pilot, app, "refund-agent")
        assert isinstance(app.screen, RunDetailScreen)
        text = screen_text(app)
        assert "refund-agent agent  ✗ error" in text
        assert "Explode: tool 'refund' raised Explode: the ledger [/] is [bold]locked" in text
        assert 'raise Explode("the ledger [/] is [bold]locked")' in text  # the traceback
        assert any(n.startswith("Run of refund-agent failed after 1 step(s): ") and "[/]" in n for n in notifications(app))
        await pilot.press("escape")
        await settle(pilot)
        row = table_rows(app)[0]
        assert row.split(" | ")[1:4] == ["refund-agent agent", "inspector", "✗ error"]
        stored = session.store.list(target="refund-agent") if session.store else []
        assert [r["status"] for r in stored] == ["error"]
        assert app.is_running


async def test_run_asks_first_when_the_model_is_not_scripted_and_n_cancels_y_runs(session: FakeSession) -> None:
    real = session.build_report()
    for p in real["prompts"]:
        if p["id"] == "triage-agent":
            p["model_kind"] = "openai-compatible"
    session._report = real
    app = make_tui(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.query_one(PromptTree).select_prompt("triage-agent")
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmRun)
        text = screen_text(app)
        assert "Run triage-agent for real?" in text
        assert "model: openai-compatible-model" in text and "may cost money" in text and "real tools" in text
        await pilot.press("n")
        await settle(pilot)
        assert not [c for c in session.calls if c[0] == "run"]
        assert not isinstance(app.screen, ConfirmRun)
        await pilot.press("r")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert [c for c in session.calls if c[0] == "run"] == [("run", {"prompt_id": "triage-agent", "example": "default"})]
        assert isinstance(app.screen, RunDetailScreen)


async def test_i_opens_the_steps_prompt_with_the_run_input_and_the_budget_keys_replay_it(session: FakeSession) -> None:
    runs = seed(session)
    app = make_tui(session)
    async with app.run_test(size=SIZE) as pilot:
        await open_runs_tab(pilot)
        await pilot.press("down", "down", "enter", "n", "i")
        await settle(pilot)
        assert not isinstance(app.screen, RunDetailScreen)
        assert app.query_one("#tabs").active == "tab-system"
        evaluated = [c[1] for c in session.calls if c[0] == "evaluate"]
        assert evaluated[-1] == {"prompt_id": "support-reply", "example": None, "token_budget": None, "input": runs["answered"]["input"]}
        text = screen_text(app)
        assert "prompt  support-reply  input of run run-answered step 1" in text
        assert "why [/] was I [bold]charged[/bold] twice?" in text  # the run's message, as the user prompt
        await pilot.press("minus")
        await settle(pilot)
        last = [c[1] for c in session.calls if c[0] == "evaluate"][-1]
        assert last["input"] == runs["answered"]["input"] and last["token_budget"] is not None
        assert "input of run run-answered step 1" in screen_text(app)
        await pilot.press("e")  # back to the examples
        await settle(pilot)
        assert "example signed-in (1/2)" in screen_text(app)


async def test_a_run_whose_prompt_is_gone_or_whose_input_is_not_json_cannot_be_opened_in_the_prompt_view(session: FakeSession) -> None:
    ghost = recorded_run(session.prompts["triage-agent"], {"message": "x"}, ["y"], run_id="run-ghost")
    ghost["target"] = "deleted-agent"
    assert session.store is not None
    session.store.write(ghost)
    app = make_tui(session)
    async with app.run_test(size=SIZE) as pilot:
        await open_runs_tab(pilot)
        await pilot.press("enter", "i")
        await settle(pilot)
        assert "deleted-agent is not in the project as loaded now: it cannot be shown." in notifications(app)
        assert all(choice.custom is None for choice in app.detail.choices.values())


async def test_with_history_off_the_tab_lists_this_sessions_runs_and_says_so() -> None:
    session = FakeSession()  # no runs file: runs() is None
    app = make_tui(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.query_one(PromptTree).select_prompt("triage-agent")
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        text = screen_text(app)
        assert "Run history is off" in text
        assert len(table_rows(app)) == 1


async def test_user_text_in_runs_is_shown_literally_in_the_list_the_detail_and_the_toasts(session: FakeSession) -> None:
    seed(session)
    assert session.store is not None
    weird = recorded_run(session.prompts["support-reply"], {"message": "[/] [bold]x[/bold] [@click=app.quit]q[/]"}, [[tool_call("no_such_tool", {"q": "[/]"})]], run_id="run-[/]")
    weird["error"] = {"type": "Key[/]Error", "message": "missing [/] [bold]section", "traceback": 'File "a[/].py", line 3\n  raise KeyError("[/]")'}
    weird["target"] = "support-reply"
    session.store.write(weird)
    app = make_tui(session)
    async with app.run_test(size=(150, 80), notifications=True) as pilot:
        await open_runs_tab(pilot)
        text = screen_text(app)
        assert "Key[/]Error: missing [/] [bold]section" in text
        assert "[/] [bold]x[/bold] [@click=app.quit]q[/]" in text
        await pilot.press("enter")
        await settle(pilot)
        text = screen_text(app)
        assert "run run-[/]" in text
        assert "Key[/]Error: missing [/] [bold]section" in text
        assert "model asked for unknown tool 'no_such_tool'" in text
        session.emit_runs_event("1 new run: [/]bad (error)")
        await settle(pilot)
        assert "1 new run: [/]bad (error)" in notifications(app)
        assert app.is_running


async def test_the_main_views_keys_do_nothing_behind_a_runs_detail(session: FakeSession) -> None:
    seed(session)
    app = make_tui(session)
    async with app.run_test(size=SIZE) as pilot:
        await open_runs_tab(pilot)
        await pilot.press("enter")
        await settle(pilot)
        before = list(session.calls)
        await pilot.press("minus", "e", "r")
        await settle(pilot)
        assert session.calls == before
        assert isinstance(app.screen, RunDetailScreen)


async def test_a_run_that_never_reached_the_store_is_still_listed_and_opens_as_failed(session: FakeSession) -> None:
    from crux_devtools.inspector.api import failed_run

    async def worker_died(prompt_id: str, **_: Any) -> dict[str, Any]:
        error = {"file": None, "line": None, "type": "WorkerCrashed", "message": "the worker [/] exited", "traceback": "Traceback [bold]..."}
        return failed_run(prompt_id, error, input={"message": "x"}, kind="agent")

    seed(session)
    session.run = worker_died  # type: ignore[method-assign]
    app = make_tui(session)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        app.query_one(PromptTree).select_prompt("triage-agent")
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        text = screen_text(app)
        assert "triage-agent agent  ✗ error" in text
        assert "WorkerCrashed: the worker [/] exited" in text
        assert "Traceback [bold]..." in text  # no step failed: the run's own traceback is shown
        assert "No step was dispatched" in text
        await pilot.press("escape")
        await settle(pilot)
        rows = table_rows(app)
        assert len(rows) == 4 and "✗ error" in rows[0] and "inspector" in rows[0]
        assert "All runs · 4" in screen_text(app)


async def test_a_huge_tool_result_opens_quickly_cut_for_display_with_its_true_size_named(session: FakeSession) -> None:
    seed(session)
    assert session.store is not None
    run = session.store.get("run-answered")
    assert run is not None
    huge = "".join(f"row {i} of the export\n" for i in range(80_000))  # 1.6 MB: the store keeps 1 M characters
    run["steps"][1]["sent"]["messages"].append({"role": "tool", "tool_call_id": "call_big", "content": huge})
    run["steps"][1]["tool_results"] = [{"name": "lookup_order", "output": huge, "model_output": huge, "call_id": "call_big"}]
    run["id"] = "run-huge"
    run["started_at"] = "2026-11-30T23:00:00+00:00"
    session.store.write(run)
    app = make_tui(session)
    async with app.run_test(size=(150, 60)) as pilot:
        await open_runs_tab(pilot)
        await pilot.press("enter", "n")
        await settle(pilot)
        sent = rendered(app.screen.query_one("#step-sent", Static).content)
        assert "more characters were sent; not shown here" in sent
        assert "row 2000 of the export" in sent and "row 79999 of the export" not in sent
        outcome = rendered(app.screen.query_one("#step-outcome", Static).content)
        assert "more characters not shown here" in outcome  # the canonical output, cut shorter


async def test_over_the_real_session_r_records_the_run_and_the_runs_tab_lists_it(tmp_path: Path) -> None:
    import shutil

    from crux_devtools.inspector.session.service import ProjectSession

    project = tmp_path / "sample_project"
    shutil.copytree(Path(__file__).resolve().parents[3] / "sample_project", project, ignore=shutil.ignore_patterns("__pycache__", ".crux*", "data"))
    session = ProjectSession(project, transport=in_process, history=False)
    app = make_tui(session)
    async with app.run_test(size=(150, 50)) as pilot:
        await pilot_until(pilot, lambda: session.report is not None and app.query(PromptTree) and app.query_one(PromptTree).root.children, "the tree is shown")
        app.query_one(PromptTree).select_prompt("support-agent")
        await pilot_until(pilot, lambda: app.prompt_id == "support-agent", "support-agent is selected")
        await pilot.press("r")  # a ScriptedModel: no confirmation
        await pilot_until(pilot, lambda: isinstance(app.screen, RunDetailScreen), "the run's detail opens")
        # pushed is not yet drawn: wait for the detail's first frame
        await pilot_until(pilot, lambda: "support-agent agent  ✓ ok" in screen_text(app), "the run's detail shows the run")
        await pilot.press("escape")
        await pilot_until(pilot, lambda: not isinstance(app.screen, RunDetailScreen) and table_rows(app), "the Runs tab lists the run")
        stored = RunStore.for_project(project, create=False).list()
        assert [(r["target"], r["origin"], r["status"]) for r in stored] == [("support-agent", "inspector", "ok")]
        row = table_rows(app)[0]
        assert target_of(row) == "support-agent" and "| inspector | ✓ ok | 2 |" in row
        await pilot.press("q")
    await session.stop()


async def test_a_run_with_a_date_beyond_local_time_odd_usage_and_escapes_is_listed_and_opened(session: FakeSession) -> None:
    support = session.prompts["support-reply"]
    odd = recorded_run(support, {"message": "hi"}, ["fine"], started_at="0001-01-01T00:00:00+01:00", run_id="run-odd")
    odd["usage"] = "lots"
    odd["target"] = "support-reply\x1b]0;pwned\x07\x1b[2J"
    odd["model"] = "m\x9b2J"
    assert session.store is not None
    session.store.write(odd)
    app = make_tui(session)
    async with app.run_test(size=SIZE) as pilot:
        await open_runs_tab(pilot)
        [row] = table_rows(app)
        assert row.startswith("0001-01-01T00:00:00+01:00 | support-reply\\x1b]0;pwned\\x07\\x1b[2J")
        assert "\x1b" not in screen_text(app) and "\x9b" not in screen_text(app)
        await pilot.press("enter")
        for _ in range(400):
            await pilot.pause(0.05)
            if isinstance(app.screen, RunDetailScreen) and "model m\\x9b2J" in screen_text(app):
                break
        assert isinstance(app.screen, RunDetailScreen)
        text = screen_text(app)
        assert "started 0001-01-01T00:00:00+01:00" in text and "\x1b" not in text and "\x9b" not in text
        await pilot.press("q")


def _crash_with_escapes(_: Any) -> Any:
    raise Explode("HTTP 500 from the provider: \x1b]0;pwned\x07\x1b[2J")


async def test_a_failed_inspector_run_notifies_its_error_without_control_characters(session: FakeSession) -> None:
    crashing = tool("refund", description="Refund an order.", parameters=Ticket, execute=_crash_with_escapes)
    session.prompts["refund-agent"] = prompt("refund-agent", system="Refund.", input=Ticket, tools=[crashing], prompt=lambda i: i.message, examples={"default": {"message": "me"}})
    session._report = session.build_report()
    session.run_responses = ([tool_call("refund", {"message": "now"})], "never reached")
    app = make_tui(session)
    async with app.run_test(size=(150, 80), notifications=True) as pilot:
        await press_run(pilot, app, "refund-agent")
        [failed] = [n for n in notifications(app) if n.startswith("Run of refund-agent failed")]
        assert "\\x1b]0;pwned\\x07\\x1b[2J" in failed and "\x1b" not in failed
        assert "\x1b" not in screen_text(app)


def test_a_replay_is_listed_as_one_and_its_preview_names_the_run_it_replays() -> None:
    from rich.text import Text

    from crux_devtools.tui.runs_render import render_run_preview, run_row

    child = {"id": "child-1", "target": "support-agent", "kind": "agent", "origin": "inspector", "status": "ok",
             "parent": "parent-9", "fork_step": 1, "steps": [], "input": {}, "text": "hi", "model": "m"}
    assert "↳ replay" in run_row(child)[1].plain
    first_line = render_run_preview(child).renderables[0]
    assert isinstance(first_line, Text) and "replay of step 1 of run parent-9" in first_line.plain
    plain = dict(child, parent=None, fork_step=None)
    assert "replay" not in run_row(plain)[1].plain
