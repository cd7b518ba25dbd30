"""Replay fidelity holds for a step whose texts are over a million characters (the request sent is
stored whole), and a runs file that lost one of its blobs names the damaged run and step: one line,
a non-zero exit, no traceback. Real SQLite files, the real command as a subprocess."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel

from crux_devtools import ModelCapacityProfile, ScriptedModel, agent, generate, prompt, record_runs, tool, tool_call
from crux_devtools.core.errors import DamagedRunError, ReplayError
from crux_devtools.core.record.replay import replay_step
from crux_devtools.core.record.runstore import TEXT_CAP, RunStore

CLI = str(Path(sys.executable).with_name("crux-devtools"))
BIG = "".join(f"line {i}: the log says nothing new.\n" for i in range(40_000))  # about 1.5 M characters


class Page(BaseModel):
    page: int


dump = tool("dump", description="The whole log.", parameters=Page, execute=lambda a: BIG)


def record_big(root: Path) -> str:
    model = ScriptedModel([[tool_call("dump", {"page": 1})], "ok"], capacity=ModelCapacityProfile(2_000_000, 100, "exact"))
    with record_runs(root):
        generate(agent("big-agent", prompt=prompt("big", system=BIG, prompt="Summarise.", tools=[dump]), model=model))
    assert len(model.requests[0].system) > TEXT_CAP and BIG in model.requests[1].messages[-1]["content"]
    with RunStore.for_project(root, create=False) as store:
        return str(store.list()[0]["id"])


def test_a_step_with_texts_over_a_million_characters_replays_identical(tmp_path: Path) -> None:
    run_id = record_big(tmp_path)
    with RunStore.for_project(tmp_path, create=False) as store:
        run = store.get(run_id)
        assert run is not None
        for step in run["steps"]:
            assert BIG in step["sent"]["system"]  # stored whole, not cut at TEXT_CAP
            replayed = replay_step(store, run_id, step["index"])
            assert replayed.identical and replayed.sent == step["sent"]
        assert BIG in run["steps"][1]["sent"]["messages"][-1]["content"]  # the tool result the model saw, whole
        assert "[cut by crux_devtools" in run["steps"][0]["tool_results"][0]["model_output"]  # other copies are still capped


def test_a_runs_file_missing_a_blob_names_the_damaged_run_and_step(tmp_path: Path) -> None:
    run_id = record_big(tmp_path)
    with sqlite3.connect(tmp_path / ".crux" / "runs.sqlite3") as db:
        (biggest,) = db.execute("SELECT hash FROM blobs ORDER BY length(text) DESC LIMIT 1").fetchone()
        db.execute("DELETE FROM blobs WHERE hash = ?", (biggest,))
    with RunStore.for_project(tmp_path, create=False) as store, pytest.raises(DamagedRunError) as caught:
        replay_step(store, run_id, 1)
    assert isinstance(caught.value, ReplayError)
    done = subprocess.run([CLI, "replay", str(tmp_path), "--run", run_id, "--step", "1"], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert f"run {run_id!r} is damaged: step 1" in line and biggest in line and "--source current" in line
