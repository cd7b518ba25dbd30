"""What ``crux-devtools diff`` costs, and whether it ever reports a change that is not there.

Run: .venv/bin/python benchmarks/bench_diff.py [--history N]

1. ``diff`` of a copy of ``sample_project`` (its own git repository; one house rule added to
   ``shared.py`` in the working tree) against ``check`` of the same folder: medians of 5 runs each,
   alternated, wall clock. Target: diff at most 1.3x check.
2. ``diff --runs 100``: 100 recorded inputs planned at both revisions. Target: under 10 s.
3. The generated scale project (``scale_project.py``) of 10 and of 100 modules, one module edited
   in the working tree: ``diff`` time at 100 against 10 (target: at most 2x), and ``diff`` after an
   edit to a file no prompt reads against ``check`` (target: about 1x).
4. False positives on this repository's own history: for the newest N commits (default 10) that
   touched ``sample_project/``, ``diff --base C^ --head C`` beside an independent oracle, ``inspect
   --json`` of each revision compared example by example on the literal request, its input tokens
   and its status. An example ``diff`` calls changed whose request, tokens and status are all equal
   is a false positive. Target: 0.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CLI = str(Path(sys.executable).parent / "crux-devtools")
RULE = "- Answer in the customer's language."


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def timed(*args: str) -> float:
    began = time.perf_counter()
    subprocess.run([CLI, *args], capture_output=True, text=True, check=False)
    return time.perf_counter() - began


def edited_copy(tmp: Path) -> Path:
    top = tmp / "repo"
    shutil.copytree(REPO / "sample_project", top / "sample_project", ignore=shutil.ignore_patterns("data", ".crux", "__pycache__"))
    git(top, "init", "-q")
    git(top, "add", "-A")
    git(top, "-c", "user.name=b", "-c", "user.email=b@example.com", "commit", "-qm", "base")
    shared = top / "sample_project" / "shared.py"
    shared.write_text(shared.read_text().replace(RULE, RULE + "\\n- Before closing, restate the customer's question."))
    return top / "sample_project"


def speed(project: Path) -> None:
    subprocess.run([CLI, "check", str(project)], capture_output=True, check=False)  # warm caches
    diffs, checks = [], []
    for _ in range(5):
        diffs.append(timed("diff", str(project)))
        checks.append(timed("check", str(project)))
    d, c = statistics.median(diffs), statistics.median(checks)
    print(f"diff sample_project (one module changed): median {d:.2f} s; check: median {c:.2f} s; ratio {d / c:.2f}x (target <= 1.3x)")


def runs(project: Path) -> None:
    from crux_devtools.core.record.runstore import RunStore

    store = RunStore.for_project(project)
    for i in range(100):
        store.write({"id": f"bench{i:03d}", "target": "support-reply", "kind": "prompt", "status": "ok",
                     "input": {"message": f"Question {i}?"}, "started_at": f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}+00:00", "steps": []})
    store.close()
    seconds = timed("diff", str(project), "--runs", "100", "--format", "json")
    print(f"diff --runs 100: {seconds:.2f} s (target < 10 s)")


def scale(tmp: Path) -> None:
    sys.path.insert(0, str(REPO / "benchmarks"))
    from scale_project import make_project, touch_module

    times: dict[int, float] = {}
    checks: dict[int, float] = {}
    for modules in (10, 100):
        root = make_project(tmp / f"scale{modules}", modules)
        git(root, "init", "-q")
        git(root, "add", "-A")
        git(root, "-c", "user.name=b", "-c", "user.email=b@example.com", "commit", "-qm", "base")
        touch_module(root, 7 % modules)
        subprocess.run([CLI, "check", str(root)], capture_output=True, check=False)
        diffs, checked = [], []
        for _ in range(5):  # alternated, so both see the same load
            diffs.append(timed("diff", str(root)))
            checked.append(timed("check", str(root)))
        times[modules], checks[modules] = statistics.median(diffs), statistics.median(checked)
        print(f"diff, {modules} modules, one edited: median {times[modules]:.2f} s; check: median {checks[modules]:.2f} s")
        if modules == 100:
            git(root, "checkout", "-q", ".")
            (root / "NOTES.md").write_text("nobody reads this\n")
            unread = statistics.median(timed("diff", str(root)) for _ in range(3))
            checked = statistics.median(timed("check", str(root)) for _ in range(3))
            print(f"diff after an edit no prompt reads, 100 modules: {unread:.2f} s; check: {checked:.2f} s; ratio {unread / checked:.2f}x")
    print(f"one-module change, 100 against 10 modules: {times[100] / times[10]:.2f}x (target <= 2x); "
          f"check at 100 against 10: {checks[100] / checks[10]:.2f}x (every example is planned once: the floor)")


def requests(report: dict[str, Any]) -> dict[tuple[str, str], Any]:
    found = {}
    for prompt in report.get("prompts") or ():
        for example in prompt["examples"]:
            preview = example.get("preview") or {}
            found[(prompt["id"], example["name"])] = (preview.get("sent"), preview.get("input_tokens"), example.get("status"))
    return found


def inspect_at(commit: str, tmp: Path) -> dict[tuple[str, str], Any]:
    folder = tmp / commit
    folder.mkdir()
    archive = subprocess.run(["git", "archive", "--format=tar", commit], cwd=REPO, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    done = subprocess.run([CLI, "inspect", str(folder / "sample_project"), "--json"], capture_output=True, text=True, check=False)
    try:
        return requests(json.loads(done.stdout))
    except json.JSONDecodeError:
        return {}


def git_checkout() -> str | None:
    """Why the history part cannot run here (``None`` when this folder is a git checkout's own top)."""
    if shutil.which("git") is None:
        return "git is not installed"
    done = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=REPO, capture_output=True, text=True, check=False)
    if done.returncode != 0 or Path(done.stdout.strip()).resolve() != REPO.resolve():
        return f"{REPO} is not a git checkout (a copy without .git, e.g. from git archive)"
    return None


def history(count: int, tmp: Path) -> None:
    missing = git_checkout()
    if missing is not None:
        print(f"history: skipped, it diffs this repository's own commits and {missing}")
        return
    commits = git(REPO, "log", "--format=%h", f"-n{count}", "--", "sample_project").split()
    false_positives = 0
    for commit in commits:
        done = subprocess.run([CLI, "diff", str(REPO / "sample_project"), "--base", f"{commit}^", "--head", commit, "--format", "json"],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            print(f"  {commit}: diff exited {done.returncode}: {done.stderr.strip()[:120]}")
            continue
        document = json.loads(done.stdout)
        before, after = inspect_at(f"{commit}^", tmp), inspect_at(commit, tmp)
        flagged = [(p["id"], e["name"]) for p in document["prompts"] for e in p["examples"] if e["status"] == "changed"]
        wrong = [key for key in flagged if key in before and before[key] == after.get(key)]
        false_positives += len(wrong)
        print(f"  {commit}: {len(flagged)} example(s) changed, {len(wrong)} false positive(s) {wrong[:3] if wrong else ''}")
    print(f"history: {len(commits)} commit(s) touching sample_project, {false_positives} false positive(s) (target 0)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--history", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        tmp = Path(scratch)
        project = edited_copy(tmp)
        speed(project)
        runs(project)
        scale(tmp)
        history(args.history, tmp)


if __name__ == "__main__":
    main()
