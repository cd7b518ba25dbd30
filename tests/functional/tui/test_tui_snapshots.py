"""Snapshot tests of the TUI (pytest-textual-snapshot); baselines live in tests/functional/tui/__snapshots__/.

Regenerate after a deliberate change with ``pytest tests/functional/tui/test_tui_snapshots.py --snapshot-update``
and look at the SVGs before committing them.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

sys.path.insert(0, str(Path(__file__).parents[2]))

from tui_fakes import FakeSession, build_prompts, ladder_prompt  # noqa: E402

from crux_devtools.tui import make_tui  # noqa: E402

SIZE = (110, 34)


async def settle(pilot: Pilot[Any]) -> None:
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def test_first_screen_shows_the_tree_and_the_request_as_sent(snap_compare: Any) -> None:
    assert snap_compare(make_tui(FakeSession()), terminal_size=SIZE, run_before=settle)


def test_lowered_budget_shows_the_dropped_contexts(snap_compare: Any) -> None:
    async def lower_twice(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        for _ in range(2):
            await pilot.press("minus")
            await settle(pilot)

    assert snap_compare(make_tui(FakeSession()), terminal_size=SIZE, run_before=lower_twice)


def test_contributors_tab_shows_status_reason_and_priority(snap_compare: Any) -> None:
    async def open_contributors(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        pilot.app.query_one("#tabs").active = "tab-contributors"
        await settle(pilot)

    assert snap_compare(make_tui(FakeSession()), terminal_size=SIZE, run_before=open_contributors)


def test_a_failed_load_shows_the_error_and_the_stale_marker(snap_compare: Any) -> None:
    session = FakeSession()

    async def break_it(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        session.break_project(
            {
                "file": "support.py",
                "line": 7,
                "type": "SyntaxError",
                "message": "invalid syntax",
                "traceback": 'Traceback (most recent call last):\n  File "support.py", line 7\n    def (\n        ^\nSyntaxError: invalid syntax',
            }
        )
        await settle(pilot)
        pilot.app.query_one("#tabs").active = "tab-errors"
        await settle(pilot)

    assert snap_compare(make_tui(session), terminal_size=SIZE, run_before=break_it)


def test_a_runs_detail_shows_the_step_list_and_the_step(snap_compare: Any, tmp_path: Path, monkeypatch: Any) -> None:
    import json
    import time

    monkeypatch.setenv("TZ", "UTC")  # the start time is shown in local time
    time.tzset()

    from tui_fakes import recorded_run

    from crux_devtools import tool_call

    session = FakeSession(runs_file=tmp_path / "runs.sqlite3")
    support = session.prompts["support-reply"]
    run = recorded_run(support, {"message": "Why was I charged twice?", "signed_in": True}, [[tool_call("lookup_order", {"order_id": "A-1"})], "It was one charge."], run_id="run-1")
    # what differs between two runs of the same thing: ids, times
    run.update(started_at="2026-11-30T09:00:00+00:00", duration_ms=12.0)
    text = json.dumps(run["steps"])
    for n, step in enumerate(run["steps"]):
        text = text.replace(step["request"]["id"], f"req_{n}")
    for n, call in enumerate(run["steps"][0]["tool_calls"]):
        text = text.replace(call["id"], f"call_{n + 1}")
    run["steps"] = json.loads(text)
    for n, step in enumerate(run["steps"]):
        step["latency_ms"] = 0.5
        step["started_ms"] = 2.0 + 5.0 * n  # when each call began and its tools' time: measured, so fixed here
        step["tool_ms"] = 1.5 if step["tool_calls"] else None
    assert session.store is not None
    session.store.write(run)

    async def open_run(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        from crux_devtools.tui.app import TABS

        await pilot.press(str(1 + [tab[0] for tab in TABS].index("tab-runs")), "enter")  # the Runs tab, its first run
        await settle(pilot)

    try:
        assert snap_compare(make_tui(session), terminal_size=SIZE, run_before=open_run)
    finally:
        monkeypatch.undo()
        time.tzset()


def test_request_tab_shows_the_authored_alternative_and_the_offload_preview(snap_compare: Any) -> None:
    async def busy_ladder(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        pilot.app.query_one("PromptTree").select_prompt("ladder-reply")
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)

    session = FakeSession(prompts=[*build_prompts(), ladder_prompt()])
    assert snap_compare(make_tui(session), terminal_size=(120, 44), run_before=busy_ladder)


def test_tools_tab_shows_each_tools_schema_and_cost(snap_compare: Any) -> None:
    async def tools(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        pilot.app.query_one("PromptTree").select_prompt("ladder-reply")
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        pilot.app.query_one("#tabs").active = "tab-tools"
        await settle(pilot)

    session = FakeSession(prompts=[*build_prompts(), ladder_prompt()])
    assert snap_compare(make_tui(session), terminal_size=SIZE, run_before=tools)


def test_planning_tab_names_the_capacity_profile_and_its_limits(snap_compare: Any) -> None:
    async def planning(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        pilot.app.query_one("PromptTree").select_prompt("ladder-reply")
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        pilot.app.query_one("#tabs").active = "tab-planning"
        await settle(pilot)

    session = FakeSession(prompts=[*build_prompts(), ladder_prompt()])
    assert snap_compare(make_tui(session), terminal_size=(120, 44), run_before=planning)
