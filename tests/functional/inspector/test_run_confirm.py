"""A Run's confirmation is decided in the worker, against the model that will run, not the one shown.

A save that switches an agent from a ``ScriptedModel`` to a real model may land after the front end
looked at the shown report and before the worker runs: the real model must not be called unasked.
Here the save lands exactly there (the session applies it, awaited, inside ``run`` before the job
reaches the real worker), over the web page and the TUI.
"""

from __future__ import annotations

import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).parents[2]))

from test_tui import screen_text, settle  # noqa: E402

from crux_devtools.core.record.runstore import RunStore  # noqa: E402
from crux_devtools.inspector.session.service import ProjectSession  # noqa: E402
from crux_devtools.tui import make_tui  # noqa: E402
from crux_devtools.tui.screens import ConfirmRun, RunDetailScreen  # noqa: E402
from crux_devtools.web.app import create_app  # noqa: E402

AGENTS = '''
from pathlib import Path

from crux_devtools import ScriptedModel, agent, prompt


class Costly:
    """Stands for a paid model: every call leaves a mark on disk."""

    def __init__(self, name):
        self.name = name

    def complete(self, request):
        with open(Path(__file__).with_name("CALLED"), "a") as marks:
            marks.write(self.name + "\\n")
        return ScriptedModel(["billed answer"]).complete(request)


ask = prompt("ask", system="Answer briefly.", prompt="Where is my parcel?", examples={"first": {}})
bot = agent("bot", prompt=ask, model=MODEL)
'''
SCRIPTED = 'ScriptedModel(["free answer"])'


def agents(model: str) -> str:
    return AGENTS.replace("MODEL", model)


class SaveLandsDuringRun(ProjectSession):
    """The project session, with a save applied (and awaited) after the front end checked the shown
    report and before the Run reaches the worker: the race, made deterministic."""

    saves: list[str]

    async def run(self, prompt_id: str, **kwargs: Any) -> dict[str, Any]:
        if self.saves:
            (self.root / "agents.py").write_text(agents(self.saves.pop(0)))
            await self.reload(["agents.py"])
        return await super().run(prompt_id, **kwargs)


@pytest.fixture
async def session(tmp_path: Path) -> AsyncIterator[SaveLandsDuringRun]:
    (tmp_path / "agents.py").write_text(agents(SCRIPTED))
    project = SaveLandsDuringRun(tmp_path, watch=False, history=False, prewarm=False)
    project.saves = []
    await project.start()
    try:
        yield project
    finally:
        await project.stop()


def shown_kind(session: ProjectSession) -> str | None:
    report = session.report
    assert report is not None
    return next(p["model_kind"] for p in report["prompts"] if p["id"] == "bot")


def called(session: ProjectSession) -> list[str]:
    marks = session.root / "CALLED"
    return marks.read_text().split() if marks.exists() else []


def token_of(page: str) -> str:
    found = re.search(r'hx-vals=\'\{&#34;confirm&#34;: &#34;([0-9a-f]+)&#34;\}\'|hx-vals=\'\{"confirm": "([0-9a-f]+)"\}\'', page)
    assert found is not None, page
    return found.group(1) or found.group(2)


async def test_web_a_save_switching_to_a_real_model_during_a_run_asks_before_calling_it(session: SaveLandsDuringRun) -> None:
    assert shown_kind(session) == "scripted"  # what the page shows when Run is pressed
    app = create_app(session, manage_session=False)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:4400") as client:
        session.saves = ['Costly("costly-a")']
        first = await client.post("/prompts/bot/run", data={"example": "first"})
        assert first.status_code == 200
        assert called(session) == []  # the real model was not called
        assert 'id="run-confirm"' in first.text and "costly-a" in first.text
        assert RunStore.for_project(session.root, create=False).list() == []
        token_a = token_of(first.text)

        # confirmed for costly-a, but another save switches to costly-b before the confirm arrives
        session.saves = ['Costly("costly-b")']
        again = await client.post("/prompts/bot/run", data={"example": "first", "confirm": token_a})
        assert called(session) == [] and 'id="run-confirm"' in again.text and "costly-b" in again.text
        token_b = token_of(again.text)
        assert token_b != token_a

        done = await client.post("/prompts/bot/run", data={"example": "first", "confirm": token_b})
        assert 'id="run-recorded"' in done.text and "billed answer" in done.text
        assert called(session) == ["costly-b"]


async def test_web_a_scripted_model_runs_at_once_and_a_token_is_stable_across_an_unchanged_save(session: SaveLandsDuringRun) -> None:
    app = create_app(session, manage_session=False)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:4400") as client:
        free = await client.post("/prompts/bot/run", data={"example": "first"})
        assert 'id="run-recorded"' in free.text and "free answer" in free.text
        session.saves = ['Costly("costly-a")']
        token = token_of((await client.post("/prompts/bot/run", data={"example": "first"})).text)
        session.saves = ['Costly("costly-a")']  # saved again, the same model: the confirmation still holds
        done = await client.post("/prompts/bot/run", data={"example": "first", "confirm": token})
        assert 'id="run-recorded"' in done.text and called(session) == ["costly-a"]


async def test_tui_a_save_switching_to_a_real_model_during_a_run_asks_before_calling_it(session: SaveLandsDuringRun) -> None:
    from crux_devtools.tui.widgets import PromptTree

    assert shown_kind(session) == "scripted"
    app = make_tui(session, starting=_already_started())
    async with app.run_test(size=(150, 50)) as pilot:
        await settle(pilot)
        app.query_one(PromptTree).select_prompt("bot")
        await settle(pilot)
        session.saves = ['Costly("costly-a")']
        await pilot.press("r")
        await screen_shown(pilot, app, ConfirmRun)
        assert called(session) == []
        assert "Run bot for real?" in screen_text(app) and "model: costly-a" in screen_text(app)
        await pilot.press("y")
        await screen_shown(pilot, app, RunDetailScreen)
        assert called(session) == ["costly-a"]
        await pilot.press("q")


async def screen_shown(pilot: Any, app: Any, kind: type) -> None:
    """Wait (60 s at most: a failure bound, not a pause) until the app shows a screen of ``kind``, drawn:
    a pushed screen is ``app.screen`` a frame before its text is on the terminal."""
    for _ in range(1200):
        await pilot.pause(0.05)
        if isinstance(app.screen, kind) and screen_text(app).strip():
            return
    raise AssertionError(f"{kind.__name__} was not shown; the screen is {app.screen!r}")


async def _already_started() -> None:
    """The fixture started the session: the TUI has nothing to wait for."""
