"""``crux-devtools diff`` on git repositories built here (real git).

``diff`` runs the command in this process with in-process workers (``cli_in_process``), which answer
as worker processes do; ``diff_process`` runs it as a process with real workers, for what only a
process shows: an unchanged tree end to end, usage errors' exit codes and the timeout of hung user code."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_in_process import cli
from diff_helpers import OTHER, REPLY, commit_all, git, make_project

REPO = Path(__file__).resolve().parents[3]
CLI = str(Path(sys.executable).parent / "crux-devtools")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path)


def diff(root: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``crux-devtools diff ROOT ARGS`` in this process, its workers in-process."""
    return cli("diff", str(root), "--timeout", "30", *args, cwd=cwd or root)


def diff_process(root: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``crux-devtools diff ROOT ARGS`` as a process, with worker processes."""
    return subprocess.run([CLI, "diff", str(root), "--timeout", "30", *args], capture_output=True, text=True, timeout=300, cwd=cwd or root)


def as_json(root: Path, *args: str, run: Callable[..., subprocess.CompletedProcess[str]] = diff) -> dict:
    done = run(root, "--format", "json", *args)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def test_an_unchanged_working_tree_has_no_prompt_changes(project: Path) -> None:
    done = diff_process(project)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("no prompt changes")
    document = as_json(project, run=diff_process)
    assert document["summary"]["examples"] == {"added": 0, "removed": 0, "changed": 0, "unchanged": 4}


def test_a_shared_edit_shows_under_every_prompt_that_uses_it_with_its_file_and_line(project: Path) -> None:
    shared = project / "shared.py"
    shared.write_text(shared.read_text().replace("- Be kind.", "- Be kind.\\n- Never guess an order number."))
    document = as_json(project)
    assert document["schema"] == 1 and document["head"] == {"rev": None, "sha": None}
    assert document["base"]["rev"] == "HEAD" and len(document["base"]["sha"]) == 40
    assert document["summary"]["examples"]["changed"] == 4
    by_prompt = {p["id"]: p for p in document["prompts"]}
    assert by_prompt["triage"]["file"] == "other.py" and by_prompt["reply"]["file"] == "reply.py"
    for prompt in by_prompt.values():
        for example in prompt["examples"]:
            [text] = [c for c in example["changes"] if c["kind"] == "text"]
            assert (text["context"], text["file"], text["line"]) == ("house-rules", "shared.py", 12)
            assert text["head_tokens"] > text["base_tokens"]
            prefix = example["cache_prefix"]
            assert prefix["broken_by"] == "house-rules" and 0 < prefix["common_tokens"] <= prefix["base_tokens"]
            if prompt["id"] == "reply":  # billing follows the house rules: the cache stops at the edit
                assert prefix["common_tokens"] < prefix["base_tokens"]
            # priced from the profile: 3 $ per million input tokens, per 1,000 calls
            delta = example["head"]["input_tokens"] - example["base"]["input_tokens"]
            assert example["cost"] == {"model": "house-model", "delta_usd_per_1000": round(delta * 1000 * 3.0 / 1e6, 6)}
    text = diff(project).stdout
    assert "context house-rules changed" in text and "(edited at shared.py:12)" in text and "broken by house-rules" in text


def test_json_is_byte_identical_between_runs_timing_aside(project: Path) -> None:
    (project / "other.py").write_text(OTHER.replace("Sort the ticket.", "Sort the ticket by urgency."))
    first, second = as_json(project), as_json(project)
    assert first.pop("timing") and second.pop("timing")
    assert json.dumps(first, indent=2) == json.dumps(second, indent=2)
    [example] = next(p for p in first["prompts"] if p["id"] == "triage")["examples"]
    assert [c["context"] for c in example["changes"] if c["kind"] == "text"] == ["prompt"]
    assert example["cache_prefix"]["broken_by"] == "prompt"


def test_a_module_that_fails_at_head_is_a_finding_and_fail_on_error_fails(project: Path) -> None:
    (project / "other.py").write_text("import crux_devtools\n\nraise RuntimeError('broken at head')\n")
    done = diff(project)
    assert done.returncode == 0, done.stderr
    assert "head: other.py:3: RuntimeError: broken at head" in done.stdout
    assert "its module failed to load at head" in done.stdout
    failed = diff(project, "--fail-on", "error")
    assert failed.returncode == 1
    assert "--fail-on error: error at head: other.py:3: RuntimeError: broken at head" in failed.stderr


def test_a_project_missing_at_the_base_lists_every_prompt_as_added(project: Path) -> None:
    sub = project / "newproj"
    sub.mkdir()
    (sub / "p.py").write_text("from crux_devtools import prompt\n\np = prompt('p', system='Hi.', examples={'a': {}})\n")
    document = as_json(sub)
    assert [p["status"] for p in document["prompts"]] == ["added"]
    assert document["failures"][0]["type"] == "ProjectMissing" and document["failures"][0]["revision"] == "base"


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ("any", "reply / refund: changed"),
        ("tokens:+1%", "notes / a: input tokens"),
        ("dropped", "billing dropped for the budget"),
        ("context-left:billing", "billing left (budget)"),
        ("tool-removed", "tool refund removed"),
        ("cache-prefix:1000", "reply / refund: cacheable prefix 0 tokens (under 1000), broken by tools"),
        ("error", "triage / one: over budget at head"),
    ],
)
def test_each_fail_on_policy_fails_when_met_and_passes_when_not(project: Path, policy: str, expected: str) -> None:
    # head: longer house rules push billing (and its tools) out under a tighter budget; triage goes over its budget
    shared = project / "shared.py"
    shared.write_text(shared.read_text().replace("- Be kind.", "- Be kind. " + "Always be exact. " * 4))
    (project / "reply.py").write_text(REPLY.replace("BUDGET", "30"))
    (project / "other.py").write_text(OTHER.replace("examples=", "token_budget=2, examples=", 1))
    met = diff(project, "--fail-on", policy)
    assert met.returncode == 1, met.stdout + met.stderr
    assert f"--fail-on {policy}: " in met.stderr and expected in met.stderr
    git(project, "stash")  # the same policy on an unchanged tree passes
    assert diff(project, "--fail-on", policy).returncode == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--base", "no-such-rev"], "unknown revision 'no-such-rev'"),
        (["--fail-on", "tokens:lots"], "unknown --fail-on policy 'tokens:lots'"),
        (["--format", "html"], "'html' is not one of"),
        (["--no-such-option"], "No such option"),
    ],
)
def test_bad_invocations_exit_2_with_one_line(project: Path, args: list[str], message: str) -> None:
    done = diff_process(project, *args)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr + done.stdout


def test_outside_a_git_work_tree_exits_2(tmp_path: Path) -> None:
    (tmp_path / "p.py").write_text("from crux_devtools import prompt\n\np = prompt('p', system='Hi.')\n")
    done = diff(tmp_path)
    assert done.returncode == 2 and "is not inside a git work tree" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_markdown_and_output_file(project: Path) -> None:
    shared = project / "shared.py"
    shared.write_text(shared.read_text().replace("- Be kind.", "- Be kind, <b>always</b> | clear."))
    out = project / "diff.md"
    done = diff(project, "--format", "markdown", "--output", str(out))
    assert done.returncode == 0 and done.stdout == ""
    markdown = out.read_text()
    table, details = markdown.index("| Prompt | Example |"), markdown.index("<details>")
    assert table < details and markdown.count("<details>") == 4 and markdown.count("</details>") == 4
    assert "| <code>reply</code> | <code>refund</code> |" in markdown and "<b>always</b>" not in markdown


def test_runs_inputs_are_planned_at_both_revisions(project: Path) -> None:
    from crux_devtools.core.record.runstore import RunStore

    store = RunStore.for_project(project)
    for n, question in enumerate(["Where is my refund?", "Cancel my plan", "Old question"]):
        store.write({"id": f"r{n}", "target": "reply", "kind": "prompt", "status": "ok", "input": {"question": question},
                     "started_at": f"2026-01-0{n + 1}T00:00:00+00:00", "steps": []})
    store.close()
    shared = project / "shared.py"
    shared.write_text(shared.read_text().replace("- Be kind.", "- Be kind and brief."))
    document = as_json(project, "--runs", "2")
    reply = next(p for p in document["prompts"] if p["id"] == "reply")
    names = [e["name"] for e in reply["examples"]]
    assert names == ["refund", "hello", "run:r2", "run:r1"]
    run = reply["examples"][2]
    assert run["status"] == "changed" and any(c["kind"] == "text" and c["context"] == "house-rules" for c in run["changes"])


def test_sample_project_house_rule_changes_prompts_in_other_files_and_moves_the_cache_prefix(tmp_path: Path) -> None:
    top = tmp_path / "bigger"
    shutil.copytree(REPO / "sample_project", top / "sample_project", ignore=shutil.ignore_patterns("data", ".crux", "__pycache__"))
    (top / "README.md").write_text("a bigger repository\n")
    git(top, "init", "-q")
    commit_all(top, "base")
    shared = top / "sample_project" / "shared.py"
    rule = "- Answer in the customer's language."
    assert rule in shared.read_text()
    shared.write_text(shared.read_text().replace(rule, rule + "\\n- Before closing, restate the customer's question and confirm it is answered in full."))
    document = as_json(top / "sample_project")
    changed = [(p, e) for p in document["prompts"] for e in p["examples"] if e["status"] == "changed"]
    files = {p["file"] for p, _ in changed}
    assert len(changed) >= 10 and {"01_contexts.py", "03_budgets.py", "05_agent.py"} <= files
    for prompt, example in changed:
        assert any(c["kind"] == "text" and (c["context"], c["file"]) == ("house-rules", "shared.py") for c in example["changes"]), prompt["id"]
        prefix = example["cache_prefix"]
        assert prefix["broken_by"] == "house-rules" and prefix["common_tokens"] < prefix["base_tokens"] // 2 + 150
    budgeted = next(p for p in document["prompts"] if p["id"] == "budgeted-reply")
    left = [c for e in budgeted["examples"] for c in e["changes"] if c["kind"] == "context-left"]
    assert {"kind": "context-left", "id": "brand-voice", "reason": "budget"} in left


def test_markdown_of_a_large_review_is_cut_under_60000_characters_and_says_so(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    (root / "many.py").write_text(
        "from shared import house_rules\n\nfrom crux_devtools import prompt\n\n"
        "for i in range(60):\n"
        "    globals()[f'p{i}'] = prompt(f'prompt-number-{i:03d}-with-a-long-id', system=f'You answer question {i}.', use=[house_rules],\n"
        "                                examples={f'example-{j}-with-a-long-name': {} for j in range(3)})\n"
    )
    commit_all(root, "many prompts")
    shared = root / "shared.py"
    shared.write_text(shared.read_text().replace("- Be kind.", "- Be kind and exact."))
    done = diff(root, "--format", "markdown")
    assert done.returncode == 0, done.stderr
    markdown = done.stdout
    assert 40_000 < len(markdown) <= 60_000
    assert markdown.index("| Prompt | Example |") < markdown.index("<details>")
    assert "Cut to stay under 60,000 characters" in markdown and "detail section(s)" in markdown
    assert markdown.count("<details>") == markdown.count("</details>")
    assert "**184 of 184 examples changed" in markdown and markdown.count("| <code>prompt-number-") == 180


def test_an_edit_to_a_file_no_prompt_reads_changes_nothing_and_one_read_by_user_code_does(project: Path) -> None:
    (project / "rules.txt").write_text("- Reply in English.")
    (project / "notes.md").write_text("team notes\n")
    (project / "read.py").write_text(
        "from pathlib import Path\n\nfrom crux_devtools import prompt\n\n"
        "rules = prompt('rules', system=(Path(__file__).parent / 'rules.txt').read_text(), examples={'a': {}})\n"
    )
    commit_all(project, "a prompt that reads a data file")
    (project / "notes.md").write_text("team notes, edited\n")  # no prompt reads it
    document = as_json(project)
    assert document["summary"]["examples"]["changed"] == 0
    (project / "rules.txt").write_text("- Reply in English or French.")  # read by user code at import
    document = as_json(project)
    [example] = next(p for p in document["prompts"] if p["id"] == "rules")["examples"]
    assert [c["context"] for c in example["changes"] if c["kind"] == "text"] == ["prompt"]


def test_a_module_that_hangs_at_the_base_is_a_finding_of_the_base(project: Path) -> None:
    (project / "slow.py").write_text("import crux_devtools\n\nwhile True:\n    pass\n")
    commit_all(project, "a module that hangs")
    (project / "slow.py").write_text("from crux_devtools import prompt\n\nfast = prompt('fast', system='Quick.', examples={'a': {}})\n")
    done = diff_process(project, "--timeout", "3")  # a hung import is killed: worker processes
    assert done.returncode == 0, done.stderr
    [line] = [x for x in done.stdout.splitlines() if x.startswith("base: slow.py:")]
    assert "Timeout" in line or "timed out" in line or "seconds" in line, line
    assert "fast (prompt, slow.py:3): added" in done.stdout


def test_a_prompt_without_examples_is_listed_as_not_compared(project: Path) -> None:
    (project / "bare.py").write_text(
        "from pydantic import BaseModel\n\nfrom crux_devtools import prompt\n\n\nclass Needs(BaseModel):\n    name: str\n\n\n"
        "bare = prompt('bare', system='Hi.', input=Needs, prompt=lambda i: i.name)\n"
    )
    commit_all(project, "a prompt with required inputs and no examples")
    done = diff(project)
    assert done.returncode == 0 and "not compared: bare (bare.py): no examples" in done.stdout


def test_a_shallow_clone_without_the_base_says_so(project: Path, tmp_path: Path) -> None:
    (project / "other.py").write_text(OTHER.replace("Sort the ticket.", "Sort it."))
    commit_all(project, "second")
    clone = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", project.as_uri(), str(clone)], check=True, capture_output=True)
    done = diff(clone, "--base", "HEAD~1")
    assert done.returncode == 2 and "unknown revision 'HEAD~1' (this is a shallow clone" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_added_removed_and_changed_prompts_each_get_their_status(project: Path) -> None:
    for n in range(3):
        (project / f"mod{n}.py").write_text(
            f"from shared import house_rules\n\nfrom crux_devtools import prompt\n\np{n} = prompt('p{n}', system='Module {n}.', use=[house_rules], examples={{'a': {{}}}})\n"
        )
    commit_all(project, "three more modules")
    (project / "mod1.py").write_text((project / "mod1.py").read_text().replace("Module 1.", "Module one."))
    (project / "new.py").write_text("from crux_devtools import prompt\n\nnew = prompt('new', system='New.', examples={'a': {}})\n")
    (project / "other.py").unlink()
    in_turn = as_json(project)
    statuses = {p["id"]: p["status"] for p in in_turn["prompts"]}
    assert statuses == {"reply": "unchanged", "p0": "unchanged", "p1": "changed", "p2": "unchanged", "new": "added",
                        "triage": "removed", "notes": "removed"}
    # a file git ignores is the same at both revisions: it changes no status
    (project / ".gitignore").write_text("local.txt\n")
    (project / "local.txt").write_text("kept out of git\n")
    again = as_json(project)
    assert {p["id"]: p["status"] for p in again["prompts"]} == statuses


SECRET = "sk-live-0123456789"
HUSH = f'''\
SECRET = {SECRET!r}


def _walk(value):
    if isinstance(value, str):
        return value.replace(SECRET, "*" * len(SECRET))
    if isinstance(value, dict):
        return {{k: _walk(v) for k, v in value.items()}}
    if isinstance(value, list):
        return [_walk(v) for v in value]
    return value


def redact(run):
    print("user code may print")  # kept out of the answer
    return _walk(run)
'''


def test_the_projects_redact_hook_masks_the_review_and_the_recorded_inputs(project: Path, tmp_path: Path) -> None:
    from crux_devtools.core.record.runstore import RunStore

    log = tmp_path / "inputs.log"
    echo = (
        "from pydantic import BaseModel\n\nfrom crux_devtools import prompt\n\n\nclass Q(BaseModel):\n    question: str\n\n\n"
        f"def text(i):\n    with open({str(log)!r}, 'a') as f:\n        f.write(i.question + '\\n')\n    MARK\n    return i.question\n\n\n"
        f"echo = prompt('echo', system='Echo.', input=Q, prompt=text, examples={{'ex': {{'question': 'key {SECRET}'}}}})\n"
    )
    (project / "echo.py").write_text(echo.replace("MARK", "pass"))
    (project / "hush.py").write_text(HUSH)
    text = (project / "pyproject.toml").read_text().replace('default_model = "house-model"', 'default_model = "house-model"\nredact = "hush:redact"')
    (project / "pyproject.toml").write_text(text)
    commit_all(project, "a prompt that echoes its input")
    store = RunStore.for_project(project)
    store.write({"id": "r0", "target": "echo", "kind": "prompt", "status": "ok", "input": {"question": f"run {SECRET}"},
                 "started_at": "2026-01-01T00:00:00+00:00", "steps": []})
    store.close()
    (project / "echo.py").write_text(echo.replace("MARK", "raise ValueError('refusing ' + i.question)"))
    for fmt in ("text", "markdown", "json"):
        done = diff(project, "--runs", "1", "--format", fmt)
        assert done.returncode == 0, done.stderr
        assert SECRET not in done.stdout + done.stderr and "user code may print" not in done.stdout
        assert "refusing key " + "*" * len(SECRET) in done.stdout, done.stdout
    # the recorded input went through the hook before it was planned: the prompt never saw the secret
    planned = log.read_text()
    assert "run " + "*" * len(SECRET) in planned and f"run {SECRET}" not in planned


@pytest.mark.parametrize(("setting", "message"), [
    ('"hush_missing:redact"', "redact hook hush_missing:redact failed: ModuleNotFoundError"),
    ('"not a spec"', "[tool.crux-devtools] redact must be \"module:function\""),
    ('"hush:SECRET"', "redact hook hush:SECRET failed: TypeError: hush:SECRET is a str, not a function"),
])
def test_a_redact_hook_that_cannot_run_stops_the_review_with_one_line(project: Path, setting: str, message: str) -> None:
    (project / "hush.py").write_text(HUSH)
    text = (project / "pyproject.toml").read_text().replace('default_model = "house-model"', f'default_model = "house-model"\nredact = {setting}')
    (project / "pyproject.toml").write_text(text)
    done = diff(project)
    assert done.returncode == 2 and done.stdout == "", done.stdout
    [line] = done.stderr.strip().splitlines()
    assert message in line, line
