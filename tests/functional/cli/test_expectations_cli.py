"""``check`` and ``diff --fail-on expect`` enforce expectations, on real git repositories: the commands
run in this process with in-process workers (``cli_in_process``; ``test_check.py`` and
``test_diff_cli.py`` run them as processes)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from cli_in_process import cli
from diff_helpers import commit_all, git

BUDGETED = '''\
from crux_devtools import context, example, expect, prompt

style = context("style-examples", system="Example one. " * 20, priority=45)
brand = context("brand-voice", system="Calm and exact. " * 20, priority=30)

reply = prompt(
    "reply",
    system="You help.",
    use=[style, brand],
    token_budget=BUDGET,
    prompt="hi",
    examples={
        "voiced": example({}, expect=expect()
            .includes("brand-voice")
            .tokens(max=400)),
        "plain": {},
    },
)
'''


def run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return cli(*args, cwd=root)


def repo(tmp_path: Path, text: str) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    (root / "prompts.py").write_text(text)
    commit_all(root, "base")
    return root


def test_check_counts_expectations_that_hold_and_fails_at_the_line_of_one_that_does_not(tmp_path: Path) -> None:
    root = repo(tmp_path, BUDGETED.replace("BUDGET", "400"))
    ok = run(root, "check", ".")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert ok.stdout.strip() == "ok: 1 prompt(s), 2 example(s), 2 expectation(s) held, no failures"
    what_if = run(root, "inspect", ".", "--token-budget", "150")  # a what-if budget shows the claims it breaks, without failing
    assert what_if.returncode == 0 and "✗ expect().includes('brand-voice') does not hold (prompts.py:14)" in what_if.stdout
    (root / "prompts.py").write_text(BUDGETED.replace("BUDGET", "150"))
    failed = run(root, "check", ".")
    assert failed.returncode == 1
    assert failed.stdout.splitlines() == [
        "prompts.py:14: ExpectationFailed: 'reply' example 'voiced': expect().includes('brand-voice'): `brand-voice` dropped (budget); "
        "`brand-voice` left: budget 150, priority 30 < `style-examples` 45"
    ]
    shown = run(root, "inspect", ".")
    assert shown.returncode == 1  # inspect fails on what it printed failing, as check does
    assert "    expectations: 1 of 2 expectations hold" in shown.stdout
    assert "      ✗ expect().includes('brand-voice') does not hold (prompts.py:14): `brand-voice` dropped (budget); " in shown.stdout
    assert "      ✓ expect().tokens(max=400) holds (prompts.py:15)" in shown.stdout
    listed = json.loads(run(root, "check", ".", "--json").stdout)
    assert listed["ok"] is False and listed["held"] == 1
    assert [(r["example"], r["expect"], r["state"], r["line"]) for r in listed["expectations"]] == [
        ("voiced", "includes('brand-voice')", "failed", 14), ("voiced", "tokens(max=400)", "held", 15),
    ]


def test_a_name_the_prompt_does_not_have_fails_check_with_a_did_you_mean(tmp_path: Path) -> None:
    root = repo(tmp_path, BUDGETED.replace("BUDGET", "400").replace('.includes("brand-voice")', '.excludes("brand-vioce").tool("lookup")'))
    out = run(root, "check", ".")
    assert out.returncode == 1
    lines = out.stdout.splitlines()
    assert lines[0].startswith("prompts.py:14: InvalidExpectation: 'reply' example 'voiced': expect().excludes('brand-vioce'); "
                               "the prompt has no context 'brand-vioce'; did you mean 'brand-voice'?")
    assert lines[1].startswith("prompts.py:14: InvalidExpectation: 'reply' example 'voiced': expect().tool('lookup'); the prompt has no tool 'lookup'")


def test_expectations_of_an_example_that_fails_to_plan_are_reported_as_not_checked(tmp_path: Path) -> None:
    text = BUDGETED.replace("BUDGET", "400").replace("example({}, expect", 'example({"nope": 1}, expect')
    out = run(repo(tmp_path, text), "check", ".")
    assert out.returncode == 1
    unchecked = [line for line in out.stdout.splitlines() if "ExpectationNotChecked" in line]
    assert len(unchecked) == 2 and unchecked[0].startswith("prompts.py:14: ExpectationNotChecked: 'reply' example 'voiced': expect().includes('brand-voice'): status invalid-input; the example did not plan")


def test_a_contradictory_bound_is_a_load_error_at_its_line(tmp_path: Path) -> None:
    out = run(repo(tmp_path, BUDGETED.replace("BUDGET", "400").replace("tokens(max=400)", "tokens(min=500, max=400)")), "check", ".")
    assert out.returncode == 1
    assert "prompts.py:15: ValueError: " in out.stdout and "min is greater than max" in out.stdout


def test_diff_fail_on_expect_fails_only_when_an_expectation_that_held_at_base_does_not_at_head(tmp_path: Path) -> None:
    root = repo(tmp_path, BUDGETED.replace("BUDGET", "400"))
    (root / "prompts.py").write_text(BUDGETED.replace("BUDGET", "300"))  # a change that keeps every claim
    kept = run(root, "diff", "--fail-on", "expect")
    assert kept.returncode == 0, kept.stdout + kept.stderr
    (root / "prompts.py").write_text(BUDGETED.replace("BUDGET", "150"))
    broken = run(root, "diff", "--fail-on", "expect")
    assert broken.returncode == 1
    assert ("--fail-on expect: prompts.py:14: reply / voiced: expect().includes('brand-voice') held at base, failed at head: "
            "`brand-voice` dropped (budget); `brand-voice` left: budget 150, priority 30 < `style-examples` 45") in broken.stderr + broken.stdout
    document = json.loads(run(root, "diff", "--format", "json").stdout)
    voiced = document["prompts"][0]["examples"][0]
    assert [(e["expect"], e["base"], e["head"]) for e in voiced["expectations"]] == [
        ("includes('brand-voice')", "held", "failed"), ("tokens(max=400)", "held", "held"),
    ]
    assert "expectations" not in document["prompts"][0]["examples"][1]  # a plain dict example has none
    # An expectation that already failed at base is not news at head.
    commit_all(root, "budget 150")
    (root / "prompts.py").write_text(BUDGETED.replace("BUDGET", "140"))
    assert run(root, "diff", "--fail-on", "expect").returncode == 0
