"""sample_project/record_demo.py: the sample agent run with recording on, as the README tour uses it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from crux_devtools.core.record.runstore import RunStore

REPO = Path(__file__).resolve().parents[3]


def test_the_record_demo_writes_the_sample_agents_runs_into_the_sample_projects_store(tmp_path: Path) -> None:
    sample = tmp_path / "sample_project"
    shutil.copytree(REPO / "sample_project", sample, ignore=shutil.ignore_patterns(".crux", "__pycache__"))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("CRUX_DEVTOOLS_RECORD", None)
    done = subprocess.run([sys.executable, str(sample / "record_demo.py")], capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "recorded 2 runs in" in done.stdout and str(sample / ".crux" / "runs.sqlite3") in done.stdout
    agent_line = next(n for n, line in enumerate((sample / "05_agent.py").read_text().splitlines(), 1) if line.startswith("support_agent = agent("))
    with RunStore.for_project(sample, create=False) as store:
        runs = [store.get(r["id"]) for r in store.list()]
    assert [(r["target"], r["kind"], r["origin"], r["status"], r["file"], r["line"]) for r in runs] == [
        ("support-agent", "agent", "app", "ok", "05_agent.py", agent_line)
    ] * 2
    assert sorted(r["input"]["log_hours"] for r in runs) == [1, 24]
    stalled = next(r for r in runs if r["input"]["log_hours"] == 24)
    first = stalled["steps"][0]
    assert [c["name"] for c in first["tool_calls"]] == ["lookup_sku", "fetch_sync_history", "device_report"]
    assert first["offloads"] and first["sent"]["system"].startswith("You are Ari")
    assert any(a["representation"] == "summary" for a in first["request"]["adaptations"])
    assert stalled["model"] == "nimbus-scripted" and stalled["text"].startswith("Your laptop stopped syncing")
