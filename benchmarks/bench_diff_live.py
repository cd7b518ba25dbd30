"""The live page's memory over many compared commits, and ``diff`` against ``check`` with local data.

Run: .venv/bin/python benchmarks/bench_diff_live.py [--commits N]

1. A copy of ``sample_project`` as its own git repository (its memory store git-ignored, as in this
   repository), N commits (default 50) each editing a house rule. One ``ProjectSession`` and its
   ``LiveDiff`` compare the working tree with each commit in turn, as a user picking bases on the
   Changes page would. After 5, 10, 25 and N commits: the size of what ``LiveDiff`` keeps (its base
   reports and its document, as JSON), Python's traced memory (tracemalloc), the process's RSS, and
   the token counter's memo (``core.tokens``: every distinct text counted, up to 200,000 entries;
   the review counts each whole request once). Target: what ``LiveDiff`` keeps is flat (after N at
   most 1.2x after 5), where keeping every base would grow by about one base report per commit.
2. ``diff`` of that copy with one house rule edited in the working tree (its git-ignored store
   copied into the base export) against ``check`` of the same folder: medians of 5 runs each,
   alternated. Target: diff at most 1.3x check.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CLI = str(Path(sys.executable).parent / "crux-devtools")
RULE = "- Answer in the customer's language."


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def commit(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(root, "-c", "user.name=b", "-c", "user.email=b@example.com", "commit", "-qm", message)


def project_copy(tmp: Path) -> Path:
    top = tmp / "repo"
    shutil.copytree(REPO / "sample_project", top / "sample_project", ignore=shutil.ignore_patterns(".crux", "__pycache__"))
    (top / ".gitignore").write_text("sample_project/data/*.sqlite3*\n__pycache__/\n.crux/\n")
    git(top, "init", "-q")
    commit(top, "base")
    return top / "sample_project"


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def memory(project: Path, commits: int) -> None:
    from crux_devtools.inspector.features.diff.live import MAX_BASES, LiveDiff
    from crux_devtools.inspector.session.service import ProjectSession
    from crux_devtools.review.changes import default_counter

    shared = project / "shared.py"
    shas = []
    for n in range(commits):
        shared.write_text(shared.read_text().replace(RULE, RULE + f"\\n- Rule {n}: be exact."))
        commit(project, f"rule {n}")
        shas.append(git(project, "rev-parse", "HEAD").strip())
    tracemalloc.start()
    async with ProjectSession(project, watch=False, history=False, prewarm=False) as session:
        live = LiveDiff(session)
        checkpoints = {5, 10, 25, commits}
        seen: dict[int, float] = {}
        began = time.perf_counter()
        for n, sha in enumerate(shas, 1):
            document = await live.document(sha)
            assert "error" not in document, document
            if n in checkpoints:
                kept = sum(len(json.dumps(report)) for _, report in live._bases.values()) + len(json.dumps(document))
                seen[n] = kept / 1e6
                traced = tracemalloc.get_traced_memory()[0] / 1e6
                memo = sum(len(text) for text in getattr(default_counter(), "_cache", {})) / 1e6
                print(f"after {n:3d} commits compared: LiveDiff keeps {seen[n]:5.2f} MB ({len(live.cached_shas())} bases); "
                      f"traced {traced:5.1f} MB, RSS {rss_mb():6.1f} MB, token memo {memo:5.2f} MB of text")
        one_base = len(json.dumps(live._bases[live.cached_shas()[-1]][1])) / 1e6
        seconds = time.perf_counter() - began
    first, last = seen[min(seen)], seen[commits]
    print(f"{commits} commits in {seconds:.1f} s; what LiveDiff keeps after {commits} / after {min(seen)}: {last / first:.2f}x "
          f"(target <= 1.2x; {MAX_BASES} bases kept); one base report is about {one_base:.2f} MB of JSON, so keeping "
          f"every base would hold about {one_base * commits:.0f} MB after {commits}")


def timed(*args: str) -> float:
    began = time.perf_counter()
    subprocess.run([CLI, *args], capture_output=True, text=True, check=False)
    return time.perf_counter() - began


def speed(tmp: Path) -> None:
    project = project_copy(tmp)
    subprocess.run([CLI, "check", str(project)], capture_output=True, check=False)  # seeds the git-ignored store
    shared = project / "shared.py"
    shared.write_text(shared.read_text().replace(RULE, RULE + "\\n- Before closing, restate the customer's question."))
    diffs, checks = [], []
    for _ in range(5):
        diffs.append(timed("diff", str(project)))
        checks.append(timed("check", str(project)))
    d, c = statistics.median(diffs), statistics.median(checks)
    print(f"diff sample_project (git-ignored store copied into the base): median {d:.2f} s; check: median {c:.2f} s; "
          f"ratio {d / c:.2f}x (target <= 1.3x)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--commits", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        speed(Path(tmp) / "speed")
        asyncio.run(memory(project_copy(Path(tmp) / "memory"), args.commits))


if __name__ == "__main__":
    main()
