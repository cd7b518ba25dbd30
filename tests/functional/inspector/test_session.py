"""ProjectSession: first load, stale reports, live reloads, coalescing, evaluate, isolation."""

from __future__ import annotations

import asyncio
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from waits import WAIT, watcher_caught_up

from crux_devtools.inspector.api import SessionEvent
from crux_devtools.inspector.session.service import ProjectSession
from crux_devtools.inspector.session.watcher import is_relevant
from crux_devtools.inspector.transport.inprocess import in_process

PROJECTS = Path(__file__).parents[2] / "projects"
GOOD = "from crux_devtools import prompt\n\nhello = prompt('hello', system={text!r})\n"
MARK = "watch-mark.txt"  # written last, named in watch_ignore: see ``waits.watcher_caught_up``


async def until(predicate: Callable[[], bool], timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)


def project(tmp_path: Path, text: str = "Hello.") -> Path:
    (tmp_path / "hello_prompts.py").write_text(GOOD.format(text=text), encoding="utf-8")
    return tmp_path


def system(session: ProjectSession) -> str:
    assert session.report is not None
    return session.report["prompts"][0]["examples"][0]["inspection"]["system"]


async def test_the_first_report_has_the_contract_shape_and_user_code_stays_out_of_this_process(tmp_path: Path) -> None:
    async with ProjectSession(project(tmp_path), watch=False, history=False, prewarm=False) as session:
        report = session.report
    assert report is not None
    assert set(report) >= {"version", "project", "generated_at", "duration_ms", "stale", "errors", "prompts", "hash"}
    assert (report["version"], report["stale"], report["errors"]) == (1, False, [])
    assert report["project"] == str(tmp_path.resolve())
    [hello] = report["prompts"]
    assert (hello["id"], hello["status"], hello["line"]) == ("hello", "fits", 3)
    assert "hello_prompts" not in sys.modules


async def test_a_broken_save_keeps_the_last_good_report_marked_stale_and_a_fix_clears_it(tmp_path: Path) -> None:
    root = project(tmp_path)
    events: list[SessionEvent] = []
    async with ProjectSession(root, transport=in_process, watch=False, history=False, prewarm=False) as session:
        session.subscribe(events.append)
        (root / "hello_prompts.py").write_text("from crux_devtools import prompt\nhello = prompt('hello', system='x'\n", encoding="utf-8")
        await session.reload(["hello_prompts.py"])
        stale = session.report
        (root / "hello_prompts.py").write_text(GOOD.format(text="Fixed."), encoding="utf-8")
        await session.reload()
        fixed = session.report
    assert stale is not None and fixed is not None
    assert stale["stale"] is True and stale["version"] == 2
    assert stale["prompts"][0]["examples"][0]["inspection"]["system"] == "Hello."
    [error] = stale["errors"]
    assert (error["file"], error["line"], error["type"]) == ("hello_prompts.py", 2, "SyntaxError")
    assert (fixed["stale"], fixed["errors"], fixed["version"]) == (False, [], 3)
    assert fixed["prompts"][0]["examples"][0]["inspection"]["system"] == "Fixed."
    assert [e.kind for e in events] == ["loading", "error", "loading", "report"]
    assert events[1].summary.startswith("hello_prompts.py:2: SyntaxError")
    assert events[3].changed_prompts == ["hello"]


async def test_saving_a_watched_file_produces_a_new_report_without_a_manual_reload(tmp_path: Path) -> None:
    root = project(tmp_path)
    async with ProjectSession(root, transport=in_process, debounce=0.02, history=False) as session:
        (root / "hello_prompts.py").write_text(GOOD.format(text="Saved."), encoding="utf-8")
        await until(lambda: system(session) == "Saved.")
        assert session.report is not None and session.report["version"] == 2


async def test_a_burst_of_200_saves_gives_at_most_a_few_evaluations_and_ends_on_the_last_text(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "pyproject.toml").write_text(f'[tool.crux-devtools]\nwatch_ignore = ["{MARK}"]\n', encoding="utf-8")
    async with ProjectSession(root, transport=in_process, debounce=0.05, history=False) as session:
        before = session.evaluations
        for i in range(200):
            (root / "hello_prompts.py").write_text(GOOD.format(text=f"Save {i}."), encoding="utf-8")
        await until(lambda: system(session) == "Save 199.")
        await watcher_caught_up(session, MARK)  # every save's events reached the session, and their evaluations are done
        assert session.evaluations - before <= 3


def test_tool_state_caches_and_venvs_are_not_watched(tmp_path: Path) -> None:
    for ignored in (".crux/devtools.sqlite3", "__pycache__/a.cpython-311.pyc", ".venv/lib/x.py", ".git/index", "data/store.sqlite3-wal", "notes.swp"):
        assert not is_relevant(tmp_path, str(tmp_path / ignored)), ignored
    for relevant in ("prompts.py", "skills/SKILL.md", "pyproject.toml"):
        assert is_relevant(tmp_path, str(tmp_path / relevant)), relevant


async def test_evaluate_applies_a_budget_and_custom_input_in_the_worker() -> None:
    async with ProjectSession(PROJECTS / "good", transport=in_process, watch=False, history=False, prewarm=False) as session:
        dropped = await session.evaluate("support", example="expert", token_budget=12)
        custom = await session.evaluate("support", input={"question": "q", "tone": "curt"})
        missing = await session.evaluate("nobody")
        planned = await session.evaluate("support", example="basic", input_budget=5000)
    assert [d["id"] for d in dropped["inspection"]["dropped_contexts"]] == ["expert"]
    assert planned["preview"]["max_input_tokens"] == 5000 and planned["preview"]["status"] == "fits"
    assert "curt" in custom["inspection"]["system"]
    assert missing["error"]["type"] == "KeyError" and "known ids" in missing["error"]["message"]


async def test_a_hanging_callback_times_out_and_the_next_evaluate_uses_a_fresh_worker(tmp_path: Path) -> None:
    (tmp_path / "slow.py").write_text(
        "from pydantic import BaseModel\nfrom crux_devtools import prompt\n\n"
        "class I(BaseModel):\n    hang: bool = False\n\n"
        "def text(i):\n    while i.hang:\n        pass\n    return 'ok'\n\n"
        "slow = prompt('slow', system=text, input=I)\n",
        encoding="utf-8",
    )
    async with ProjectSession(tmp_path, watch=False, history=False, timeout=1.0, prewarm=False) as session:
        hung = await session.evaluate("slow", input={"hang": True})
        fine = await session.evaluate("slow", input={"hang": False})
    assert hung["error"]["type"] == "TimeoutError"
    assert (hung["error"]["file"], hung["error"]["line"]) in {("slow.py", 8), ("slow.py", 9)}
    assert fine["error"] is None and fine["inspection"]["system"] == "ok"


async def test_a_first_load_that_hangs_reports_the_timeout_and_the_session_keeps_running(tmp_path: Path) -> None:
    shutil.copy(PROJECTS / "infinite_loop" / "prompts.py", tmp_path / "prompts.py")
    async with ProjectSession(tmp_path, watch=False, history=False, timeout=1.0, prewarm=False) as session:
        assert session.report is not None
        assert session.report["errors"][0]["type"] == "TimeoutError"
        (tmp_path / "prompts.py").write_text(GOOD.format(text="Recovered."), encoding="utf-8")
        await session.reload()
        assert system(session) == "Recovered."


async def test_a_folder_without_prompts_says_so_and_how_to_add_one() -> None:
    async with ProjectSession(PROJECTS / "empty", transport=in_process, watch=False, history=False, prewarm=False) as session:
        report = session.report
    assert report is not None and report["prompts"] == [] and report["errors"] == []
    assert "No prompts found" in report["notice"] and "[tool.crux-devtools]" in report["notice"]


async def test_async_subscribers_are_awaited_and_unsubscribing_stops_events(tmp_path: Path) -> None:
    seen: list[str] = []

    async def remember(event: SessionEvent) -> None:
        seen.append(event.kind)

    later: list[str] = []  # a subscriber that stays: once it has an event, the first had its chance too

    async def stays(event: SessionEvent) -> None:
        later.append(event.kind)

    async with ProjectSession(project(tmp_path), transport=in_process, watch=False, history=False, prewarm=False) as session:
        unsubscribe = session.subscribe(remember)
        session.subscribe(stays)
        await session.reload()
        await until(lambda: later == ["loading", "report"])
        assert seen == ["loading", "report"]
        unsubscribe()
        await session.reload()
        await until(lambda: later == ["loading", "report"] * 2)
    assert seen == ["loading", "report"]


async def test_previous_system_returns_the_text_before_the_last_change(tmp_path: Path) -> None:
    root = project(tmp_path, "First.")
    async with ProjectSession(root, transport=in_process, watch=False, prewarm=False) as session:
        assert session.previous_system("hello", "empty") is None
        (root / "hello_prompts.py").write_text(GOOD.format(text="Second."), encoding="utf-8")
        await session.reload()
        await session.reload()  # same content again: not a new distinct report
        assert session.previous_system("hello", "empty") == "First."
    assert (root / ".crux" / "devtools.sqlite3").is_file()
    # A later session finds the earlier version in the history file.
    async with ProjectSession(root, transport=in_process, watch=False, prewarm=False) as later:
        assert later.previous_system("hello", "empty") == "First."


@pytest.mark.parametrize("history", [False])
async def test_previous_system_works_without_a_history_file(tmp_path: Path, history: bool) -> None:
    root = project(tmp_path, "One.")
    async with ProjectSession(root, transport=in_process, watch=False, history=history, prewarm=False) as session:
        (root / "hello_prompts.py").write_text(GOOD.format(text="Two."), encoding="utf-8")
        await session.reload()
        assert session.previous_system("hello", "empty") == "One."
    assert not (root / ".crux").exists()


async def test_an_agent_is_reported_with_its_budget_and_runs_in_the_worker(tmp_path: Path) -> None:
    (tmp_path / "bot.py").write_text(
        "from crux_devtools import InputBudget, ScriptedModel, agent, prompt\n\n"
        "chat = prompt('chat', system='Be brief.', examples={'hi': {}})\n"
        "bot = agent('bot', prompt=chat, model=ScriptedModel(['Hello there.']), input_budget=InputBudget(max=900))\n",
        encoding="utf-8",
    )
    async with ProjectSession(tmp_path, transport=in_process, watch=False, history=False, prewarm=False) as session:
        assert session.report is not None
        reports = {p["id"]: p for p in session.report["prompts"]}
        result = await session.run("bot", example="hi")
        refused = await session.run("chat")
    bot = reports["bot"]
    assert (bot["kind"], bot["has_model"], bot["default_budget"], bot["line"]) == ("agent", True, 900, 4)
    assert bot["examples"][0]["preview"]["status"] == "fits"
    assert result["error"] is None and result["text"] == "Hello there."
    assert len(result["steps"]) == 1 and result["steps"][0]["request"]["model"]
    assert refused["error"]["type"] == "NotRunnable"


def test_the_session_process_does_not_load_the_core_and_the_package_still_exports_every_name() -> None:
    import subprocess
    import sys

    code = (
        "import sys, crux_devtools.inspector.session.service, crux_devtools.cli\n"
        "assert 'crux_devtools.core' not in sys.modules and 'pydantic' not in sys.modules, sorted(sys.modules)\n"
        "import crux_devtools, crux_devtools.core as core\n"
        "assert crux_devtools.__all__ == core.__all__\n"
        "assert all(getattr(crux_devtools, n) is getattr(core, n) for n in core.__all__)\n"
        "from crux_devtools import *\n"
        "print(prompt('p', system='hi').inspect().system_tokens)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1"
