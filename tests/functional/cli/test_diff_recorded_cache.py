"""``diff --runs N``: each ``run:<id>`` example shows, beside the projected cacheable prefix, the cache
reads and writes its recorded run's provider reported; a run without usage says so (the real command
in this process with in-process workers, ``cli_in_process``; a real git repository, a real SQLite
run store)."""

from __future__ import annotations

import json
from pathlib import Path

from cli_in_process import cli
from diff_helpers import make_project

from crux_devtools.core.record.runstore import RunStore



def diff(root: Path, *args: str) -> str:
    done = cli("diff", str(root), "--timeout", "30", "--runs", "2", *args, cwd=root)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_recorded_cache_reads_and_writes_sit_beside_the_projection(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    with RunStore.for_project(project) as store:
        store.write({"id": "paid", "target": "reply", "kind": "prompt", "status": "ok", "input": {"question": "Where is my refund?"},
                     "started_at": "2026-01-02T00:00:00+00:00", "steps": [],
                     "usage": {"input_tokens": 3000, "output_tokens": 20, "cache_read_tokens": 2000, "cache_write_tokens": 400,
                               "cache_write_1h_tokens": 100}})
        store.write({"id": "bare", "target": "reply", "kind": "prompt", "status": "ok", "input": {"question": "Cancel my plan"},
                     "started_at": "2026-01-01T00:00:00+00:00", "steps": []})
    shared = project / "shared.py"
    shared.write_text(shared.read_text().replace("- Be kind.", "- Be kind and brief."))

    document = json.loads(diff(project, "--format", "json"))
    reply = next(p for p in document["prompts"] if p["id"] == "reply")
    examples = {e["name"]: e for e in reply["examples"]}
    assert examples["run:paid"]["recorded_cache"] == {"cache_read_tokens": 2000, "cache_write_tokens": 400, "cache_write_1h_tokens": 100}
    assert examples["run:bare"]["recorded_cache"] is None  # the run recorded no usage: unknown, not zero
    assert "recorded_cache" not in examples["refund"]  # an example is no recorded run
    assert examples["run:paid"]["cache_prefix"]["broken_by"] == "house-rules"

    text = diff(project)
    block = text[text.index("  run:paid:"):]
    block = block[: block.index("\n  run:bare:")]
    prefix, recorded = block.splitlines()[-2:]
    assert prefix.strip().startswith("cacheable prefix ") and prefix.strip().endswith("broken by house-rules")
    assert recorded == "    recorded run: cache read 2,000 · written 400 (1h 100)"
    assert "    recorded run: no provider usage recorded (cache reads and writes unknown)" in text

    markdown = diff(project, "--format", "markdown")
    assert "- recorded run: cache read 2,000 · written 400 (1h 100)" in markdown
    assert "- recorded run: no provider usage recorded (cache reads and writes unknown)" in markdown
