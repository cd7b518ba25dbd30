"""Costs read like money on the web pages: the /runs Cost column and a run's step costs each use
one precision for the whole column, enough for its smallest sum, and never an exponent (real run
store, real prices from the project's pyproject.toml)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from web_runs_fakes import RecordingSession, run_record

PRICED = "[tool.crux-devtools.models.scripted-billing]\ncontext_window = 8000\ninput_price = 2.0\noutput_price = 10.0\n"


@pytest.fixture
def session(tmp_path: Path) -> RecordingSession:
    (tmp_path / "pyproject.toml").write_text(PRICED, encoding="utf-8")
    return RecordingSession(tmp_path, agent_ids=("billing-agent",))


def at(minutes: int) -> datetime:
    return datetime(2026, 3, 1, 9, 0, tzinfo=UTC) + timedelta(minutes=minutes)


async def test_the_runs_cost_column_has_one_precision_and_no_exponent(client: httpx.AsyncClient, session: RecordingSession) -> None:
    session.record(run_record(run_id="tiny", started_at=at(0), usage={"input_tokens": 16, "output_tokens": 2}))
    session.record(run_record(run_id="big", started_at=at(5), usage={"input_tokens": 600_000, "output_tokens": 30_000}))
    page = (await client.get("/runs")).text
    steps = len(session.store.get("tiny")["steps"])  # type: ignore[index]
    costs = re.findall(r'<td class="num mono run-cost">([^<]*)</td>', page)
    assert costs == [f"${1.5 * steps:.6f}", f"${0.000052 * steps:.6f}"]  # newest first, six decimals each
    assert "e-0" not in page


async def test_a_runs_step_costs_share_one_precision(client: httpx.AsyncClient, session: RecordingSession) -> None:
    run = run_record(run_id="mixed", started_at=at(0), steps=None, usage={"input_tokens": 16, "output_tokens": 2})
    assert len(run["steps"]) >= 2
    run["steps"][0]["usage"] = {"input_tokens": 500_000, "output_tokens": 0}  # $1 for the first step
    session.record(run)
    page = (await client.get("/runs/mixed")).text
    costs = re.findall(r'class="small mono step-cost[^"]*"[^>]*>([^<]*)</span>', page)
    assert costs[:2] == ["$1.000000", "$0.000052"]
    assert "e-0" not in page
