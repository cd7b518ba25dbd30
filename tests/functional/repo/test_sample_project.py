"""The sample project teaches every primitive, and passes its own check."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "sample_project"

# Every primitive of the library that a user writes, and the pattern that shows it used in a sample module.
PRIMITIVES = {
    "context": r"\bcontext\(",
    "prompt": r"\bprompt\(",
    "when (on a context)": r"\bwhen=",
    "when (wrapper)": r"\bwhen\(",
    "match": r"\bmatch\(",
    "tool": r"\btool\(",
    "falsy entry": r"\band [a-z_]+,\n",
    "nested use": r"\buse=\[",
    "priority": r"\bpriority=",
    "token budget": r"\btoken_budget=",
    "examples": r"\bexamples=",
    "prefer": r"\bprefer\(",
    "summarizable": r"\bsummarizable\(",
    "offloadable": r"\boffloadable\(",
    "droppable": r"\bdroppable\(",
    "offload": r"\boffload\(",
    "tool output policy": r"output=offloadable\(",
    "InputBudget": r"\bInputBudget\(|input_budget=",
    "agent": r"\bagent\(",
    "ScriptedModel": r"\bScriptedModel\(",
    "tool_call": r"\btool_call\(",
    "MemoryStore": r"\bMemoryStore\(",
    "memory": r"\bmemory\(",
    "recent_messages": r"\brecent_messages\(",
    "facts": r"\bfacts\(",
    "skill": r"\bskill\.from_(file|folder)\(",
}


def sample_sources() -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(SAMPLE.glob("*.py"))}


@pytest.mark.parametrize("name", sorted(PRIMITIVES))
def test_every_primitive_appears_in_at_least_one_sample_module(name):
    pattern = re.compile(PRIMITIVES[name])
    holders = [file for file, text in sample_sources().items() if pattern.search(text)]
    assert holders, f"no sample module shows {name}; add it to the lesson it belongs to"


def test_each_numbered_lesson_exists_and_says_what_it_teaches():
    lessons = sorted(p.name for p in SAMPLE.glob("0*_*.py"))
    assert lessons == ["01_contexts.py", "02_conditions.py", "03_budgets.py", "04_ladders.py", "05_agent.py", "06_memory.py"]
    for name in lessons:
        assert (SAMPLE / name).read_text().lstrip().startswith('"""Lesson'), f"{name} should open with a lesson docstring"


def test_crux_devtools_check_passes_on_the_sample_project():
    exe = Path(sys.executable).with_name("crux-devtools")
    out = subprocess.run([str(exe), "check", str(SAMPLE)], capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stdout + out.stderr
    # Every lesson's claims are expectations, and check judged each of them.
    written = sum(len(re.findall(r"\.(?:includes|excludes|dropped|tokens|rung|tool|no_tool|cacheable_prefix|status)\(", text))
                  for name, text in sample_sources().items() if name.startswith("0"))
    held = re.search(r"(\d+) expectation\(s\) held", out.stdout)
    assert held is not None and written >= 30, out.stdout
    assert int(held.group(1)) >= written  # an example shared by a prompt and its agent is judged for both


@pytest.mark.parametrize("lesson", ["01_contexts.py", "02_conditions.py", "03_budgets.py", "04_ladders.py", "05_agent.py", "06_memory.py"])
def test_every_lesson_states_its_claims_as_expectations(lesson):
    assert "expect=expect()" in (SAMPLE / lesson).read_text(), f"{lesson}: write the docstring's claims as example(..., expect=...)"


def test_the_tour_cannot_drift_from_the_code(tmp_path):
    """An edit that makes a lesson's claim false fails check, at the line of the claim."""
    import shutil

    sample = tmp_path / "sample_project"
    shutil.copytree(SAMPLE, sample, ignore=shutil.ignore_patterns(".crux", "__pycache__", "data"))
    lesson = sample / "03_budgets.py"
    lesson.write_text(lesson.read_text().replace("token_budget=150", "token_budget=400"))
    exe = Path(sys.executable).with_name("crux-devtools")
    out = subprocess.run([str(exe), "check", str(sample)], capture_output=True, text=True, timeout=180)
    assert out.returncode == 1
    claim = next(i for i, line in enumerate(lesson.read_text().splitlines(), 1) if 'dropped("style-examples", reason="budget").includes' in line)
    assert out.stdout.splitlines()[0] == (
        f"03_budgets.py:{claim}: ExpectationFailed: 'budgeted-reply' example 'with-brand-voice': "
        "expect().dropped('style-examples', reason='budget'): `style-examples` is in the request"
    )


def test_the_sample_examples_show_each_case_the_readme_tour_promises(tmp_path):
    """What the tour tells a newcomer to look at is really in the report the inspector shows.

    On a copy without ``.crux/``: following the tour in this checkout prepares a summary there."""
    import json
    import shutil

    sample = tmp_path / "sample_project"
    shutil.copytree(SAMPLE, sample, ignore=shutil.ignore_patterns(".crux", "__pycache__"))
    exe = Path(sys.executable).with_name("crux-devtools")
    out = subprocess.run([str(exe), "inspect", str(sample), "--json"], capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    examples = {(p["id"], ex["name"]): ex for p in report["prompts"] for ex in p["examples"]}

    def excluded(key):
        return {(e["id"], e["reason"]) for e in examples[key]["inspection"]["excluded_contexts"]}

    def adapted(key):
        return {(a["contributor"], a["representation"]) for a in examples[key]["preview"]["adaptations"]}

    assert ("account", "when") in excluded(("support-reply", "anonymous"))
    assert ("triage-mode", "match") in excluded(("responder", "reply-chat"))
    assert ("tone-formal", "when-wrapper") in excluded(("responder", "reply-chat"))
    assert "debug-notes" not in json.dumps(examples[("responder", "reply-chat")]["inspection"])
    drops = examples[("budgeted-reply", "with-brand-voice")]["inspection"]["dropped_contexts"]
    assert [(d["id"], d["reason"]) for d in drops] == [("style-examples", "budget")]
    assert ("sync-log", "summary") in adapted(("ladder-reply", "busy-day"))  # prepared as generate prepares it
    assert ("catalog", "authored") in adapted(("ladder-reply", "big-catalog"))
    assert adapted(("ladder-reply", "quiet-day")) == set()
    # Step 4 of the tour: the ladder prompt names no model, so the project default of pyproject.toml plans it,
    # and the log's extractive summary is prepared by the inspector, as generate prepares it before sending.
    ladder = next(p for p in report["prompts"] if p["id"] == "ladder-reply")
    assert (ladder["plan_model"]["source"], ladder["plan_model"]["name"]) == ("project", "nimbus-local")
    assert ladder["plan_model"]["profile"].startswith("pyproject.toml:")
    assert examples[("ladder-reply", "busy-day")]["preview"]["max_input_tokens"] == 5702
    assert examples[("ladder-reply", "busy-day")]["summaries"][0]["state"] == "prepared-here"
    sent = examples[("ladder-reply", "big-catalog")]["preview"]["sent"]
    assert "## Product catalog (index)" in sent["system"] and "lookup_sku" in [t["name"] for t in sent["tools"]]
    memory_text = examples[("support-with-memory", "photo-sync")]["inspection"]["system"]
    assert "left out to fit 80 tokens" in memory_text and "load_skill" in memory_text
    # Each module-level context points at the line that defines it; memory says what it read.
    contexts = {c["id"]: c for p in report["prompts"] if p["id"] == "support-reply" for c in p["contexts"]}
    shared = (SAMPLE / "shared.py").read_text().splitlines()
    assert (contexts["house-rules"]["file"], contexts["house-rules"]["line"]) == (
        "shared.py",
        next(i for i, line in enumerate(shared, 1) if line.startswith("house_rules = context(")),
    )
    memory_part = next(
        p for p in examples[("support-with-memory", "double-charge")]["inspection"]["parts"] if p["source"] == "customer-memory"
    )
    assert memory_part["detail"].startswith("namespace 'user:dana': recent: the last 2 messages")
