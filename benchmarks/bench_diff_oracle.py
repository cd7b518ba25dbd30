"""Does ``crux-devtools diff`` say "changed" exactly when the request changed? An oracle over many kinds of edit.

Run: .venv/bin/python benchmarks/bench_diff_oracle.py [--only NAME ...] [--no-speed]

A copy of ``sample_project`` (with a non-ASCII module, ``café.py``, and a git submodule,
``vendor_rules``) and a generated project (``scale_project.py``, 6 modules) are committed in real git
repositories. Each kind of edit in ``SAMPLE_EDITS`` and ``GENERATED_EDITS`` is applied to the working
tree, then:

- ``diff --format json`` (HEAD -> the working tree) gives a status per prompt and example;
- the oracle is two plain ``inspect --json`` runs: one of a fresh clone of HEAD (submodules at their
  recorded commits), one of the working tree. An example is changed when its literal request
  (``sent``: system, messages, tools, ``max_tokens``) or its status differs; added or removed when it
  exists on one side only.

A disagreement is an example whose status differs between the two. Every example ``diff`` calls
changed must also name at least one change other than ``tokens``. Target: 0 and 0 on every edit.
Then the speed of ``diff sample_project`` (one module edited) against one ``check`` (medians of 5,
alternated; target at most 1.3x), measured as ``bench_diff.py`` does.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CLI = str(Path(sys.executable).parent / "crux-devtools")
IDENTITY = ("-c", "user.name=o", "-c", "user.email=o@example.com", "-c", "protocol.file.allow=always")

CAFE = '''\
from crux_devtools import context, prompt

menu = context("café-menu", priority=60, system="## Menu\\nEspresso, crème brûlée.")
cafe_reply = prompt("café-reply", system="You serve at the café.", use=[menu], examples={"order": {}})
'''

VENDOR_RULES = '''\
from crux_devtools import context

vendor_rules = context("vendor-rules", priority=60, system="## Vendor rules\\nShip within two days.")
'''

VENDORED = '''\
from crux_devtools import prompt
from vendor_rules.rules import vendor_rules

vendored_reply = prompt("vendored-reply", system="You answer for the vendor.", use=[vendor_rules], examples={"ask": {}})
'''

NEW_PROMPT = '''\
from shared import house_rules

from crux_devtools import prompt

fresh = prompt("fresh-reply", system="A new prompt.", use=[house_rules], examples={"one": {}})
'''


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *IDENTITY, *args], cwd=root, capture_output=True, text=True, check=True).stdout


def replace(path: Path, old: str, new: str, count: int = 1) -> None:
    text = path.read_text(encoding="utf-8")
    if old not in text:
        raise SystemExit(f"edit does not apply: {old!r} is not in {path}")
    path.write_text(text.replace(old, new, count), encoding="utf-8")


@dataclass
class Edit:
    name: str
    apply: Callable[[Path], None]  # the project folder in, the working tree edited


def _sub(path: str, old: str, new: str, count: int = 1) -> Callable[[Path], None]:
    return lambda project: replace(project / path, old, new, count)


def _write(path: str, text: str) -> Callable[[Path], None]:
    return lambda project: (project / path).write_text(text, encoding="utf-8")  # type: ignore[func-returns-value]


def _delete(path: str) -> Callable[[Path], None]:
    return lambda project: (project / path).unlink()


def _rename_variable(project: Path) -> None:
    replace(project / "shared.py", "product_facts", "plan_facts", count=99)


SAMPLE_EDITS = [
    Edit("reorder", _sub("01_contexts.py", "use=[house_rules, billing, account]", "use=[billing, house_rules, account]")),
    Edit("text", _sub("shared.py", "- Never ask for passwords", "- Never, ever ask for passwords")),
    Edit("token_budget", _sub("03_budgets.py", "token_budget=150", "token_budget=120")),
    Edit("max_tokens", _sub("05_agent.py", "    max_steps=4,\n", "    max_steps=4,\n    max_tokens=900,\n")),
    Edit("optimize_at", _sub("05_agent.py", "optimize_at=2_800", "optimize_at=1_000")),
    Edit("agent max", _sub("05_agent.py", "max=4_000", "max=3_000")),
    Edit("tool description", _sub("shared.py", 'description="Look up an invoice or order by id in the billing system."',
                                  'description="Look up one invoice or order by its id."')),
    Edit("tool schema", _sub("shared.py", 'description="Order or invoice id, e.g. INV-1042"', 'description="Invoice id, e.g. INV-1042"')),
    Edit("when flip", _sub("shared.py", "when=lambda i: bool(i.customer_name),", "when=lambda i: not i.customer_name,")),
    Edit("match flip", _sub("02_conditions.py", 'cases={"triage": triage_mode, "reply": [reply_mode, friendly_tone]}',
                            'cases={"reply": triage_mode, "triage": [reply_mode, friendly_tone]}')),
    Edit("priority with a drop", _sub("03_budgets.py", "    priority=10,\n", "    priority=95,\n")),
    Edit("priority without a drop", _sub("shared.py", "    priority=80,\n", "    priority=85,\n")),
    Edit("rename of a variable", _rename_variable),
    Edit("model profile", _sub("pyproject.toml", "context_window = 8192", "context_window = 4096")),
    Edit("added prompt", _write("07_fresh.py", NEW_PROMPT)),
    Edit("removed prompt", _delete("02_conditions.py")),
    Edit("prompt's own text", _sub("01_contexts.py", 'system="You are Ari, a support agent for Nimbus cloud storage."',
                                   'system="You are Ari, the Nimbus support agent."')),
    Edit("example input", _sub("01_contexts.py", '{"message": "How much storage does Pro include?"}',
                               '{"message": "How much storage does Business include?"}')),
    Edit("data module", _sub("nimbus_data.py", "CATALOG_INDEX = ", "CATALOG_INDEX = '## Note\\\\nIndex below.\\\\n' + ")),
    Edit("data file (skill)", _sub("skills/escalation/SKILL.md", "description: When and how to escalate",
                                   "description: When and why to escalate")),
    Edit("comment only", _sub("shared.py", '"""Contexts shared', '"""The contexts shared')),
    Edit("unrelated new module", _write("scratch.py", "x = 1\n")),
    Edit("non-ASCII file name", _sub("café.py", "Espresso, crème brûlée.", "Espresso, crème brûlée, thé.")),
    Edit("submodule edit", _sub("vendor_rules/rules.py", "Ship within two days.", "Ship within one day.")),
]


def _module(n: int) -> str:
    return f"mod_{n:03d}.py"


GENERATED_EDITS = [
    Edit("generated: prompt text", lambda root: _touch(root, 3)),
    Edit("generated: shared text", _sub("common.py", "Be brief, concrete and kind.", "Be brief and kind.")),
    Edit("generated: reorder", _sub(_module(2), "use=[tone, policy,", "use=[policy, tone,", count=4)),
    Edit("generated: when flip", _sub(_module(1), '"refund" in i.question.lower()', '"password" in i.question.lower()')),
    Edit("generated: priority without a drop", _sub(_module(4), "priority=10 * i,", "priority=10 * i + 1,")),
    Edit("generated: budget with a drop", _sub(_module(5), "    input=Ask5,\n", "    input=Ask5,\n    token_budget=300,\n")),
    Edit("generated: rename of a variable", _sub(_module(0), "regional_0", "by_region_0", count=99)),
]


def _touch(root: Path, n: int) -> None:
    sys.path.insert(0, str(HERE))
    from scale_project import touch_module

    touch_module(root, n)


def sample_repository(tmp: Path) -> Path:
    """``sample_project`` with ``café.py`` and a submodule, committed; the project folder."""
    vendor = tmp / "vendor-src"
    vendor.mkdir()
    git(vendor, "init", "-q")
    (vendor / "rules.py").write_text(VENDOR_RULES, encoding="utf-8")
    git(vendor, "add", "-A")
    git(vendor, "commit", "-qm", "vendor rules")
    top = tmp / "sample-repo"
    shutil.copytree(REPO / "sample_project", top / "sample_project", ignore=shutil.ignore_patterns("data", ".crux", "__pycache__"))
    project = top / "sample_project"
    (project / "café.py").write_text(CAFE, encoding="utf-8")
    (project / "08_vendored.py").write_text(VENDORED, encoding="utf-8")
    git(top, "init", "-q")
    git(top, "submodule", "add", "-q", str(vendor), "sample_project/vendor_rules")
    git(top, "add", "-A")
    git(top, "commit", "-qm", "base")
    return project


def generated_repository(tmp: Path) -> Path:
    sys.path.insert(0, str(HERE))
    from scale_project import make_project

    root = make_project(tmp / "generated-repo", 6)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    return root


def requests(report: dict[str, Any]) -> dict[tuple[str, str], Any]:
    """(prompt, example) -> (the literal request, the status), for the prompts with examples."""
    found = {}
    for prompt in report.get("prompts") or ():
        for example in prompt["examples"]:
            preview = example.get("preview") or {}
            found[(prompt["id"], example["name"])] = (preview.get("sent"), example.get("status"))
    return found


def command(*args: str) -> subprocess.CompletedProcess[str]:
    """``crux-devtools ARGS`` as a process (the test runs the same commands in its own process)."""
    return subprocess.run([CLI, *args], capture_output=True, text=True, check=False)


def inspect(project: Path, cli: Callable[..., subprocess.CompletedProcess[str]] = command) -> dict[tuple[str, str], Any]:
    done = cli("inspect", str(project), "--json", "--timeout", "30")
    try:
        return requests(json.loads(done.stdout))
    except json.JSONDecodeError:
        raise SystemExit(f"inspect {project} printed no JSON: {done.stderr.strip()[:300]}") from None


def head_clone(project: Path, tmp: Path) -> Path:
    """A fresh clone of HEAD (its submodules at their recorded commits); the project folder in it."""
    top = Path(git(project, "rev-parse", "--show-toplevel").strip())
    clone = tmp / f"clone-{top.name}"
    if not clone.exists():
        subprocess.run(["git", *IDENTITY, "clone", "-q", "--recurse-submodules", str(top), str(clone)], capture_output=True, check=True)
    return clone / project.relative_to(top)


def oracle(before: dict[tuple[str, str], Any], after: dict[tuple[str, str], Any]) -> dict[tuple[str, str], str]:
    statuses = {}
    for key in list(after) + [k for k in before if k not in after]:
        if key not in before:
            statuses[key] = "added"
        elif key not in after:
            statuses[key] = "removed"
        else:
            statuses[key] = "changed" if before[key] != after[key] else "unchanged"
    return statuses


@dataclass
class Outcome:
    name: str
    examples: int
    changed: int
    disagreements: list[str]
    unnamed: list[str]  # changed examples with no change other than tokens
    kinds: list[str]


def restore(project: Path) -> None:
    top = Path(git(project, "rev-parse", "--show-toplevel").strip())
    git(top, "checkout", "-q", "--", ".")
    git(top, "clean", "-fdq")
    git(top, "submodule", "foreach", "-q", "git checkout -q -- . && git clean -fdq")


def check_edit(
    project: Path, edit: Edit, before: dict[tuple[str, str], Any], cli: Callable[..., subprocess.CompletedProcess[str]] = command
) -> Outcome:
    """Apply ``edit`` to the working tree, compare ``diff`` with the oracle, restore the tree."""
    try:
        edit.apply(project)
        done = cli("diff", str(project), "--format", "json", "--timeout", "30")
        if done.returncode != 0:
            return Outcome(edit.name, 0, 0, [f"diff exited {done.returncode}: {done.stderr.strip()[:200]}"], [], [])
        document = json.loads(done.stdout)
        expected = oracle(before, inspect(project, cli))
    finally:
        restore(project)
    got = {(p["id"], e["name"]): e for p in document["prompts"] for e in p["examples"]}
    wrong = [f"{k[0]}/{k[1]}: diff {got[k]['status'] if k in got else 'absent'}, oracle {status}"
             for k, status in expected.items() if (got[k]["status"] if k in got else "unchanged") != status]
    wrong += [f"{k[0]}/{k[1]}: diff {e['status']}, not in either inspect" for k, e in got.items() if k not in expected]
    unnamed = [f"{k[0]}/{k[1]}" for k, e in got.items() if e["status"] == "changed" and not [c for c in e["changes"] if c["kind"] != "tokens"]]
    kinds = sorted({c["kind"] for e in got.values() for c in e["changes"]})
    changed = sum(1 for s in expected.values() if s != "unchanged")
    return Outcome(edit.name, len(expected), changed, wrong, unnamed, kinds)


def run_oracle(
    tmp: Path, only: set[str] | None = None, cli: Callable[..., subprocess.CompletedProcess[str]] = command
) -> list[Outcome]:
    """Every edit of both projects (``only``: those names), each checked against the oracle; ``cli``
    runs one ``crux-devtools`` command (default: a process)."""
    outcomes: list[Outcome] = []
    for make, edits in ((sample_repository, SAMPLE_EDITS), (generated_repository, GENERATED_EDITS)):
        chosen = [e for e in edits if only is None or e.name in only]
        if not chosen:
            continue
        project = make(tmp)
        before = inspect(head_clone(project, tmp), cli)
        outcomes += [check_edit(project, edit, before, cli) for edit in chosen]
    return outcomes


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", nargs="*", help="names of edits to check (default: all)")
    parser.add_argument("--no-speed", action="store_true", help="skip the speed measurement")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        tmp = Path(scratch)
        outcomes = run_oracle(tmp, set(args.only) if args.only else None)
        for o in outcomes:
            verdict = "ok" if not o.disagreements and not o.unnamed else "WRONG"
            print(f"{verdict:5} {o.name}: {o.changed} of {o.examples} example(s) changed; kinds {', '.join(o.kinds) or '-'}")
            for line in o.disagreements[:5] + [f"changed with no named change: {u}" for u in o.unnamed[:5]]:
                print(f"        {line}")
        disagreements = sum(len(o.disagreements) for o in outcomes)
        unnamed = sum(len(o.unnamed) for o in outcomes)
        print(f"oracle: {len(outcomes)} kinds of edit, {sum(o.examples for o in outcomes)} example(s) compared, "
              f"{disagreements} disagreement(s), {unnamed} changed example(s) without a named change (target 0 and 0)")
        if not args.no_speed:
            sys.path.insert(0, str(HERE))
            from bench_diff import edited_copy, speed

            (tmp / "speed").mkdir()
            speed(edited_copy(tmp / "speed"))


if __name__ == "__main__":
    main()
