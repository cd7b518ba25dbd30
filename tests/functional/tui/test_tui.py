"""Pilot tests of the TUI over a fake session holding real inspections."""

from __future__ import annotations

import asyncio
import sys
import weakref
from pathlib import Path
from typing import Any

import pytest
from textual.message import Message
from textual.notifications import Notification, Notifications
from textual.pilot import Pilot

sys.path.insert(0, str(Path(__file__).parents[2]))

from tui_fakes import FakeSession, Ticket, billing, house_rules  # noqa: E402

from crux_devtools import prompt  # noqa: E402
from crux_devtools.inspector.api import SessionEvent  # noqa: E402
from crux_devtools.tui import make_tui  # noqa: E402
from crux_devtools.tui.app import CruxTui  # noqa: E402
from crux_devtools.tui.messages import ExampleEvaluated, RunFinished  # noqa: E402
from crux_devtools.tui.widgets import PromptTree  # noqa: E402
from crux_devtools.tui.widgets.system_text import SystemTextView  # noqa: E402

SIZE = (110, 34)


def screen_text(app: CruxTui) -> str:
    """What the terminal shows, as plain text lines."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def detail_lines(app: CruxTui) -> list[str]:
    """The right-hand pane only (the tree sits left of the ``▎`` border)."""
    return [line.split("▎", 1)[1] for line in screen_text(app).splitlines() if "▎" in line]


_POSTED: weakref.WeakKeyDictionary[Notifications, list[str]] = weakref.WeakKeyDictionary()
_add = Notifications.add


def _record(self: Notifications, notification: Notification) -> Notifications:
    _POSTED.setdefault(self, []).append(notification.message)
    return _add(self, notification)


Notifications.add = _record  # type: ignore[method-assign]


def notifications(app: CruxTui) -> list[str]:
    """Every notification the app posted, in order, including those whose toast has timed out (a
    loaded machine can take longer than a toast lasts between posting one and reading it)."""
    return list(_POSTED.get(app._notifications, []))


async def settle(pilot: Pilot[Any]) -> None:
    """Let posted messages, workers and the repaint that follows them all finish."""
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def resolved_view(pilot: Pilot[Any]) -> None:
    """``v``: from the request as sent (the first tab) to the resolved system text."""
    await settle(pilot)
    if pilot.app.query_one("#tabs").active != "tab-system":
        await pilot.press("v")
        await settle(pilot)


class Recorder:
    """A ``message_hook``: every message the app dispatched, in order."""

    def __init__(self) -> None:
        self.messages: list[Message] = []

    def __call__(self, message: Message) -> None:
        self.messages.append(message)

    def of(self, kind: type[Message]) -> list[Any]:
        return [m for m in self.messages if isinstance(m, kind)]


@pytest.fixture
def session() -> FakeSession:
    return FakeSession()


async def test_first_screen_lists_every_prompt_with_its_status_and_contexts(session: FakeSession) -> None:
    app = make_tui(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        text = screen_text(app)
        assert "✓ support-reply 194 tok" in text  # the first example's planned input tokens
        assert "✓ triage-agent agent" in text
        assert "└─ ● product_facts p60" in text  # nested under billing
        assert "○ tone_email ? p50" in text  # excluded for the first example, conditional
        assert "example signed-in (1/2)" in text
        assert ("start", None) in session.calls


async def test_selecting_a_prompt_posts_prompt_selected_and_shows_its_parts(session: FakeSession) -> None:
    recorder = Recorder()
    app = make_tui(session)
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        # support-reply has seven contexts under it; the eighth step down is the next prompt
        await pilot.press(*["down"] * 8)
        await settle(pilot)
        selected = recorder.of(PromptTree.PromptSelected)
        assert selected[-1].prompt_id == "triage-agent"
        assert selected[-1].context_id is None
        await resolved_view(pilot)
        text = screen_text(app)
        assert "agent  triage-agent  example default (1/1)" in text
        assert "Sort the ticket into billing, account or other." in text
        assert "house_rules · context · p90 · 11 tok" in text
        assert "You are Ari" not in text
        await pilot.click(PromptTree, offset=(6, 0))  # the mouse: back to the first prompt
        await settle(pilot)
        assert recorder.of(PromptTree.PromptSelected)[-1].prompt_id == "support-reply"
        assert "You are Ari" in screen_text(app)


async def test_the_prompt_view_owns_its_selection_and_keeps_each_prompts_choice(session: FakeSession) -> None:
    """``PromptDetail.selection`` is the one place that says what is shown: setting it re-shows the
    panes, and every prompt keeps its example and budget while the user is elsewhere."""
    from crux_devtools.tui.widgets import PromptDetail, StatusLine

    app = make_tui(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        detail = app.query_one(PromptDetail)
        await pilot.press("minus")
        await settle(pilot)
        kept = detail.selection.choice
        assert kept.budget == 110
        detail.select("triage-agent")  # the selection alone: no key, no tree
        await settle(pilot)
        assert (app.query_one(StatusLine).data or {})["prompt"]["id"] == "triage-agent"
        assert "Sort the ticket into billing, account or other." in screen_text(app)
        assert detail.selection.choice.budget is None
        detail.select("support-reply")
        await settle(pilot)
        assert detail.selection.choice == kept
        assert "token_budget 110 (set)" in screen_text(app)


async def test_selecting_a_context_highlights_its_part(session: FakeSession) -> None:
    recorder = Recorder()
    app = make_tui(session)
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        await pilot.press("down", "down")
        await settle(pilot)
        assert recorder.of(PromptTree.PromptSelected)[-1].context_id == "billing"
        assert app.detail.pane(SystemTextView).selected_part == "billing"


async def test_lowering_the_budget_drops_the_lowest_priority_context(session: FakeSession) -> None:
    recorder = Recorder()
    app = make_tui(session)
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        await pilot.press("minus")
        await settle(pilot)
        await pilot.press("minus")
        await settle(pilot)
        # 123 system tokens: -13 (10%, rounded up) then -11
        budgets = [c[1]["token_budget"] for c in session.calls if c[0] == "evaluate"]
        assert budgets == [110, 99]
        evaluated = recorder.of(ExampleEvaluated)
        assert [m.selection.choice.budget for m in evaluated] == [110, 99]
        text = screen_text(app)
        assert "token_budget 99 (set)" in text
        # the request as sent (the first tab) says what the budget dropped: it is not sent
        assert "dropped before planning (token_budget 99): product_facts p60 17 tok," in text
        assert "billing p30 67 tok" in text
        assert "billing · context" not in text
        await resolved_view(pilot)
        text = screen_text(app)
        assert "billing · context · p30 · dropped (budget) · 67 tok" in text
        assert "product_facts · context · p60→30 · dropped (parent-dropped)" in text
        assert "├─ ▼ ✂ billing p30" in text  # the tree marks the drop too
        assert "system 39 + prompt 6 = 45 tokens · budget 99 · ✓ fits" in text


class HeldEvaluation(FakeSession):
    """Its first evaluation waits until ``release`` and then answers as of before the save."""

    def __init__(self) -> None:
        super().__init__()
        self.waiting = asyncio.Event()
        self.go = asyncio.Event()

    async def evaluate(self, prompt_id: str, **kwargs: Any) -> dict[str, Any]:
        answer = await super().evaluate(prompt_id, **kwargs)
        if not self.waiting.is_set():
            self.waiting.set()
            await self.go.wait()
            assert answer["inspection"] is not None
            answer["inspection"]["system"] = "AN ANSWER FROM BEFORE THE SAVE"
        return answer


async def test_an_evaluation_answered_after_a_newer_report_is_not_shown() -> None:
    session = HeldEvaluation()
    recorder = Recorder()
    app = make_tui(session)
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        await pilot.press("minus")  # a budget: the example is evaluated again, and that answer is held
        await session.waiting.wait()
        await session.reload()  # a save: the new report's evaluation answers at once
        await pilot.pause()
        while len(recorder.of(ExampleEvaluated)) < 1:
            await pilot.pause()
        newer = app.detail.shown
        assert newer is not None and newer["inspection"] is not None
        session.go.set()
        await settle(pilot)
        assert len(recorder.of(ExampleEvaluated)) == 2  # the held answer did arrive, after the newer one
        assert app.detail.shown is newer
        assert "AN ANSWER FROM BEFORE THE SAVE" not in screen_text(app)


async def test_raising_and_clearing_the_budget_restores_the_full_text(session: FakeSession) -> None:
    app = make_tui(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("minus")
        await settle(pilot)
        await pilot.press("minus")
        await settle(pilot)
        await pilot.press("plus")
        await settle(pilot)
        assert app.detail.choices["support-reply"].budget == 99 + 10
        await resolved_view(pilot)
        assert "dropped (budget)" in screen_text(app)
        await pilot.press("0")
        await settle(pilot)
        text = screen_text(app)
        assert "token_budget none" in text
        assert "dropped (budget)" not in text
        assert "billing · context · p30 · 67 tok" in text


async def test_an_agents_budget_keys_limit_the_request_and_b_switches_to_the_system_text(session: FakeSession) -> None:
    app = make_tui(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.query_one(PromptTree).select_prompt("triage-agent")
        await settle(pilot)
        assert "input 33 of 5,292 ✓ fits" in screen_text(app) and "input budget none" in screen_text(app)
        await pilot.press("minus")  # from the planned request's limit, 5292: -530
        await settle(pilot)
        calls = [c[1] for c in session.calls if c[0] == "evaluate"]
        assert calls[-1] == {"prompt_id": "triage-agent", "example": "default", "token_budget": None, "input_budget": 4762}
        assert "input 33 of 4,762 ✓ fits" in screen_text(app) and "input budget 4,762 (set)" in screen_text(app)
        await pilot.press("b")
        await settle(pilot)
        assert "token_budget none" in screen_text(app)
        assert notifications(app)[-1] == "Budget keys now limit the system text"
        await pilot.press("minus")  # now from the system text's tokens
        await settle(pilot)
        last = [c[1] for c in session.calls if c[0] == "evaluate"][-1]
        assert "input_budget" not in last and last["token_budget"] is not None and last["token_budget"] < 4762


def test_the_system_tab_names_what_the_planner_adapted() -> None:
    from rich.console import Console

    from crux_devtools.tui.widgets.system_text import render_system

    part = {"source": "sync-log", "kind": "context", "status": "active", "tokens": 900, "priority": 50, "text": "log..."}
    preview = {"input_tokens": 2390, "max_input_tokens": 3856, "adaptations": [{"contributor": "sync-log", "representation": "offload"}]}
    example = {"inspection": {"parts": [part], "system_tokens": 900, "prompt": None, "fits": True, "token_budget": None}, "preview": preview}
    console = Console(width=140, record=True, color_system=None)
    console.print(render_system(example, None))
    assert "planned request 2,390 of max 3,856 tokens · sync-log → offload (full text below; see Planning)" in console.export_text()


async def test_next_example_switches_the_match_branch(session: FakeSession) -> None:
    app = make_tui(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("e")
        await resolved_view(pilot)
        text = screen_text(app)
        assert "example anonymous (2/2)" in text
        assert "Write a complete, formal email." in text
        assert "match selected 'email'; this branch is 'chat'" in text
        assert "account · context · p70 · excluded (when)" in text


async def test_contributors_tab_lists_statuses_and_reasons(session: FakeSession) -> None:
    app = make_tui(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("minus", "minus")
        await settle(pilot)
        await pilot.click("#tabs Tab#--content-tab-tab-contributors")
        await settle(pilot)
        lines = detail_lines(app)
        row = next(line for line in lines if " billing " in line)
        assert "✂ dropped" in row and "budget" in row and "67" in row
        row = next(line for line in lines if "tone_email" in line)
        assert "○ excluded" in row and "match · match selected" in row


async def test_tools_tab_names_sources_and_planning_tab_says_when_there_is_no_plan(session: FakeSession) -> None:
    app = make_tui(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.query_one("#tabs").active = "tab-tools"
        await settle(pilot)
        tokens = session.report["prompts"][0]["examples"][0]["preview"]["tool_tokens"]["lookup_order"]
        row = next(line for line in detail_lines(app) if "lookup_order" in line)
        assert "billing" in row and "yes" in row and row.rstrip().endswith(str(tokens))
        broken = session.report["prompts"][0]["examples"][0]
        broken["preview"], broken["preview_error"] = None, {"code": "INVALID_COMPOSITION", "message": "no plan", "diagnostics": [], "request_id": None}
        app.query_one(PromptTree).select_prompt("triage-agent")
        await settle(pilot)
        app.query_one(PromptTree).select_prompt("support-reply")
        await settle(pilot)
        app.query_one("#tabs").active = "tab-planning"
        await settle(pilot)
        assert "planning not available" in screen_text(app)
        assert "INVALID_COMPOSITION: no plan" in screen_text(app)


async def test_running_an_agent_shows_its_receipts_per_step_and_a_plain_prompt_cannot_run(session: FakeSession) -> None:
    recorder = Recorder()
    app = make_tui(session)
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await settle(pilot)
        await pilot.press("r")  # support-reply is a plain prompt
        await settle(pilot)
        assert not [c for c in session.calls if c[0] == "run"]
        assert any("Only an agent with a model can be run" in n for n in notifications(app))
        app.query_one(PromptTree).select_prompt("triage-agent")
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        assert ("run", {"prompt_id": "triage-agent", "example": "default"}) in session.calls
        assert [m.prompt_id for m in recorder.of(RunFinished)] == ["triage-agent"]
        # the run's detail opens over the main view
        text = screen_text(app)
        assert "Step 0   61 input tokens (ours)  provider usage not reported" in text
        assert "answer This looks like a billing ticket." in text
        await pilot.press("escape")  # back: the Runs tab lists it (history off: this session's runs)
        await settle(pilot)
        assert app.query_one("#tabs").active == "tab-runs"
        text = screen_text(app)
        assert "Run history is off" in text
        assert "triage-agent agent  inspector  ✓ ok" in text


async def test_open_source_reports_file_and_line_without_launching_an_editor(session: FakeSession, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EDITOR", raising=False)
    app = make_tui(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("o")
        await settle(pilot)
        assert notifications(app)[-1] == "support.py:10"
        await pilot.press("down")  # house_rules: its own location is unknown to the fake engine
        await pilot.press("o")
        await settle(pilot)
        assert notifications(app)[-1] == "support.py:10 (where house_rules is used)"


async def test_a_saved_file_updates_the_screen_and_says_what_changed(session: FakeSession) -> None:
    app = make_tui(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        edited = prompt(
            "support-reply",
            system="You are Ari, now answering in French.",
            input=Ticket,
            use=[house_rules, billing],
            prompt=lambda i: i.message,
            examples={"signed-in": {"message": "Bonjour"}},
        )
        session.replace_prompt(edited, summary="support.py changed: support-reply")
        await settle(pilot)
        text = screen_text(app)
        assert "You are Ari, now answering in French." in text
        assert "support.py changed: support-reply\nchanged: support-reply" in notifications(app)


async def test_a_save_that_keeps_the_trees_shape_relabels_it_in_place(session: FakeSession) -> None:
    app = make_tui(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tree = app.query_one(PromptTree)
        first = tree.root.children[0]
        last = tree.root.children[-1]
        last.collapse()  # the user's collapsed prompt must stay collapsed
        before = first.label.plain
        original = session.prompts["support-reply"]
        edited = prompt(
            "support-reply",
            system="You are Ari, now answering in French, with a longer instruction than before.",
            input=Ticket,
            use=list(original.use),
            prompt=lambda i: i.message,
            examples=original.examples,
        )
        session.replace_prompt(edited, summary="support.py changed: support-reply")
        await settle(pilot)
        assert tree.root.children[0] is first  # the same node, not a rebuilt tree
        assert first.label.plain != before and first.label.plain.startswith("✓ support-reply ")
        assert not tree.root.children[-1].is_expanded


async def test_a_burst_of_session_events_collapses_into_one_update(session: FakeSession) -> None:
    app = make_tui(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        before = len(notifications(app))
        for version in range(2, 7):
            session.emit(SessionEvent("report", version, f"change {version}"))
        await settle(pilot)
        assert notifications(app)[before:] == ["change 6"]


async def test_a_broken_file_shows_the_error_and_keeps_the_last_good_view_marked_stale(session: FakeSession) -> None:
    app = make_tui(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        session.break_project(
            {
                "file": "support.py",
                "line": 7,
                "type": "SyntaxError",
                "message": "invalid syntax",
                "traceback": 'File "support.py", line 7\n    def (\n        ^',
            }
        )
        await settle(pilot)
        text = screen_text(app)
        assert "◌ STALE: last load failed" in text
        assert "◌ support-reply stale" in text
        assert "You are Ari, a support agent for Nimbus cloud storage." in text  # the last good view
        assert "Errors (1)" in text
        assert any("support.py:7: SyntaxError" in n for n in notifications(app))
        app.query_one("#tabs").active = "tab-errors"
        await settle(pilot)
        text = screen_text(app)
        assert "support.py:7  SyntaxError" in text
        assert "invalid syntax" in text
        assert "def (" in text


async def test_at_80_columns_the_header_and_the_tab_bar_both_show_the_load_errors(session: FakeSession) -> None:
    app = make_tui(session)
    async with app.run_test(size=(80, 30)) as pilot:
        await settle(pilot)
        assert "load error" not in screen_text(app).splitlines()[0]
        session.break_project({"file": "support.py", "line": 7, "type": "SyntaxError", "message": "invalid syntax", "traceback": ""})
        await settle(pilot)
        header, tab_bar = screen_text(app).splitlines()[0], next(line for line in screen_text(app).splitlines() if "Req" in line)
        assert "Err 1" in tab_bar  # too narrow for the full labels: the short ones keep the Errors tab in sight
        assert "✗ 1 load error (key 7)" in header
        await pilot.press("7")
        await settle(pilot)
        assert app.query_one("#tabs").active == "tab-errors"
        assert "support.py:7  SyntaxError" in screen_text(app)


async def test_reload_key_reloads_and_quitting_stops_the_session(session: FakeSession) -> None:
    app = make_tui(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert ("reload", None) in session.calls
        assert "Reloaded the project" in notifications(app)
        assert ("stop", None) not in session.calls
        await pilot.press("q")
        await pilot.pause()
    assert ("stop", None) in session.calls


async def test_a_prompt_that_failed_to_evaluate_shows_its_error(session: FakeSession) -> None:
    report = session.build_report()
    broken = report["prompts"][1]
    broken["status"] = "error"
    broken["examples"] = [{"name": "default", "input": {}, "status": "error", "error": {"file": "support.py", "line": 3, "type": "ZeroDivisionError", "message": "division by zero", "traceback": "Traceback ..."}, "inspection": None, "preview": None, "preview_error": None, "summaries": []}]
    session._report = report
    app = make_tui(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.query_one(PromptTree).select_prompt("triage-agent")
        await settle(pilot)
        text = screen_text(app)
        assert "✗ triage-agent agent error" in text
        assert "example default (1/1)  ✗ error" in text  # the status line
        assert "No request: this example failed (see the Errors tab)." in text
        assert "Errors (1)" in text
        await resolved_view(pilot)
        assert "No inspection for this example (see the Errors tab)." in screen_text(app)


def test_importing_the_package_does_not_load_textual() -> None:
    import subprocess

    code = "import sys, crux_devtools; print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_editor_command_opens_the_file_at_the_line_only_when_editor_is_set() -> None:
    from crux_devtools.tui.editor import editor_command
    from crux_devtools.tui.report import SourceLocation

    where = SourceLocation("lessons/01.py", 22, "prompt support-reply", True)
    root = Path("/project")
    assert editor_command(where, root, {}) is None
    assert editor_command(where, root, {"EDITOR": "  "}) is None
    assert editor_command(where, root, {"EDITOR": "vim -p"}) == ["vim", "-p", "+22", "/project/lessons/01.py"]


def test_budget_steps_are_a_tenth_of_the_current_total_and_never_below_one() -> None:
    from crux_devtools.tui.report import step_budget

    example = {"inspection": {"system_tokens": 123, "total_tokens": 129}}
    assert step_budget(example, None, -1) == 110
    assert step_budget(example, None, 1) == 136
    assert step_budget(example, 99, -1) == 89
    assert step_budget(example, 1, -1) == 1
    assert step_budget({"inspection": None}, None, -1) is None


def test_status_line_names_the_budget_in_force_and_never_says_none_when_there_is_one() -> None:
    from crux_devtools.tui.widgets.status_line import status_text

    shown = {"status": "fits", "inspection": {"token_budget": 150, "fits": True}, "preview": {"input_tokens": 222, "max_input_tokens": 5292, "status": "fits"}, "preview_error": None}
    prompt = {"id": "budgeted-reply", "kind": "prompt", "default_budget": None}
    line = status_text(prompt, "a", ["a"], None, False, None, "system", shown).plain
    assert "input 222 of 5,292 ✓ fits  token_budget 150 (prompt)" in line
    assert "token_budget 90 (set)" in status_text(prompt, "a", ["a"], 90, False, None, "system", shown).plain
    agent = {"id": "support-agent", "kind": "agent", "default_budget": 4000}
    assert "input budget 4,000 (agent)" in status_text(agent, "a", ["a"], None, False, None, "request", shown).plain
    assert "input budget none" in status_text({"id": "p", "kind": "prompt", "default_budget": None}, None, [], None, False, None, "request").plain
    over = {**shown, "status": "over-budget", "inspection": {"token_budget": 10, "fits": False}}
    line = status_text(prompt, "a", ["a"], None, False, None, "system", over).plain
    assert "▲ over budget" in line and "fits" not in line
    too_big = {"status": "over-limit", "inspection": {"fits": True}, "preview": {"input_tokens": 9000, "max_input_tokens": 5292, "status": "over-limit"}, "preview_error": None}
    line = status_text(prompt, "a", ["a"], None, False, None, "system", too_big).plain
    assert "input 9,000 of 5,292 ▲ over limit" in line and "fits" not in line


async def test_a_new_report_that_leaves_the_shown_prompt_unchanged_does_not_redraw_its_panes(session: FakeSession, monkeypatch: pytest.MonkeyPatch) -> None:
    renders: list[object] = []
    original = SystemTextView.watch_data

    def counting_watch(self: SystemTextView) -> None:
        renders.append(self.data)
        original(self)

    monkeypatch.setattr(SystemTextView, "watch_data", counting_watch)
    app = make_tui(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        before = len(renders)
        assert before >= 1
        await session.reload()  # a fresh report, equal for the prompt on screen
        await settle(pilot)
        assert len(renders) == before
        edited = prompt("support-reply", system="Now in French.", input=Ticket, use=[house_rules, billing], prompt=lambda i: i.message, examples={"signed-in": {"message": "Bonjour"}})
        session.replace_prompt(edited)
        await settle(pilot)
        assert len(renders) == before + 1
        assert "Now in French." in screen_text(app)


def test_the_system_tab_shows_what_a_memory_read_above_its_text() -> None:
    from rich.console import Console

    from crux_devtools.tui.widgets.system_text import render_system

    part = {
        "source": "team-memory", "kind": "memory", "status": "active", "tokens": 12, "priority": 50,
        "text": "## Facts\n- Acme exports time out over 2 GB",
        "detail": "namespace 'acme': facts: 9 matching facts, 1 shown, 8 left out by the 50-token budget",
    }
    example = {"inspection": {"parts": [part], "system_tokens": 12, "prompt": None, "fits": True, "token_budget": None}}
    console = Console(width=120, record=True, color_system=None)
    console.print(render_system(example, None))
    screen = console.export_text()
    assert screen.index("8 left out by the 50-token budget") < screen.index("- Acme exports time out over 2 GB")


async def test_a_report_that_follows_its_loading_event_at_once_never_shows_loading(session: FakeSession, monkeypatch: pytest.MonkeyPatch) -> None:
    """A save's report usually comes within a frame of its "loading" event: the status line then
    goes straight to the new report (no "loading" frame). Tested by the events' order: the delay
    before "loading" is shown is set longer than the test, so the report surely comes first."""
    import crux_devtools.tui.app as tui_app

    monkeypatch.setattr(tui_app, "LOADING_SHOWN_AFTER", 3600, raising=False)
    app = make_tui(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        seen: list[str | None] = []
        app.watch(app.detail, "busy", seen.append, init=False)
        session.emit(SessionEvent("loading", 1, "Re-evaluating the changed modules…", ["support.py"]))
        await settle(pilot)
        assert app.busy is None and seen == []  # nothing shown yet: the report may follow within a frame
        session.emit(SessionEvent("report", 2, "support.py changed", ["support.py"], []))
        await settle(pilot)
        assert "loading" not in seen and app.busy is None
        assert app._loading is None  # the timer that would show "loading" is cancelled


async def test_loading_is_shown_when_no_report_follows(session: FakeSession, monkeypatch: pytest.MonkeyPatch) -> None:
    """With no report after the delay, the status line says "loading" until the report comes."""
    import crux_devtools.tui.app as tui_app

    monkeypatch.setattr(tui_app, "LOADING_SHOWN_AFTER", 0.001)
    app = make_tui(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        session.emit(SessionEvent("loading", 1, "Re-evaluating the changed modules…", ["support.py"]))
        for _ in range(6000):  # the timer's turn comes: a failure bound only
            if app.busy == "loading":
                break
            await pilot.pause(0.01)
        assert app.busy == "loading"
        assert "loading" in screen_text(app)
        session.emit(SessionEvent("report", 2, "support.py changed", ["support.py"], []))
        await settle(pilot)
        assert app.busy is None and "loading" not in screen_text(app)


async def test_a_hidden_tab_is_composed_when_first_shown_with_what_it_would_have_shown(session: FakeSession) -> None:
    """The first frame composes only the tab on screen (and Runs, whose title counts runs): the
    others are mounted on first show, with the data handed to them meanwhile."""
    from textual.widgets import TabbedContent

    from crux_devtools.tui.widgets import ErrorsView, PlanningView, ToolsView

    app = make_tui(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert not app.detail.pane(ToolsView).is_attached and not app.detail.pane(ErrorsView).is_attached
        assert app.detail.pane(SystemTextView).data is app.shown  # handed its data all the same
        session.break_project({"file": "support.py", "line": 7, "type": "SyntaxError", "message": "invalid syntax", "traceback": ""})
        await settle(pilot)
        assert "Errors (1)" in screen_text(app)  # the title is right before the tab is opened
        app.query_one(TabbedContent).active = "tab-errors"
        await settle(pilot)
        assert app.detail.pane(ErrorsView).is_attached
        assert "support.py:7  SyntaxError" in screen_text(app)
        app.query_one(TabbedContent).active = "tab-planning"
        await settle(pilot)
        assert app.detail.pane(PlanningView).is_attached and "Plan:" in screen_text(app)


async def test_the_tree_measures_each_label_as_it_renders_it(session: FakeSession) -> None:
    """``PromptTree`` measures labels without rendering them: the widths agree with the rendered
    labels, for prompts (expanded and collapsed), contexts and highlighted matches."""
    from textual.widgets import Tree

    app = make_tui(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tree = app.query_one(PromptTree)
        tree.root.children[-1].collapse()
        tree.highlight("support")
        await settle(pilot)
        nodes = tree._walk(tree.root)
        assert any(n.allow_expand and not n.is_expanded for n in nodes) and any(not n.allow_expand for n in nodes)
        for node in nodes:
            assert tree.get_label_width(node) == Tree.get_label_width(tree, node), node.label


async def test_the_footer_is_redrawn_only_when_its_keys_change(session: FakeSession) -> None:
    """Bindings updates that leave the keys as they were (a ``refresh_bindings``, a focus moving
    between widgets with the same keys) keep the footer's widgets; new keys are shown."""
    from textual.widgets import Footer

    app = make_tui(session)
    async with app.run_test(size=(160, 34)) as pilot:
        await settle(pilot)
        footer = app.query_one(Footer)
        keys = list(footer.children)
        assert keys and "Filter runs" not in screen_text(app)
        for _ in range(3):
            app.refresh_bindings()
            await settle(pilot)
        assert list(footer.children) == keys  # the same widgets: not composed again
        app.action_show_tab(6)  # Runs: its table takes the focus, and its keys are shown
        await settle(pilot)
        assert "Filter runs" in screen_text(app)
