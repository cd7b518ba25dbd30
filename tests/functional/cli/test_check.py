"""``crux-devtools check`` fails on what ``generate`` would refuse: the real command, in this process
with in-process workers (``cli_in_process``), which answer as worker processes do."""

from __future__ import annotations

import subprocess
from pathlib import Path

from cli_in_process import cli

PROJECTS = Path(__file__).parents[2] / "projects"
REPO = Path(__file__).resolve().parents[3]


def check(project: Path) -> subprocess.CompletedProcess[str]:
    return cli("check", str(project), "--timeout", "20", cwd=REPO)


def test_check_fails_every_refusal_with_a_file_line_naming_the_prompt_and_example() -> None:
    result = check(PROJECTS / "check_truths")
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 3, lines
    over, budget, unmatched = lines
    assert over.startswith("prompts.py:16: RequestCompositionError[REQUEST_TOO_LARGE]: agent 'too-big' example 'default': plan: over-limit, ")
    assert " of 2000 input tokens" in over
    assert budget.startswith("prompts.py:24: OverTokenBudget: prompt 'wordy' example 'default': the system text is ")
    assert unmatched.startswith("prompts.py:33: UnmatchedCase: prompt 'modes' example 'typo': match(...) in 'modes' selected 'replly'")
    # The example whose key has a case, and the prompt planned against the large model it names, pass.
    assert "'known'" not in result.stdout and "'large'" not in result.stdout
    assert "3 failure(s) in 4 prompt(s)" in result.stderr


def test_check_prints_success_on_stdout_and_warnings_on_stderr() -> None:
    result = check(REPO / "sample_project")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().startswith("ok: ") and "no failures" in result.stdout
    # The sample's log summary is one generate prepares itself (no model): nothing to warn about, so
    # a CI log stays quiet although .crux/ is not in git.
    assert "warning" not in result.stdout + result.stderr
    strict = check(PROJECTS / "summaries")
    warnings = [line for line in strict.stderr.splitlines() if ": warning: " in line]
    assert warnings and all(line.split(":")[1].isdigit() for line in warnings)
    assert "warning" not in strict.stdout


def test_a_callback_that_returns_none_is_reported_at_its_own_definition() -> None:
    result = check(PROJECTS / "none_callback")
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "prompts.py:6: CallbackError: prompt 'hello' example 'default': 'greeting': system callback returned NoneType, "
        "expected str; return a string (\"\" for no text)"
    ]
