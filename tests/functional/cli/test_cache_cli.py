"""``crux-devtools cache`` as a real command over a project with one cache breaker per prompt: each
block classified, the breaker named with its file:line, the fix suggested, no model called. It runs
in this process with in-process workers (``cli_in_process``), and as a process for its usage errors'
exit code."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from cli_in_process import cli

from crux_devtools.core.record.runstore import RunStore

PROJECTS = Path(__file__).parents[2] / "projects"
REPO = Path(__file__).resolve().parents[3]
BREAKERS = {  # prompt -> (the block that breaks the cache, its class, the line it is defined on)
    "timestamp": ("clock", "per-request", 36),
    "random-id": ("request-id", "per-request", 37),
    "unsorted-dict": ("prefs", "per-input", 38),
    "per-user": ("user-profile", "per-input", 40),
    "model-switch": ("small-notes", "per-input", 41),
    "when-flip": ("vip-note", "per-input", 43),
    "rung-change": ("history", "per-input", 44),
}


def cache(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``crux-devtools cache PROJECT ARGS`` in this process, its workers in-process."""
    return cli("cache", str(project), "--timeout", "20", *args, cwd=REPO)


def cache_process(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``crux-devtools cache PROJECT ARGS`` as a process, with worker processes."""
    return subprocess.run(
        [str(Path(sys.executable).parent / "crux-devtools"), "cache", str(project), "--timeout", "20", *args],
        capture_output=True, text=True, timeout=180, cwd=REPO,
    )


def test_every_breaker_is_named_with_its_class_file_line_and_the_move_that_fixes_it(tmp_path):
    project = tmp_path / "breakers"
    shutil.copytree(PROJECTS / "cache_breakers", project)
    result = cache(project, "--format", "json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["schema"] == 1
    targets = {t["id"]: t for t in doc["targets"]}
    for target in targets.values():
        assert set(target) == {"id", "kind", "requests", "blocks", "prefix_tokens", "suggestion", "breakpoints"}
        for block in target["blocks"]:
            assert set(block) == {"id", "part", "class", "fields", "tokens", "file", "line", "differs_in"}
        catalog = next(b for b in target["blocks"] if b["id"] == "catalog")
        assert catalog["class"] == "static" and catalog["tokens"] > 3000 and (catalog["file"], catalog["line"]) == ("breakers.py", 15)
    for name, (block_id, kind, line) in BREAKERS.items():
        target = targets[name]
        block = next(b for b in target["blocks"] if b["id"] == block_id)
        assert (block["class"], block["file"], block["line"]) == (kind, "breakers.py", line), name
        assert target["prefix_tokens"] < 100, name
        suggestion = target["suggestion"]
        assert {"id": block_id, "after": "catalog"} in suggestion["moves"], name
        assert suggestion["prefix_tokens_after"] > 3000, name
    assert next(b for b in targets["per-user"]["blocks"] if b["id"] == "user-profile")["fields"] == ["user"]
    tools = targets["tool-order"]["blocks"][0]
    assert (tools["id"], tools["class"], tools["line"]) == ("tools", "per-input", 39)
    assert "refund, brought by admin-tools, breakers.py:39" in targets["tool-order"]["suggestion"]["text"]
    economics = {(p["target"], p["model"]): p for p in doc["profiles"]}
    priced = economics[("per-user", "claude-test")]
    assert priced["cache_min_tokens"] == 1024 and priced["break_even_read_share"] == round((3.75 - 3.0) / (3.75 - 0.3), 4)
    assert economics[("per-user", "small-window")]["cost_per_1000_uncached"] is None  # unpriced, never guessed
    assert economics[("per-user", "small-window")]["cache_min_tokens"] is None
    assert not (project / ".crux" / "runs.sqlite3").exists()  # nothing was run


def test_recorded_inputs_join_the_requests_and_their_gaps_suggest_a_lifetime(tmp_path):
    project = tmp_path / "breakers"
    shutil.copytree(PROJECTS / "cache_breakers", project)
    with RunStore.for_project(project) as store:
        for minute, user in ((0, "cy"), (20, "dee"), (40, "eve")):
            store.write({"target": "per-user", "kind": "prompt", "status": "ok", "input": {"question": "q", "user": user},
                         "started_at": f"2026-01-05T10:{minute:02d}:00+00:00", "steps": []})
    result = cache(project, "--target", "per-user", "--runs", "5", "--model", "claude-test")
    assert result.returncode == 0, result.stderr
    assert "per-user (prompt): 5 request(s) planned" in result.stdout
    assert "user-profile  per-input (user)" in result.stdout
    assert "differs in 4/5" in result.stdout
    assert "ttl 1h (median gap between runs 1,200 s, over 5 minutes and under an hour" in result.stdout
    assert "small-window" not in result.stdout


def test_bad_arguments_are_one_line_and_exit_2(tmp_path):
    project = tmp_path / "breakers"
    shutil.copytree(PROJECTS / "cache_breakers", project)
    unknown = cache_process(project, "--target", "nope")
    assert unknown.returncode == 2 and unknown.stderr.strip().splitlines() == [
        "Error: --target 'nope': no prompt or agent with that id; known ids: timestamp, random-id, unsorted-dict, tool-order, per-user, model-switch, when-flip, rung-change"
    ]
    model = cache_process(project, "--model", "gpt-9")
    assert model.returncode == 2 and "--model 'gpt-9': no model profile of that name" in model.stderr
