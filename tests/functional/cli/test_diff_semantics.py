"""What ``crux-devtools diff`` calls a change, on real git repositories: the status comes from the
literal request, and each difference is named with its cause and the line that was edited. The
command runs in this process with in-process workers (``cli_in_process``; ``test_diff_cli.py`` runs
it as a process too)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from cli_in_process import cli
from diff_helpers import SHARED, commit_all, git, make_project

REPO = Path(__file__).resolve().parents[3]


def diff(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return cli("diff", str(root), "--timeout", "30", *args, cwd=root)


def as_json(root: Path, *args: str) -> dict[str, Any]:
    done = diff(root, "--format", "json", *args)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def sample_repo(tmp_path: Path) -> Path:
    """A copy of ``sample_project`` committed in its own git repository; its folder."""
    top = tmp_path / "repo"
    shutil.copytree(REPO / "sample_project", top / "sample_project", ignore=shutil.ignore_patterns("data", ".crux", "__pycache__"))
    git(top, "init", "-q")
    commit_all(top, "base")
    return top / "sample_project"


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path.name}"
    path.write_text(text.replace(old, new))


def example(document: dict[str, Any], prompt: str, name: str) -> dict[str, Any]:
    found = next(p for p in document["prompts"] if p["id"] == prompt)
    return next(e for e in found["examples"] if e["name"] == name)


def kinds(entry: dict[str, Any]) -> list[str]:
    return [c["kind"] for c in entry["changes"]]


def line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def test_a_reorder_of_the_blocks_is_an_order_change_and_fails_fail_on_any(tmp_path: Path) -> None:
    project = sample_repo(tmp_path)
    edit(project / "01_contexts.py", "use=[house_rules, billing, account]", "use=[billing, house_rules, account]")
    document = as_json(project)
    signed_in = example(document, "support-reply", "signed-in")
    assert signed_in["status"] == "changed"
    [order] = [c for c in signed_in["changes"] if c["kind"] == "order"]
    assert order["base"] == ["prompt", "house-rules", "product-facts", "billing", "account"]
    assert order["head"] == ["prompt", "product-facts", "billing", "house-rules", "account"]
    assert "text" not in kinds(signed_in) and "request" not in kinds(signed_in)
    assert signed_in["cache_prefix"]["broken_by"] == "product-facts"
    done = diff(project, "--fail-on", "any")
    assert done.returncode == 1 and "system blocks moved: prompt, house-rules" in done.stdout
    assert "support-reply / signed-in: changed" in done.stderr


def test_lowering_optimize_at_is_a_budget_change_and_the_rungs_it_moves_say_so_never_as_text(tmp_path: Path) -> None:
    project = sample_repo(tmp_path)
    agent = project / "05_agent.py"
    edit(agent, "optimize_at=2_800", "optimize_at=1_000")
    document = as_json(project)
    stalled = example(document, "support-agent", "stalled-sync")
    [budget] = [c for c in stalled["changes"] if c["kind"] == "budget"]
    assert budget == {"kind": "budget", "field": "optimize_at", "base": 2800, "head": 1000,
                      "file": "05_agent.py", "line": line_of(agent, "optimize_at=1_000")}
    rungs = {c["contributor"]: c for c in stalled["changes"] if c["kind"] == "rung"}
    assert rungs["catalog"]["base"] == "full" and rungs["catalog"]["head"] == "authored" and rungs["catalog"]["cause"] == "budget"
    texts = {c["context"] for c in stalled["changes"] if c["kind"] == "text"}
    assert not texts & set(rungs), "a rung change is never also a text change"
    # the droppable the planner now omits is said: it left the request for the budget
    assert {"kind": "context-left", "id": "example-replies", "reason": "budget"} in stalled["changes"]
    assert diff(project, "--fail-on", "dropped").returncode == 1
    # the prompt the agent wraps is planned without the agent's budget: unchanged
    assert example(document, "agent-reply", "stalled-sync")["status"] == "unchanged"


def test_an_agents_max_tokens_is_a_budget_change_at_its_line(tmp_path: Path) -> None:
    project = sample_repo(tmp_path)
    agent = project / "05_agent.py"
    edit(agent, "    max_steps=4,\n", "    max_steps=4,\n    max_tokens=900,\n")
    document = as_json(project)
    quiet = example(document, "support-agent", "quiet-day")
    assert quiet["status"] == "changed"
    budgets = {c["field"]: c for c in quiet["changes"] if c["kind"] == "budget"}
    assert budgets["max_tokens"] == {"kind": "budget", "field": "max_tokens", "base": None, "head": 900,
                                     "file": "05_agent.py", "line": line_of(agent, "max_tokens=900")}
    assert "request" not in kinds(quiet)
    text = diff(project).stdout
    assert "max_tokens none -> 900 (05_agent.py:" in text


def test_a_renamed_variable_and_a_priority_that_drops_nothing_are_no_change(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    shared, reply, other = root / "shared.py", root / "reply.py", root / "other.py"
    shared.write_text(shared.read_text().replace("house_rules = ", "rules_of_the_house = ").replace("priority=20", "priority=30"))
    reply.write_text(reply.read_text().replace("from shared import billing, house_rules", "from shared import billing, rules_of_the_house as house_rules"))
    other.write_text(other.read_text().replace("from shared import house_rules", "from shared import rules_of_the_house as house_rules"))
    done = diff(root, "--fail-on", "any")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().endswith("no prompt changes")


MULTILINE_RULES = SHARED.replace(
    'house_rules = context("house-rules", priority=100, system="## House rules\\n- Be kind.")',
    'house_rules = context(\n    "house-rules",\n    priority=100,\n    system=(\n        "## House rules\\n"\n        "- Be kind."\n    ),\n)',
)


def test_with_modules_listed_a_text_change_keeps_its_file_and_names_the_edited_line(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    assert MULTILINE_RULES != SHARED
    (root / "shared.py").write_text(MULTILINE_RULES)
    pyproject = (root / "pyproject.toml").read_text().replace("[tool.crux-devtools]\n", '[tool.crux-devtools]\nmodules = ["reply.py", "other.py"]\n', 1)
    (root / "pyproject.toml").write_text(pyproject)
    commit_all(root, "modules listed, rules on several lines")
    edit(root / "shared.py", '"- Be kind."', '"- Be kind.\\n- Never guess."')
    document = as_json(root)
    refund = example(document, "reply", "refund")
    [text] = [c for c in refund["changes"] if c["kind"] == "text"]
    defined = line_of(root / "shared.py", "house_rules = context(")
    edited = line_of(root / "shared.py", "- Never guess.")
    assert (text["context"], text["file"], text["line"]) == ("house-rules", "shared.py", defined)
    assert text["edit"] == {"file": "shared.py", "line": edited} and edited > defined
    assert text["diff"].splitlines()[-2:] == [" - Be kind.", "+- Never guess."]
    shown = diff(root).stdout
    assert f"(edited at shared.py:{edited}; defined at shared.py:{defined})" in shown
    assert "      +- Never guess." in shown  # the text diff under its line
    markdown = diff(root, "--format", "markdown").stdout
    assert '<pre lang="diff">' in markdown and "+- Never guess." in markdown


def test_a_text_change_from_data_has_no_edit(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    (root / "rules.txt").write_text("- Be kind.\n")
    (root / "shared.py").write_text(SHARED.replace(
        'system="## House rules\\n- Be kind."',
        'system="## House rules\\n" + (__import__("pathlib").Path(__file__).parent / "rules.txt").read_text()'))
    commit_all(root, "rules from a data file")
    (root / "rules.txt").write_text("- Be kind.\n- Be brief.\n")
    [text] = [c for c in example(as_json(root), "reply", "hello")["changes"] if c["kind"] == "text"]
    assert text["context"] == "house-rules" and text["edit"] is None and "+- Be brief." in text["diff"]


def test_a_trailing_context_that_leaves_is_what_broke_the_cache_and_unpriced_is_said_once(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    (root / "pyproject.toml").write_text("[tool.crux-devtools]\n")  # no model with a price
    commit_all(root, "unpriced")
    edit(root / "reply.py", "use=[house_rules, billing]", "use=[house_rules]")
    document = as_json(root)
    hello = example(document, "reply", "hello")
    assert {"kind": "context-left", "id": "billing", "reason": "removed"} in hello["changes"]
    assert hello["cache_prefix"]["broken_by"] in ("billing", "tools")
    other = as_json(root, "--head", "HEAD")  # nothing changed at all
    assert other["summary"]["examples"]["changed"] == 0
    shown = diff(root).stdout
    assert shown.count("unpriced") == 1 and "per 1,000 calls" not in shown
    assert "1 of 3 prompts" in shown and "2 of 4 examples changed" in shown


def test_a_tiny_cost_reads_as_money(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    pyproject = (root / "pyproject.toml").read_text().replace("input_price = 3.0", "input_price = 0.0075")
    (root / "pyproject.toml").write_text(pyproject)
    commit_all(root, "a cheap model")
    edit(root / "reply.py", 'system="You are Ari."', 'system="You are Ari, the shop\'s agent."')
    document = as_json(root)
    delta = example(document, "reply", "hello")["cost"]["delta_usd_per_1000"]
    assert 0 < delta < 0.0001
    shown = diff(root).stdout
    assert "e-0" not in shown and re.search(r"\+\$0\.0000[1-9][0-9]? per 1,000 calls", shown), shown


MASK = '''\
def _walk(value):
    if isinstance(value, str):
        return value.replace("sk-live-42", "[masked]")
    if isinstance(value, dict):
        return {k: _walk(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v) for v in value]
    return value


def redact(run):
    return _walk(run)
'''


def test_a_text_changes_diff_is_masked_by_the_projects_redact_hook(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    (root / "mask.py").write_text(MASK)
    pyproject = (root / "pyproject.toml").read_text().replace('default_model = "house-model"', 'default_model = "house-model"\nredact = "mask:redact"')
    (root / "pyproject.toml").write_text(pyproject)
    commit_all(root, "a redact hook")
    edit(root / "shared.py", "- Be kind.", "- Be kind.\\n- The test key is sk-live-42.")
    for fmt in ("text", "markdown", "json"):
        done = diff(root, "--format", fmt)
        assert done.returncode == 0, done.stderr
        assert "sk-live-42" not in done.stdout and "The test key is [masked]." in done.stdout, fmt
    [text] = [c for c in example(as_json(root), "reply", "hello")["changes"] if c["kind"] == "text"]
    assert text["diff"].endswith("+- The test key is [masked].")
