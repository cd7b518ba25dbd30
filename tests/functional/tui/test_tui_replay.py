"""The TUI's replay of a recorded step: R in the run detail, budget keys, pinned variants (real session, real worker)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from chat_server import ChatServer
from recorded_sample import newest_run, record_sample
from rich.console import Console
from test_replay_send import chat_project  # noqa: F401 - the fixture
from textual.widgets import Input

from crux_devtools.core.record.replay_overrides import Overrides, form_name, wire_fields
from crux_devtools.core.record.runstore import RunStore, child_runs
from crux_devtools.inspector.session.service import ProjectSession
from crux_devtools.tui.app import make_tui
from crux_devtools.tui.replay_render import render_variants
from crux_devtools.tui.screens.overrides import OverridesScreen
from crux_devtools.inspector.transport.inprocess import in_process


def shown(app: Any) -> str:
    """The replay screen's variants as plain text."""
    widget = app.screen.query_one("#replay-variants")
    console = Console(width=200, record=True, color_system=None)
    console.print(widget.content)
    return console.export_text()


def head(app: Any) -> str:
    """The replay screen's header line as plain text."""
    return str(app.screen.query_one("#replay-head").content)


def screen_lines(app: Any) -> list[str]:
    return [strip.text for strip in app.screen._compositor.render_strips()]


async def wait_for(app: Any, pilot: Any, needle: str) -> str:
    deadline = time.monotonic() + 60  # a failure bound, not a pause
    while time.monotonic() < deadline:
        await pilot.pause()
        try:
            text = shown(app)
        except Exception:  # noqa: BLE001 - the screen may not be up yet
            text = ""
        if needle in text:
            return text
        await asyncio.sleep(0.05)
    raise AssertionError(f"{needle!r} never shown; last:\n{text}")


async def open_replay(app: Any, pilot: Any, run: dict[str, Any]) -> None:
    """Open ``run``'s detail and the replay screen of its step 1 (``n``, then ``R``)."""
    app.open_run(run)
    await pilot.pause()
    await pilot.press("n", "R")


@asynccontextmanager
async def replaying(tmp_path: Path) -> AsyncIterator[tuple[Any, Any, Path, dict[str, Any]]]:
    """(app, pilot, project, run): the TUI on the replay screen of step 1 of a recorded sample run,
    once it shows the step replayed as recorded."""
    project = record_sample(tmp_path)
    run = newest_run(project)
    app = make_tui(ProjectSession(project, transport=in_process, history=False, watch=False))
    async with app.run_test(size=(160, 50)) as pilot:
        await open_replay(app, pilot, run)  # step 1
        await wait_for(app, pilot, "identical to the recorded request")
        yield app, pilot, project, run


async def test_r_replays_the_step_and_budget_keys_make_variants(tmp_path: Path) -> None:
    async with replaying(tmp_path) as (app, pilot, project, run):
        assert "as recorded" in shown(app)
        # the header fits the 160 columns whole, on one line (the keys are the footer's)
        assert [line for line in screen_lines(app) if head(app) in line], (head(app), screen_lines(app)[:4])
        footer = screen_lines(app)[-1]
        for words in ("Raise budget", "Lower budget", "Budget as recorded", "Send to the model"):
            assert words in footer, footer  # what each key does, said in the footer
        await pilot.press("v")  # pin it
        # the step was planned at its optimize_at tier (2,800, below max 4,000): - moves optimize_at
        assert "- move optimize_at 2,800 (recorded 2,800, max 4,000)" in head(app)
        for _ in range(5):
            await pilot.press("minus")  # optimize_at 2800 -> 1400, a tenth at a time
        text = await wait_for(app, pilot, "optimize at 1,400")
        assert "- move optimize_at 1,400" in head(app)
        assert "catalog is sent as omitted (was authored)" in text and "cacheable prefix" in text
        await pilot.press("v")
        await pilot.press("0")
        text = await wait_for(app, pilot, "optimize-at=1400")  # the pinned variant's column title
        assert text.count("identical to the recorded request") == 2  # current (as recorded) and the first pin
        await pilot.press("s")  # a scripted model: sent at once, the answer recorded as a child run
        sent = await wait_for_sent(app, pilot, "sent: run ")
        children = child_runs(RunStore.for_project(project), str(run["id"]))
        assert len(children) == 1 and children[0]["id"] in sent and children[0]["fork_step"] == 1
        await pilot.press("escape")
        await pilot.pause()
        assert type(app.screen).__name__ == "RunDetailScreen"


async def test_o_edits_every_override_and_replays_with_what_it_says(tmp_path: Path) -> None:
    async with replaying(tmp_path) as (app, pilot, _project, _run):
        await pilot.press("o")
        dialog = await wait_until(pilot, lambda: app.screen if isinstance(app.screen, OverridesScreen) else None)
        assert [i.id for i in dialog.query(Input)] == [f"override-{form_name(f)}" for f in wire_fields()]  # one input per override
        dialog.query_one("#override-max", Input).value = "lots"
        dialog.query_one("#override-drop", Input).value = "house-rules"
        dialog.query_one("#override-model", Input).value = "nimbus-local"
        dialog.query_one("#override-drop", Input).focus()
        await pilot.press("enter")
        problem = await wait_until(pilot, lambda: str(dialog.query_one("#overrides-problem").content))
        assert problem == "override 'max' must be a whole number of tokens, at least 1, or left out, got 'lots'" and app.screen is dialog
        dialog.query_one("#override-max", Input).value = ""
        await pilot.press("enter")
        text = await wait_for(app, pilot, "now: model=nimbus-local, drop house-rules")
        assert "house-rules" in text and app.screen.overrides() == Overrides(model="nimbus-local", drop=("house-rules",))
        await pilot.press("minus")  # the budget keys move the budget on top of them
        await wait_for(app, pilot, "now: optimize-at=2520, model=nimbus-local, drop house-rules")
        await pilot.press("o")
        dialog = await wait_until(pilot, lambda: app.screen if isinstance(app.screen, OverridesScreen) else None)
        assert dialog.query_one("#override-optimize_at", Input).value == "2520"  # what the replay is now
        await pilot.press("escape")  # nothing changes
        await wait_until(pilot, lambda: not isinstance(app.screen, OverridesScreen))
        assert app.screen.overrides() == Overrides(optimize_at=2520, model="nimbus-local", drop=("house-rules",))


async def wait_for_sent(app: Any, pilot: Any, needle: str) -> str:
    """The replay screen's send line once it holds ``needle``."""
    deadline = time.monotonic() + 60  # a failure bound, not a pause
    while time.monotonic() < deadline:
        await pilot.pause()
        widgets = app.screen.query("#replay-sent")
        text = str(widgets.first().content) if widgets else ""
        if needle in text:
            return text
        await asyncio.sleep(0.05)
    raise AssertionError(f"{needle!r} never shown")


async def test_send_to_a_real_model_asks_first_with_the_estimated_cost(chat_project: tuple[Path, ChatServer, dict[str, str], str], monkeypatch: pytest.MonkeyPatch) -> None:
    project, server, env, run_id = chat_project
    monkeypatch.setenv("REPLAY_CHAT_URL", env["REPLAY_CHAT_URL"])  # the worker imports the project with it
    run = RunStore.for_project(project).get(run_id)
    assert run is not None
    session = ProjectSession(project, transport=in_process, history=False, watch=False)
    app = make_tui(session)
    before = len(server.received)
    async with app.run_test(size=(160, 50)) as pilot:
        app.open_run(run)
        await pilot.pause()
        await pilot.press("R")
        await wait_for(app, pilot, "identical to the recorded request")
        await pilot.press("s")
        asked = await wait_until(pilot, lambda: type(app.screen).__name__ == "ConfirmSend" and app.screen.query("#confirm-detail"))
        detail = str(asked.first().content)
        assert "estimated input cost $" in detail and "test-model" in str(app.screen.query_one("#confirm-question").content)
        await pilot.press("n")
        await wait_for_sent(app, pilot, "not sent: cancelled")
        assert len(server.received) == before  # nothing went over the wire
        server.reply_text("Because, replayed.")
        await pilot.press("s")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "ConfirmSend" and app.screen.query("#confirm-yes"))
        await pilot.press("y")
        sent = await wait_for_sent(app, pilot, "Because, replayed.")
    children = child_runs(RunStore.for_project(project), run_id)
    assert len(children) == 1 and children[0]["text"] == "Because, replayed." and children[0]["id"] in sent
    assert len(server.received) == before + 1


def test_the_variants_render_user_text_as_text_not_markup() -> None:
    step = {"request": {"input_tokens": 10, "contributions": [{"contributor": "[bold]x[/]", "kind": "ladder", "representation": "full"}]}}
    document = {"identical": False, "changes": [{"kind": "status", "base": "fits", "head": "[/]"}], "cache_prefix": None,
                "replayed": {"input_tokens": 9, "status": "fits", "max_input_tokens": 100, "optimize_at": 100, "contributions": [], "left_out": ["[red]"]}}
    console = Console(width=120, record=True, color_system=None)
    console.print(render_variants(step, [("[i]label", document, None)]))
    text = console.export_text()
    assert "[bold]x[/]" in text and "[red]" in text and "[i]label" in text and "status fits -> [/]" in text


async def test_i_on_a_later_step_opens_the_prompt_view_with_that_steps_messages(tmp_path: Path) -> None:
    project = record_sample(tmp_path)
    run = RunStore.for_project(project).get(str(RunStore.for_project(project).list()[-1]["id"]))
    assert run is not None and len(run["steps"]) == 2
    wanted = run["steps"][1]["sent"]["messages"]
    assert any(m["role"] == "tool" for m in wanted)
    session = ProjectSession(project, transport=in_process, history=False, watch=False)
    app = make_tui(session)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_until(pilot, lambda: session.report is not None)
        app.open_run(run)
        await pilot.pause()
        await pilot.press("n")  # step 1: after the tool calls of step 0
        await pilot.press("i")
        planned = await wait_until(pilot, lambda: ((app.shown or {}).get("preview") or {}).get("sent") if app.busy is None else None)
        assert planned["messages"] == wanted  # the run input, then the tool calls and results before the step
        await pilot.press("minus")  # the budget keys replay it with the same messages
        smaller = await wait_until(pilot, lambda: (app.shown or {}).get("preview") if app.busy is None and app.detail.choices[run["target"]].budget else None)
        assert smaller["sent"] is None or smaller["sent"]["messages"] == wanted


async def wait_until(pilot: Any, check: Any) -> Any:
    deadline = time.monotonic() + 60  # a failure bound, not a pause
    while time.monotonic() < deadline:
        await pilot.pause()
        value = check()
        if value:
            return value
        await asyncio.sleep(0.05)
    raise AssertionError("never happened")


def old_and_gone(tmp_path: Path) -> tuple[Path, dict[str, Any], dict[str, Any], dict[str, Any]]:
    """A recorded sample project; its last run, that run as an older release wrote it (``old-run``: no
    plan inputs) and as it would be with its target gone from the source (not written)."""
    project = record_sample(tmp_path)
    run = newest_run(project)
    store = RunStore.for_project(project)
    store.write({**run, "id": "old-run"})  # as an older release wrote it: no plan inputs
    old = store.get("old-run")
    assert old is not None
    return project, run, old, {**run, "target": "deleted-agent"}


async def test_bad_input_in_the_replay_screen_is_a_clear_message(tmp_path: Path) -> None:
    project, run, old, gone = old_and_gone(tmp_path)
    session = ProjectSession(project, transport=in_process, history=False, watch=False)
    app = make_tui(session)
    async with app.run_test(size=(160, 50)) as pilot:
        await open_replay(app, pilot, old)
        text = await wait_for(app, pilot, "recorded before plan inputs were kept")
        assert "--source current" in app.screen.current[2]  # the whole message, as the column wraps it
        await pilot.press("escape", "escape")
        await open_replay(app, pilot, run)
        await wait_for(app, pilot, "identical to the recorded request")
        await pilot.press("m")  # + and - move max now (the step was planned at its optimize_at tier)
        for _ in range(8):  # max 4,000 -> 800, below what the step's required parts need
            await pilot.press("minus")
        text = await wait_for(app, pilot, "REQUEST_TOO_LARGE: nothing fits")
        assert "<messages>: " in text and " tokens" in text  # what each required part needs
        await pilot.press("escape", "escape")
        await open_replay(app, pilot, gone)
        await wait_for(app, pilot, "identical to the recorded request")
        await pilot.press("s")
        sent = await wait_for_sent(app, pilot, "not sent")
        assert "the run's target 'deleted-agent' no longer exists in the source; nothing was sent" in sent
