"""Summaries and offloads: the caller owns the store, so one call never changes what another answers.

There is no process-wide store. ``preview``/``generate``/``prepare_summaries`` read and write the
store they are given (``summary_store=``/``offload_store=``, or those of ``session=``, a
``PlanningSession`` the caller holds); without one, each call plans against stores of its own.
"""

from __future__ import annotations

import json
import re

import pytest
from pydantic import BaseModel

from crux_devtools import (
    InputBudget,
    OffloadStore,
    PlanningSession,
    ScriptedModel,
    SummaryStore,
    context,
    generate,
    offload,
    offloadable,
    prepare_summaries,
    preview,
    prompt,
    summarizable,
    summarize,
    tool,
    tool_call,
)
from crux_devtools.core.run.models import ModelResponse
from crux_devtools.core.tokens import TiktokenCounter

LOG = "\n\n".join(f"Day {d}: the sync stalled at 03:{d:02d} after a token expired. It resumed later. Nothing was lost." for d in range(60))
BUDGET = InputBudget(max=1200)


class Question(BaseModel):
    question: str = "What happened?"


def log_prompt():
    log = context("sync-log", system=LOG, priority=40)
    ladder = offloadable(summarizable(log, strategy=summarize.extractive(0.2)))
    return prompt("triage", system="You triage sync problems.", input=Question, use=[context("rules", system="Be brief."), ladder], prompt=lambda i: i.question)


def summary_rung(planned):
    return next((c.selected, c.rejection_reason) for c in planned.candidates if c.representation == "summary")


def test_a_generate_that_prepares_a_summary_does_not_change_a_later_preview_without_that_store():
    p = log_prompt()
    before = preview(p, input={}, input_budget=BUDGET)
    assert summary_rung(before) == (False, "unprepared")
    result = generate(p, input={}, model=ScriptedModel(["ok"]), input_budget=BUDGET)
    assert [a.representation for a in result.steps[0].request.adaptations] == ["summary"]  # generate prepared and sent it
    after = preview(p, input={}, input_budget=BUDGET)
    assert summary_rung(after) == (False, "unprepared")
    assert after.to_dict() == before.to_dict()


def test_passing_the_same_summary_store_shares_the_summary_generate_prepared():
    p = log_prompt()
    store = SummaryStore()
    generate(p, input={}, model=ScriptedModel(["ok"]), input_budget=BUDGET, summary_store=store)
    assert store.count() == 1
    after = preview(p, input={}, input_budget=BUDGET, summary_store=store)
    assert summary_rung(after) == (True, None)


def test_a_planning_session_owns_the_stores_its_preview_generate_and_prepare_share():
    p = log_prompt()
    session = PlanningSession()
    assert isinstance(session.summary_store, SummaryStore) and isinstance(session.offload_store, OffloadStore)
    assert summary_rung(preview(p, input={}, input_budget=BUDGET, session=session)) == (False, "unprepared")
    done = prepare_summaries(p, input={}, session=session)
    assert [d.status for d in done] == ["prepared"] and session.summary_store.count() == 1
    planned = preview(p, input={}, input_budget=BUDGET, session=session)
    assert summary_rung(planned) == (True, None)
    model = ScriptedModel(["ok"])
    generate(p, input={}, model=model, input_budget=BUDGET, session=session)
    assert planned.sent is not None and model.requests[0].system == planned.sent.system  # what you see is what is sent
    assert summary_rung(preview(p, input={}, input_budget=BUDGET, session=PlanningSession())) == (False, "unprepared")


def test_a_session_preview_shows_the_offload_handle_its_generate_sends():
    log = context("sync-log", system=LOG, priority=40)
    p = prompt("triage", system="You triage.", input=Question, use=[offloadable(log)], prompt=lambda i: i.question)
    session = PlanningSession()
    planned = preview(p, input={}, input_budget=InputBudget(max=600), session=session)
    assert [a.representation for a in planned.adaptations] == ["offload"]
    model = ScriptedModel(["ok"])
    result = generate(p, input={}, model=model, input_budget=InputBudget(max=600), session=session)
    assert planned.sent is not None and model.requests[0].system == planned.sent.system
    handle = result.steps[0].offloads[0].handle
    assert handle in planned.sent.system
    assert session.offload_store.get(f"triage/{session.id}", handle) == LOG
    assert session.offload_store.count() == 1


def test_explicit_stores_win_over_the_sessions():
    p = log_prompt()
    session, mine = PlanningSession(), SummaryStore()
    generate(p, input={}, model=ScriptedModel(["ok"]), input_budget=BUDGET, session=session, summary_store=mine)
    assert mine.count() == 1 and session.summary_store.count() == 0


class Reader:
    """Calls ``lookup`` (forced offload), then reads the value back through ``read_offload``, then answers with it."""

    name = "reader"
    capacity = None

    def complete(self, request):
        last = request.messages[-1]
        if last["role"] == "user":
            return ModelResponse(None, [tool_call("lookup", {"question": "x"})])
        if "read_offload(handle=" in last["content"]:
            handle = re.search(r'handle="(ofl_[0-9]+)"', last["content"]).group(1)
            return ModelResponse(None, [tool_call("read_offload", {"handle": handle, "limit": 20000})])
        return ModelResponse(json.loads(last["content"])["content"])


def test_a_generate_without_a_store_reads_its_own_offloads_back_within_the_run():
    lookup = tool("lookup", description="Look up.", parameters=Question, execute=lambda q: offload(LOG))
    p = prompt("triage", system="You triage.", tools=[lookup], prompt="What happened?")
    result = generate(p, input={}, model=Reader())
    assert result.stop_reason == "text" and result.text == LOG
    assert [len(s.offloads) for s in result.steps] == [1, 0, 0]


def test_prepare_summaries_without_a_store_says_where_to_write():
    with pytest.raises(TypeError, match=r"summary_store=.*session=PlanningSession\(\)"):
        prepare_summaries(log_prompt(), input={})


def test_the_counter_of_a_session_preview_is_untouched():
    # preview(session=...) only borrows the stores: counter and epoch state are not the session's business
    session = PlanningSession()
    preview(log_prompt(), input={}, input_budget=BUDGET, session=session, counter=TiktokenCounter())
    assert session.epoch == 0 and session.ceilings == {} and session.last_request_id is None


def test_the_readme_example_of_who_owns_the_store_runs():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[3] / "README.md").read_text(encoding="utf-8")
    section = text.split("## Summaries and offloads: who owns the store", 1)[1].split("\n## ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    exec(compile(code.group(1), "README.md", "exec"), {})


def test_the_fresh_stores_of_a_preview_without_one_open_no_database(monkeypatch):
    import sqlite3

    from crux_devtools.core import lazy_sqlite

    opened: list[str] = []
    real = sqlite3.connect
    fake = type("S", (), {"connect": staticmethod(lambda *a, **k: opened.append(str(a[0])) or real(*a, **k)), "Connection": sqlite3.Connection, "ProgrammingError": sqlite3.ProgrammingError})
    monkeypatch.setattr(lazy_sqlite, "sqlite3", fake)  # both stores open their database there
    p = log_prompt()
    planned = preview(p, input={}, input_budget=BUDGET)
    assert summary_rung(planned) == (False, "unprepared") and opened == []
    store = SummaryStore()
    assert store.get("sum_x") is None and store.count() == 0 and opened == []
    generate(p, input={}, model=ScriptedModel(["ok"]), input_budget=BUDGET, summary_store=store)
    assert opened == [":memory:"] and store.count() == 1  # the first write opens it


def test_an_unwritten_store_reads_as_empty_and_a_closed_one_refuses():
    import sqlite3

    from crux_devtools.core.plan.offload_store import OffloadError

    offloads = OffloadStore()
    with pytest.raises(OffloadError, match="unknown offload handle"):
        offloads.read("ns", "ofl_1")
    assert offloads.count() == 0
    receipt = offloads.put("ns", "k", "exact value")
    assert offloads.get("ns", receipt.handle) == "exact value"
    offloads.close()
    summaries = SummaryStore()
    summaries.close()
    with pytest.raises(sqlite3.ProgrammingError):
        offloads.count()
    with pytest.raises(sqlite3.ProgrammingError):
        summaries.get("sum_x")  # closed before anything was written: still refused, not read as empty


def test_a_session_or_store_of_the_wrong_kind_is_a_clear_error():
    with pytest.raises(TypeError, match="session must be a PlanningSession, got str"):
        preview(log_prompt(), input={}, session="s1")
    with pytest.raises(TypeError, match="summary_store must be a SummaryStore, got str"):
        PlanningSession(summary_store="summaries.sqlite3")
    with pytest.raises(TypeError, match="offload_store must be an OffloadStore, got SummaryStore"):
        PlanningSession(offload_store=SummaryStore())
