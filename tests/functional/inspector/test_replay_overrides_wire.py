"""Every replay override reaches the worker's planner: each field of ``Overrides`` is set alone, sent as
``to_dict()`` through the session to the worker's ``replay_step`` (in-process transport: the same
checks and JSON round trip as the pipe), and the replay document (the ``to_dict()`` of the value the
planner used) shows it, planned otherwise than as recorded. A field added to ``Overrides`` that the
worker side drops, or whose ``apply`` names an input the planner does not read, fails here."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from test_replay_overrides import SAMPLES  # a sample value of each override (the test there fails until there is one)
from recorded_sample import newest_run, record_sample

from crux_devtools.core.record.replay_overrides import Overrides, wire_fields
from crux_devtools.inspector.features.replay.source import replay_variant
from crux_devtools.inspector.session.service import ProjectSession
from crux_devtools.inspector.transport.inprocess import in_process


@pytest.fixture
async def recorded(tmp_path: Path) -> AsyncIterator[tuple[ProjectSession, dict[str, Any]]]:
    project = record_sample(tmp_path)
    async with ProjectSession(project, transport=in_process, history=False, watch=False, prewarm=False) as session:
        yield session, newest_run(project)


@pytest.mark.parametrize("source", ["recorded", "current"])
async def test_each_override_reaches_the_planner_in_the_worker(recorded: tuple[ProjectSession, dict[str, Any]], source: str) -> None:
    session, run = recorded
    as_recorded = await replay_variant(session, run, 1, Overrides(), source)
    assert as_recorded.document is not None, as_recorded.error
    for f in wire_fields():
        overrides = Overrides(**{f.name: SAMPLES[f.name]})
        replayed = await replay_variant(session, run, 1, overrides, source)
        assert replayed.error is None, (f.name, replayed.error)
        assert replayed.document is not None
        planned = Overrides.from_dict(replayed.document["overrides"])
        assert getattr(planned, f.name) == SAMPLES[f.name], f"override {f.name!r} did not reach the planner from the {source} source"
        assert planned == dataclasses.replace(Overrides(), **{f.name: SAMPLES[f.name]})  # and nothing else changed
        assert replayed.document["replayed"] != as_recorded.document["replayed"], (
            f"override {f.name!r} reached the planner but the step was planned as recorded from the {source} source: "
            f"does its 'apply' ({f.metadata['apply']!r}) name an input plan_recorded reads?")


async def test_a_bad_override_is_answered_with_what_it_must_be(recorded: tuple[ProjectSession, dict[str, Any]]) -> None:
    session, run = recorded
    answer = await session.replay_step(run, 1, {"max": "lots"})
    assert answer["ok"] and answer["result"] == {"error": "override 'max' must be a whole number of tokens, at least 1, or left out, got 'lots'"}
    answer = await session.replay_step(run, 1, {"budget": 10})
    assert answer["result"]["error"].startswith("unknown override 'budget'")
