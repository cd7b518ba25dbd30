"""What recorded runs cost: each step and run from the provider's usage at the model's price (cache
tokens at their own rates), a cost column and a total for the filter in /runs, and "unpriced" when
a price or the usage is missing."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from web_runs_fakes import RecordingSession, run_record

from crux_devtools.core.record.pricing import Price, cost_usd
from crux_devtools.core.record.runstore import RunStore
from crux_devtools.inspector.features.runs.costs import Prices
from crux_devtools.web.app import create_app

PYPROJECT = """
[tool.crux-devtools.models.scripted-billing]
context_window = 8192
input_price = 2.0
output_price = 10.0
cache_read_price = 0.5
cache_write_price = 4.0
"""
PRICE = Price(2.0, 10.0, 0.5, 4.0)


@pytest.fixture
def session(tmp_path: Path) -> RecordingSession:
    (tmp_path / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    return RecordingSession(tmp_path, agent_ids=("billing-agent",))


@pytest.fixture
async def client(session: RecordingSession) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(session)), base_url="http://127.0.0.1:4400") as c:
        yield c


def cells(page: str, css: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(rf'<td class="num mono {css}">(.*?)</td>', page, re.S)]


async def test_the_runs_list_shows_each_runs_cost_and_the_total_of_the_filter(client: httpx.AsyncClient, session: RecordingSession) -> None:
    cached = {"input_tokens": 1_000, "output_tokens": 200, "cache_read_tokens": 400, "cache_write_tokens": 100}
    session.record(run_record(run_id="cached", usage=cached))
    session.record(run_record(run_id="plain", usage={"input_tokens": 500, "output_tokens": 50}, origin="inspector"))
    session.record(run_record(run_id="silent"))  # the provider reported no usage
    page = (await client.get("/runs")).text
    steps = len(run_record()["steps"])
    one_cached = cost_usd(cached, PRICE)
    one_plain = cost_usd({"input_tokens": 500, "output_tokens": 50}, PRICE)
    assert one_cached is not None and one_plain is not None
    # 500 plain input + 400 read + 100 written + 200 out, at their own rates, per step.
    assert one_cached == pytest.approx((500 * 2 + 400 * 0.5 + 100 * 4 + 200 * 10) / 1e6)
    # one precision for the whole column: the four decimals its smallest cost needs
    assert cells(page, "run-cost") == ["unpriced", f"${one_plain * steps:.4f}", f"${one_cached * steps:.4f}"]
    total = re.search(r'id="runs-cost".*?<b class="mono">(.*?)</b>', page, re.S)
    assert total is not None and total.group(1) == f"${(one_cached + one_plain) * steps:.4g} (1 unpriced)"
    filtered = (await client.get("/runs?origin=inspector")).text
    assert re.search(r'id="runs-cost".*?<b class="mono">(.*?)</b>', filtered, re.S).group(1) == f"${one_plain * steps:.4g}"  # type: ignore[union-attr]


async def test_the_run_page_shows_the_runs_cost_and_each_steps(client: httpx.AsyncClient, session: RecordingSession) -> None:
    usage = {"input_tokens": 300, "output_tokens": 30}
    session.record(run_record(run_id="r1", usage=usage))
    page = (await client.get("/runs/r1")).text
    each = cost_usd(usage, PRICE)
    assert each is not None
    step_costs = re.findall(r'<span class="small mono step-cost" title=[^>]*>(.*?)</span>', page)
    assert step_costs and set(step_costs) == {f"${each:.4g}"}
    assert re.search(r'id="run-cost".*?<span class="mono">(.*?)</span>', page, re.S).group(1) == f"${each * len(step_costs):.4g}"  # type: ignore[union-attr]


async def test_a_model_without_a_price_is_unpriced_everywhere(client: httpx.AsyncClient, session: RecordingSession, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    session.record(run_record(run_id="r1", usage={"input_tokens": 300, "output_tokens": 30}))
    page = (await client.get("/runs")).text
    assert cells(page, "run-cost") == ["unpriced"]
    assert re.search(r'id="runs-cost".*?<b class="mono">(.*?)</b>', page, re.S).group(1) == "unpriced"  # type: ignore[union-attr]
    assert 'id="run-cost"><span class="stat-label"' in (run := (await client.get("/runs/r1")).text) and "unpriced" in run


def test_usage_by_model_sums_the_filter_in_sql(tmp_path: Path) -> None:
    with RunStore.for_project(tmp_path) as store:
        store.write({"target": "a", "model": "m1", "usage": {"input_tokens": 10, "output_tokens": 1, "cache_read_tokens": 4}})
        store.write({"target": "a", "model": "m1", "usage": {"input_tokens": 20, "output_tokens": 2}})
        store.write({"target": "b", "model": "m2", "usage": None})
        rows = {r["model"]: r for r in store.usage_by_model()}
        only_b = store.usage_by_model(target="b")
    assert rows["m1"] == {"model": "m1", "runs": 2, "reported": 2, "input_tokens": 30, "output_tokens": 3, "cache_read_tokens": 4, "cache_write_tokens": 0, "cache_write_1h_tokens": 0}
    assert rows["m2"]["runs"] == 1 and rows["m2"]["reported"] == 0
    assert [r["model"] for r in only_b] == ["m2"]
    prices = Prices(None)
    assert prices.total(only_b).label == "unpriced"


def test_a_price_added_to_pyproject_prices_runs_already_recorded(tmp_path: Path) -> None:
    prices = Prices(tmp_path, known_prices=False)
    run = {"model": "house", "usage": {"input_tokens": 1000, "output_tokens": 100}}
    assert prices.run_cost(run) is None
    (tmp_path / "pyproject.toml").write_text("[tool.crux-devtools.models.house]\ncontext_window = 8000\ninput_price = 1\noutput_price = 2\n", encoding="utf-8")
    import os

    os.utime(tmp_path / "pyproject.toml", (1, 1))  # a new mtime, however fast the file system's clock ticks
    assert prices.run_cost(run) == pytest.approx((1000 * 1 + 100 * 2) / 1e6)


TUI_USAGE = {"input_tokens": 1_000, "output_tokens": 100}


def tui_session(tmp_path: Path) -> Any:
    """The TUI's fake session over a real store in a project that prices the scripted model: one run
    with usage ("priced", newest) and one without ("silent")."""
    from tui_fakes import FakeSession, recorded_run

    (tmp_path / "pyproject.toml").write_text(PYPROJECT.replace("scripted-billing", "scripted"), encoding="utf-8")
    session = FakeSession(root=tmp_path, runs_file=tmp_path / ".crux" / "runs.sqlite3")
    priced = recorded_run(session.prompts["support-reply"], {"message": "hi"}, ["Hello."], run_id="priced", started_at="2026-11-30T10:00:00+00:00")
    priced["steps"][0]["usage"] = priced["usage"] = TUI_USAGE
    silent = recorded_run(session.prompts["support-reply"], {"message": "hi"}, ["Hello."], run_id="silent", started_at="2026-11-30T09:00:00+00:00")
    assert session.store is not None
    session.store.write(priced)
    session.store.write(silent)
    return session


async def test_the_tui_runs_tab_shows_each_runs_cost_and_the_total(tmp_path: Path) -> None:
    from test_tui import screen_text, settle

    from crux_devtools.tui import make_tui
    from crux_devtools.tui.widgets.runs import RunsTable

    each = cost_usd(TUI_USAGE, PRICE)
    app = make_tui(tui_session(tmp_path))
    async with app.run_test(size=(170, 50)) as pilot:
        await settle(pilot)
        await pilot.press("6")  # the Runs tab
        await settle(pilot)
        table = app.query_one(RunsTable)
        last_cells = [table.get_row_at(i)[-1].plain for i in range(table.row_count)]
        assert last_cells == [f"${each:.4g}", "unpriced"]
        assert f"All runs · 2 · cost ${each:.4g} (1 unpriced)" in screen_text(app)
        await pilot.press("enter")  # the newest run: the priced one
        await settle(pilot)
        from crux_devtools.tui.screens import RunDetailScreen

        assert isinstance(app.screen, RunDetailScreen)
        assert screen_text(app).count(f"cost ${each:.4g}") == 2  # the run (one step) and its step
