"""``crux-devtools replay --source current``: a recorded step planned from today's source, in a worker.

The runs are recorded once by a real process (``record_demo.py``) and each test gets a copy. The
command runs in this process with an in-process worker (``cli_in_process``), and once as a process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_in_process import cli
from recorded_sample import newest_run, record_sample


CLI = str(Path(sys.executable).with_name("crux-devtools"))


@pytest.fixture
def recorded_sample(tmp_path: Path) -> tuple[Path, str]:
    """This test's copy of the recorded sample project (its runs too); the last run's id."""
    project = record_sample(tmp_path)
    return project, str(newest_run(project)["id"])


def replay(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``crux-devtools replay PROJECT ARGS`` in this process, its worker in-process."""
    return cli("replay", str(project), *args)


def replay_process(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CLI, "replay", str(project), *args], capture_output=True, text=True, timeout=300)


def test_unchanged_source_plans_every_step_to_its_recorded_request(recorded_sample: tuple[Path, str]) -> None:
    project, run_id = recorded_sample
    for step in ("0", "1"):
        done = replay(project, "--run", run_id, "--step", step, "--source", "current", "--json")
        assert done.returncode == 0, done.stderr
        document = json.loads(done.stdout)
        assert document["source"] == "current"
        assert document["identical"] is True, document["changes"]
        assert document["replayed"]["sent"] == document["recorded"]["sent"]


def test_an_edited_context_is_named_with_its_file_and_line(recorded_sample: tuple[Path, str]) -> None:
    project, run_id = recorded_sample
    shared = project / "shared.py"
    text = shared.read_text()
    assert "- Never ask for passwords or full card numbers.\\n" in text
    shared.write_text(text.replace("- Never ask for passwords or full card numbers.\\n", "- Never ask for passwords, card numbers or one-time codes.\\n"))
    line = next(n for n, row in enumerate(shared.read_text().splitlines(), 1) if row.startswith("house_rules = context("))
    done = replay(project, "--run", run_id, "--step", "1", "--source", "current", "--json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["identical"] is False
    text_changes = [c for c in document["changes"] if c["kind"] == "text"]
    assert text_changes == [{"kind": "text", "context": "house-rules", "base_tokens": text_changes[0]["base_tokens"],
                             "head_tokens": text_changes[0]["head_tokens"], "file": "shared.py", "line": line,
                             "diff": text_changes[0]["diff"]}]
    assert "\n-- Never ask for passwords or full card numbers.\n+- Never ask for passwords, card numbers or one-time codes." in text_changes[0]["diff"]
    assert document["cache_prefix"]["broken_by"] == "house-rules"
    shown = replay(project, "--run", run_id, "--step", "1", "--source", "current")
    assert f"context house-rules changed" in shown.stdout and f"(shared.py:{line})" in shown.stdout


def test_a_target_gone_from_the_source_is_a_clear_error(recorded_sample: tuple[Path, str]) -> None:
    project, run_id = recorded_sample
    agent_file = project / "05_agent.py"
    agent_file.write_text(agent_file.read_text().replace('agent(\n    "support-agent"', 'agent(\n    "renamed-agent"').replace('agent("support-agent"', 'agent("renamed-agent"'))
    done = replay_process(project, "--run", run_id, "--source", "current")
    assert done.returncode != 0
    assert "no longer exists in the source" in done.stderr and "Traceback" not in done.stderr
