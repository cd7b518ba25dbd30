"""Replay of recorded steps: plan inputs are kept, every step replays to its recorded request, overrides."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import cli_in_process
import pytest
from replay_agent import ask_prompt, assert_every_step_replays_exactly, generated_agent, record_generated
from recorded_sample import record_sample

from crux_devtools.core.record.replay import Overrides, ReplayError, replay_step
from crux_devtools.core.record.runstore import RunStore



# -- fidelity ----------------------------------------------------------------------------------
def test_every_step_of_a_generated_50_step_agent_run_replays_to_its_recorded_request(tmp_path: Path) -> None:
    run_id = record_generated(tmp_path, 50)
    store = RunStore.for_project(tmp_path)
    run = store.get(run_id)
    assert run is not None
    rungs = {a["representation"] for s in run["steps"] for a in s["request"]["adaptations"]}
    assert {"authored", "summary", "omitted"} <= rungs  # the run really adapted, on several rungs
    assert any(o for s in run["steps"] for o in s["offloads"])  # and offloaded tool results
    assert assert_every_step_replays_exactly(store, run_id) == 50


def test_every_step_the_sample_project_records_replays_to_its_recorded_request(tmp_path: Path) -> None:
    project = record_sample(tmp_path)
    store = RunStore.for_project(project)
    runs = store.list()
    assert len(runs) >= 2
    replayed = sum(assert_every_step_replays_exactly(store, run["id"]) for run in runs)
    assert replayed == sum(run["step_count"] for run in runs) >= 4


def test_repeated_texts_are_stored_once(tmp_path: Path) -> None:
    record_generated(tmp_path, 6)
    record_generated(tmp_path, 6)
    db = sqlite3.connect(tmp_path / ".crux" / "runs.sqlite3")
    (blobs,) = db.execute("SELECT count(*) FROM blobs").fetchone()
    (plans,) = db.execute("SELECT count(*) FROM step_plans").fetchone()
    (frames,) = db.execute("SELECT count(DISTINCT frame) FROM step_plans").fetchone()
    catalog_text = ask_prompt  # the catalog block is one blob however many steps and runs used it
    assert catalog_text is not None
    (catalog_copies,) = db.execute("SELECT count(*) FROM blobs WHERE text LIKE '## Catalog\n- SKU0%'").fetchone()
    assert plans == 12 and catalog_copies == 1
    assert frames < plans  # the steps of a run (and the two identical runs) share frames
    assert blobs < 60


# -- overrides -----------------------------------------------------------------------------------
def test_a_bigger_budget_restores_fidelity_and_a_smaller_one_degrades_it(tmp_path: Path) -> None:
    run_id = record_generated(tmp_path, 6)
    store = RunStore.for_project(tmp_path)
    recorded = replay_step(store, run_id, 3)
    assert recorded.adaptations
    roomy = replay_step(store, run_id, 3, Overrides(max=150_000, optimize_at=150_000))
    assert roomy.status == "fits" and roomy.new_epoch and roomy.adaptations == [] and roomy.input_tokens > recorded.input_tokens
    tight = replay_step(store, run_id, 3, Overrides(max=800))
    assert tight.status == "over-limit" and tight.sent is None and tight.error_code == "REQUEST_TOO_LARGE"
    assert tight.diagnostics and all(d.tokens for d in tight.diagnostics)


def test_forcing_a_rung_and_an_illegal_rung_names_the_legal_ones(tmp_path: Path) -> None:
    run_id = record_generated(tmp_path, 3)
    store = RunStore.for_project(tmp_path)
    forced = replay_step(store, run_id, 0, Overrides(rungs=(("catalog", "omitted"),)))
    assert "## Catalog" not in (forced.sent or {})["system"]
    assert "define" not in [t["name"] for t in (forced.sent or {})["tools"]]  # the ladder's own tool goes with it
    with pytest.raises(ReplayError, match=r"'history' has no rung 'authored'.*its ladder allows: full, summary, offload"):
        replay_step(store, run_id, 0, Overrides(rungs=(("history", "authored"),)))
    with pytest.raises(ReplayError, match=r"not a ladder contributor.*catalog, history, extras"):
        replay_step(store, run_id, 0, Overrides(rungs=(("rules", "full"),)))


def test_dropping_a_context_takes_what_it_owns_and_its_tools(tmp_path: Path) -> None:
    run_id = record_generated(tmp_path, 3)
    store = RunStore.for_project(tmp_path)
    before = replay_step(store, run_id, 1)
    assert "note" in [t["name"] for t in before.recorded_sent["tools"]]
    dropped = replay_step(store, run_id, 1, Overrides(drop=("policy",)))
    sent = dropped.sent or {}
    assert "Escalate outages" not in sent["system"] and "Refunds are decided" not in sent["system"]
    assert "note" not in [t["name"] for t in sent["tools"]]
    assert dropped.left_out == ["nested-policy", "policy"]
    with pytest.raises(ReplayError, match="no such context.*policy"):
        replay_step(store, run_id, 1, Overrides(drop=("nope",)))


def test_unknown_run_step_and_a_run_without_plan_inputs_are_clear_errors(tmp_path: Path) -> None:
    run_id = record_generated(tmp_path, 2)
    store = RunStore.for_project(tmp_path)
    with pytest.raises(ReplayError, match="no recorded run 'nope'"):
        replay_step(store, "nope")
    with pytest.raises(ReplayError, match=r"has no step 7; its steps: 0, 1"):
        replay_step(store, run_id, 7)
    old = store.get(run_id)
    assert old is not None
    old["id"] = "old-run"
    store.write(old)  # a run as an older release wrote it: no plan inputs
    with pytest.raises(ReplayError, match="recorded before plan inputs were kept.*--source current"):
        replay_step(store, "old-run")


# -- the command line ----------------------------------------------------------------------------
def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``crux-devtools replay ARGS``, run in this process (``cli_in_process``: its exit code, stdout and
    stderr as the command as a process gives them; a traceback it did not handle is on stderr)."""
    return cli_in_process.cli("replay", *args)


def test_cli_replay_prints_the_json_document_with_changes_in_the_review_vocabulary(tmp_path: Path) -> None:
    run_id = record_generated(tmp_path, 4)
    same = cli(str(tmp_path), "--run", run_id, "--step", "2", "--json")
    assert same.returncode == 0, same.stderr
    document = json.loads(same.stdout)
    assert set(document) >= {"run", "step", "source", "overrides", "identical", "recorded", "replayed", "changes", "cache_prefix"}
    assert document["identical"] is True and document["changes"] == [] and document["cache_prefix"]["broken_by"] is None
    assert document["replayed"]["sent"] == document["recorded"]["sent"]
    changed = cli(str(tmp_path), "--run", run_id, "--step", "2", "--drop", "policy", "--rung", "extras=omitted", "--json")
    assert changed.returncode == 0, changed.stderr
    document = json.loads(changed.stdout)
    kinds = {(c["kind"], c.get("id") or c.get("contributor") or c.get("name")) for c in document["changes"]}
    assert ("context-left", "policy") in kinds and ("tool-removed", "note") in kinds and ("tokens", None) in kinds
    assert document["cache_prefix"]["broken_by"] == "tools"  # the note tool went, and tools come first in the cache order
    assert document["overrides"]["drop"] == ["policy"] and document["overrides"]["rungs"] == {"extras": "omitted"}


def test_cli_replay_text_names_the_changes_and_the_cache_prefix(tmp_path: Path) -> None:
    run_id = record_generated(tmp_path, 2)
    done = cli(str(tmp_path), "--run", run_id, "--step", "1", "--drop", "extras", "--brief")
    assert done.returncode == 0, done.stderr
    assert "context extras left the request (removed)" in done.stdout
    assert "cacheable prefix" in done.stdout and "broken by" in done.stdout
    assert "replayed request:" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--run", "nope"], "no recorded run 'nope'"),
        (["--step", "9"], "has no step 9"),
        (["--rung", "history=authored"], "its ladder allows: full, summary, offload"),
        (["--rung", "history"], "--rung takes CONTRIBUTOR=RUNG"),
        (["--model", "huge"], "no capacity profile of that name"),
    ],
)
def test_cli_bad_input_is_one_line_and_a_non_zero_exit(tmp_path: Path, args: list[str], message: str) -> None:
    run_id = record_generated(tmp_path, 2)
    if "--run" not in args:
        args = ["--run", run_id, *args]
    done = cli(str(tmp_path), *args)
    assert done.returncode != 0
    assert message in done.stderr and "Traceback" not in done.stderr


def test_cli_a_run_recorded_before_plan_inputs_says_so_and_offers_the_current_source(tmp_path: Path) -> None:
    run_id = record_generated(tmp_path, 2)
    store = RunStore.for_project(tmp_path)
    old = store.get(run_id)
    assert old is not None
    store.write({**old, "id": "old-run"})  # as an older release wrote it: no plan inputs
    done = cli(str(tmp_path), "--run", "old-run", "--step", "1")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "recorded before plan inputs were kept" in done.stderr and "--source current" in done.stderr


def test_cli_a_target_gone_from_the_source_replays_from_the_recording_but_sends_nothing(tmp_path: Path) -> None:
    run_id = record_generated(tmp_path, 2)  # the agent lives in this test module, not in the folder's source
    replayed = cli(str(tmp_path), "--run", run_id, "--step", "1")
    assert replayed.returncode == 0 and "identical to the recorded request" in replayed.stdout
    sent = cli(str(tmp_path), "--run", run_id, "--step", "1", "--send", "--yes")
    assert sent.returncode != 0 and "Traceback" not in sent.stderr
    assert "the run's target 'gen-agent' no longer exists in the source; nothing was sent" in sent.stderr
    assert RunStore.for_project(tmp_path).count() == 1  # no child run


def test_cli_a_budget_that_cannot_fit_is_request_too_large_with_what_each_part_needs(tmp_path: Path) -> None:
    run_id = record_generated(tmp_path, 2)
    done = cli(str(tmp_path), "--run", run_id, "--step", "1", "--max", "300")
    assert "Traceback" not in done.stderr
    assert "REQUEST_TOO_LARGE: nothing fits max_input_tokens=300" in done.stdout
    assert "rules: required context 'rules' needs" in done.stdout
    assert "status fits -> over-limit" in done.stdout and "left the request" not in done.stdout  # nothing is sent, nothing "left"
