"""Every confirmation is decided and priced against the model that will be called, fixed when asked.

A recorded run of ``bot`` (model ``model-a``, cheap) is replayed; a save switches the agent to
``model-b`` (ten thousand times dearer) while a question is on screen. The send must not go to
``model-b`` on a "yes" given about ``model-a``: the worker asks again, about ``model-b``. The web
panel prices a send at the model it would call, not the recorded one, and the web Run confirmation
shows the same estimate ``replay --send`` prints. Real session (its worker in process), real run store.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_run_confirm import AGENTS, called, token_of
from waits import pilot_until

from crux_devtools.core.record.runstore import RunStore, child_runs
from crux_devtools.inspector.features.runs.costs import Prices
from crux_devtools.inspector.session.service import ProjectSession
from crux_devtools.inspector.transport.inprocess import in_process
from crux_devtools.tui import make_tui
from crux_devtools.tui.screens.replay import ConfirmSend, ReplayScreen
from crux_devtools.web.app import create_app

PRICES = """
[tool.crux-devtools.models.model-a]
context_window = 16000
input_price = 0.0001
output_price = 0.0001

[tool.crux-devtools.models.model-b]
context_window = 16000
input_price = 1.0
output_price = 1.0
"""


def agents(model: str) -> str:
    return AGENTS.replace("MODEL", f'Costly("{model}")')


@pytest.fixture
async def recorded(tmp_path: Path) -> AsyncIterator[tuple[ProjectSession, dict[str, Any]]]:
    """A session on the project, with one run of ``bot`` recorded on ``model-a``."""
    (tmp_path / "pyproject.toml").write_text(PRICES)
    (tmp_path / "agents.py").write_text(agents("model-a"))
    session = ProjectSession(tmp_path, transport=in_process, watch=False, history=False, prewarm=False)
    await session.start()
    try:
        done = await session.run("bot", example="first", confirm=True)
        assert done.get("status") == "ok", done
        run = RunStore.for_project(tmp_path).get(str(done["id"]))
        assert run is not None and run["model"] == "model-a"
        (tmp_path / "CALLED").unlink()  # the marks of the sends that follow, only
        yield session, run
    finally:
        await session.stop()


async def switch(session: ProjectSession, model: str) -> None:
    (session.root / "agents.py").write_text(agents(model))
    await session.reload(["agents.py"])


async def test_tui_a_save_during_the_send_question_asks_again_about_the_new_model(recorded: tuple[ProjectSession, dict[str, Any]]) -> None:
    session, run = recorded
    app = make_tui(session, starting=_already_started())
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        app.push_screen(ReplayScreen(run, 0, session))
        await pilot_until(pilot, lambda: "identical to the recorded request" in _variants(app), "the replay is shown")
        await pilot.press("s")
        await pilot_until(pilot, lambda: isinstance(app.screen, ConfirmSend), "the send is asked about")
        assert app.screen.target == "model-a" and "estimated input cost" in str(app.screen.detail())
        await switch(session, "model-b")  # saved while the question about model-a is on screen
        await pilot.press("y")
        await pilot_until(pilot, lambda: isinstance(app.screen, ConfirmSend) and app.screen.target == "model-b", "asked again about model-b")
        assert called(session) == []  # the yes about model-a sent nothing to model-b
        tokens = int(run["steps"][0]["request"]["input_tokens"])
        assert Prices(session.root).estimate("model-b", tokens) in str(app.screen.detail())  # priced at model-b
        await pilot.press("y")
        await pilot_until(pilot, lambda: "billed answer" in _sent(app), "the answer of model-b is shown")
    assert called(session) == ["model-b"]
    assert [c["model"] for c in child_runs(RunStore.for_project(session.root), str(run["id"]))] == ["model-b"]


async def test_web_replay_prices_the_send_at_the_model_it_calls_and_a_switch_asks_again(recorded: tuple[ProjectSession, dict[str, Any]]) -> None:
    session, run = recorded
    await switch(session, "model-b")  # the run was recorded on model-a; a send now calls model-b
    app = create_app(session, manage_session=False)
    href = f"/runs/{run['id']}/steps/0/replay"
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:4400") as client:
        panel = (await client.get(href)).text
        tokens = int(re.search(r'<b class="mono">([\d,]+)</b> input tokens', panel).group(1).replace(",", ""))  # type: ignore[union-attr]
        prices = Prices(session.root)
        assert f"Send this replayed request ({prices.estimate('model-b', tokens)}) to model-b?" in panel
        assert prices.estimate("model-a", tokens) not in panel  # never priced at the recorded model
        token_b = re.search(r'name="confirm" value="([0-9a-f]+)"', panel).group(1)  # type: ignore[union-attr]

        await switch(session, "model-a")  # saved after the page asked about model-b
        refused = await client.post(href + "/send", data={"q": "", "confirm": token_b})
        assert called(session) == [] and 'now <span class="mono">model-a</span>, not the one you confirmed' in refused.text
        assert prices.estimate("model-a", tokens) in refused.text
        token_a = re.search(r'name="confirm" value="([0-9a-f]+)"', refused.text).group(1)  # type: ignore[union-attr]
        sent = await client.post(href + "/send", data={"q": "", "confirm": token_a})
        assert "billed answer" in sent.text
    assert called(session) == ["model-a"]


async def test_web_run_confirmation_shows_the_estimated_cost_at_the_model_it_calls(recorded: tuple[ProjectSession, dict[str, Any]]) -> None:
    session, _run = recorded
    await switch(session, "model-b")
    app = create_app(session, manage_session=False)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:4400") as client:
        asked = await client.post("/prompts/bot/run", data={"example": "first"})
        assert 'id="run-confirm"' in asked.text and called(session) == []
        found = re.search(r'id="run-confirm-estimate">estimated input cost \$[\d.e-]+ \(([\d,]+) input tokens, output extra\) for the first request', asked.text)
        assert found is not None, asked.text
        tokens = int(found.group(1).replace(",", ""))
        example = next(p for p in session.report["prompts"] if p["id"] == "bot")["examples"][0]  # type: ignore[index]
        assert tokens == example["preview"]["input_tokens"]  # the size of the request the run sends first
        assert Prices(session.root).estimate("model-b", tokens) in asked.text
        done = await client.post("/prompts/bot/run", data={"example": "first", "confirm": token_of(asked.text)})
        assert 'id="run-recorded"' in done.text
    assert called(session) == ["model-b"]


def _variants(app: Any) -> str:
    from test_tui_replay import shown

    try:
        return shown(app)
    except Exception:  # noqa: BLE001 - the replay screen is not up yet
        return ""


def _sent(app: Any) -> str:
    widgets = app.screen.query("#replay-sent")
    return str(widgets.first().content) if widgets else ""


async def _already_started() -> None:
    """The fixture started the session: the TUI has nothing to wait for."""

