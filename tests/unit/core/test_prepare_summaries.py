"""prepare_summaries: the explicit step that makes a summary rung measurable in preview."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from crux_devtools import (
    InputBudget,
    ScriptedModel,
    SummaryStore,
    context,
    generate,
    offloadable,
    prepare_summaries,
    preview,
    prompt,
    summarizable,
    summarize,
)

LOG = "\n\n".join(f"Day {d}: the sync stalled at 03:{d:02d} after a token expired. It resumed later. Nothing was lost." for d in range(60))


class Question(BaseModel):
    question: str = "What happened?"


def log_prompt(strategy=None, model=None):
    log = context("sync-log", system=LOG, priority=40)
    ladder = offloadable(summarizable(log, strategy=strategy, model=model))
    return prompt("triage", system="You triage sync problems.", input=Question, use=[context("rules", system="Be brief."), ladder], prompt=lambda i: i.question)


def test_an_extractive_summary_is_prepared_without_a_model_and_preview_then_sends_it():
    p = log_prompt(strategy=summarize.extractive(0.2))
    store = SummaryStore()
    before = preview(p, input={}, input_budget=InputBudget(max=1200), summary_store=store)
    assert [(c.representation, c.rejection_reason) for c in before.candidates if c.representation == "summary"] == [("summary", "unprepared")]
    done = prepare_summaries(p, input={}, summary_store=store)
    assert [(d.contributor, d.status, d.strategy) for d in done] == [("sync-log", "prepared", "extractive:0.2")]
    assert done[0].tokens and done[0].tokens > 0
    after = preview(p, input={}, input_budget=InputBudget(max=1200), summary_store=store)
    assert [(a.contributor, a.representation) for a in after.adaptations] == [("sync-log", "summary")]
    part = next(c for c in after.contributions if c.contributor == "sync-log")
    assert after.sent is not None and after.sent.system[part.span[0]:part.span[1]].startswith("[summary of sync-log]\nDay 0:")
    assert prepare_summaries(p, input={}, summary_store=store)[0].status == "already-prepared"


def test_generate_sends_exactly_what_preview_shows_once_the_summary_is_prepared():
    p = log_prompt(strategy=summarize.extractive(0.2))
    store = SummaryStore()
    prepare_summaries(p, input={}, summary_store=store)
    planned = preview(p, input={}, input_budget=InputBudget(max=1200), summary_store=store)
    model = ScriptedModel(["ok"])
    result = generate(p, input={}, model=model, input_budget=InputBudget(max=1200), summary_store=SummaryStore())
    assert model.requests[0].system == planned.sent.system  # generate prepared the same summary itself
    assert result.steps[0].request.input_tokens == planned.input_tokens


def test_a_hierarchical_summary_calls_its_model_only_when_allowed():
    summarizer = ScriptedModel(["The sync stalled daily at 03:xx when a token expired; nothing was lost."] * 3, name="summarizer")
    p = log_prompt(model=summarizer)
    store = SummaryStore()
    skipped = prepare_summaries(p, input={}, summary_store=store)
    assert [(d.status, d.model) for d in skipped] == [("needs-model", "summarizer")]
    assert "allow_models=True" in (skipped[0].detail or "")
    assert summarizer.requests == [] and store.count() == 0
    done = prepare_summaries(p, input={}, summary_store=store, allow_models=True)
    assert [d.status for d in done] == ["prepared"]
    assert summarizer.requests and store.count() == 1


def test_a_context_dropped_by_the_token_budget_is_not_summarised():
    log = context("sync-log", system=LOG, priority=10)
    p = prompt("triage", system="You triage.", use=[summarizable(log)], token_budget=20)
    assert prepare_summaries(p, input={}, summary_store=SummaryStore()) == []


def test_naming_a_contributor_that_is_not_summarizable_is_a_clear_error():
    with pytest.raises(ValueError, match=r"no summarizable contributor named \['rules'\].*summarizable here: sync-log"):
        prepare_summaries(log_prompt(), input={}, summary_store=SummaryStore(), contributors=["rules"])
