"""What expectations cost, and whether judging them is deterministic and free.

Run: .venv/bin/python benchmarks/bench_expectations.py

1. ``check`` of two copies of ``sample_project`` that differ only in their expectations: one with
   none, one with 100 over the sample's 17 examples (claims that hold, of every kind, generated from
   the sample's own plans and written into its lesson files). Medians of 5 runs each, alternated,
   wall clock. Target: at most 1.2x.
2. ``check --json`` of the copy with 100 expectations twice: byte-identical. Target: yes.
3. Every example planned and judged in this process through the pytest plugin's engine, with every
   model adapter's ``complete`` counted. Target: 0 model calls.
4. ``pytest --collect-only`` of a project of 50 test files that does not use the plugin, with the
   plugin installed and with it blocked (``-p no:crux_devtools``): medians of 9 runs each,
   alternated. Target: at most +5 ms.
"""

from __future__ import annotations

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
TOTAL = 100

# Appended to every lesson file of both copies: each module-level prompt (and each agent over one)
# rebuilt with the expectations of CLAIMS (none in one copy), so the copies differ only in those.
REBIND = '''

import dataclasses as _dc

from crux_devtools import Agent as _Agent, Prompt as _Prompt, expect as _expect

CLAIMS = {claims!r}


def _built(calls):
    made = _expect()
    for kind, args in calls:
        made = getattr(made, kind)(*args)
    return made


_rebuilt = {{}}
for _name, _value in list(globals().items()):
    if isinstance(_value, _Prompt):
        _rebuilt[id(_value)] = globals()[_name] = _dc.replace(
            _value, expectations={{ex: _built(calls) for ex, calls in CLAIMS.get(_value.id, {{}}).items()}})
for _name, _value in list(globals().items()):
    if isinstance(_value, _Agent) and id(_value.prompt) in _rebuilt:
        globals()[_name] = _dc.replace(_value, prompt=_rebuilt[id(_value.prompt)])
'''


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CLI, *args], capture_output=True, text=True, check=False)


def copy(tmp: Path, name: str, claims: dict[str, Any]) -> Path:
    root = tmp / name
    shutil.copytree(REPO / "sample_project", root, ignore=shutil.ignore_patterns("data", ".crux", "__pycache__"))
    for lesson in sorted(root.glob("0*_*.py")):
        lesson.write_text(lesson.read_text() + REBIND.format(claims=claims))
    return root


def claims_that_hold(report: dict[str, Any]) -> dict[str, dict[str, list[tuple[str, tuple[Any, ...]]]]]:
    """``TOTAL`` judged expectations that hold, of every kind, from each example's own plan, spread
    round-robin over the examples. Claims are written on prompts; an agent's examples are its
    prompt's, so a claim there is judged twice (for the prompt and for the agent) and counts twice."""
    from crux_devtools.core.plan.expectations import PlanFacts

    over = {}  # prompt id -> how many targets judge its examples
    for prompt in report["prompts"]:
        over[prompt["id"]] = over.get(prompt["id"], 0) + 1
    over["agent-reply"] = 2  # the sample's support-agent is an agent over agent-reply
    pool: list[tuple[str, str, list[tuple[str, tuple[Any, ...]]]]] = []
    for prompt in report["prompts"]:
        if prompt["kind"] != "prompt":
            continue
        for example in prompt["examples"]:
            facts = PlanFacts.from_report(example)
            calls: list[tuple[str, tuple[Any, ...]]] = [
                ("status", (facts.status,)), ("tokens", (None, (facts.input_tokens or 0) + 10)), ("cacheable_prefix", (0,)),
            ]
            calls += [("includes", (c,)) for c in facts.contexts]
            calls += [("excludes", (c,)) for c in facts.excluded]
            calls += [("rung", (c, r)) for c, r in facts.rungs.items()]
            calls += [("tool", (t,)) for t in facts.tools if t != "read_offload"]
            pool.append((prompt["id"], example["name"], calls))
    claims: dict[str, dict[str, list[tuple[str, tuple[Any, ...]]]]] = {}
    total, depth = 0, 0
    while total < TOTAL and any(depth < len(calls) for _, _, calls in pool):
        for pid, name, calls in pool:
            if depth < len(calls) and total + over[pid] <= TOTAL:
                claims.setdefault(pid, {}).setdefault(name, []).append(calls[depth])
                total += over[pid]
        depth += 1
    return claims


def timed(*args: str) -> float:
    began = time.perf_counter()
    run(*args)
    return time.perf_counter() - began


def speed(plain: Path, claimed: Path) -> None:
    run("check", str(plain)), run("check", str(claimed))  # warm caches
    without, with_ = [], []
    for _ in range(5):
        without.append(timed("check", str(plain)))
        with_.append(timed("check", str(claimed)))
    a, b = statistics.median(without), statistics.median(with_)
    print(f"check without expectations: median {a:.2f} s; with 100: median {b:.2f} s; ratio {b / a:.2f}x (target <= 1.2x)")


def determinism(claimed: Path) -> None:
    first, second = run("check", str(claimed), "--json"), run("check", str(claimed), "--json")
    results = json.loads(first.stdout)
    states = {s: sum(r["state"] == s for r in results["expectations"]) for s in ("held", "failed", "invalid", "unplanned")}
    print(f"check --json: {len(results['expectations'])} expectations judged {states}, exit {first.returncode}; "
          f"byte-identical over two runs: {first.stdout == second.stdout} (target: True)")


def model_calls(claimed: Path) -> None:
    from crux_devtools.core.run.models import AnthropicModel, OpenAICompatibleModel, ScriptedModel
    from crux_devtools.inspector.worker.planned import Project

    calls = 0
    for cls in (ScriptedModel, AnthropicModel, OpenAICompatibleModel):
        original = cls.complete

        def counted(self: Any, request: Any, _original: Any = original) -> Any:
            nonlocal calls
            calls += 1
            return _original(self, request)

        cls.complete = counted  # type: ignore[method-assign]
    project = Project(claimed)
    judged = 0
    for target in project.loaded().targets:
        for example in project.examples(target.id):
            plan = project.plan(target.id, example=example.name)
            expect = target.prompt.expectations.get(example.name)
            if expect is not None:
                plan.check(expect)
                judged += len(expect.items)
    print(f"in-process (the pytest plugin's engine): {judged} expectations judged, {calls} model calls (target 0)")


def collect_overhead(tmp: Path) -> None:
    suite = tmp / "suite"
    (suite / "tests").mkdir(parents=True)
    for i in range(50):
        (suite / "tests" / f"test_m{i:02d}.py").write_text("".join(f"def test_{j}():\n    assert {j} == {j}\n\n" for j in range(10)))
    (suite / "pyproject.toml").write_text("[tool.pytest.ini_options]\naddopts = \"-p no:cacheprovider -p no:randomly\"\n")

    def collect(*extra: str) -> float:
        began = time.perf_counter()
        subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", *extra], cwd=suite, capture_output=True, check=True)
        return time.perf_counter() - began

    collect(), collect("-p", "no:crux_devtools")
    on, off = [], []
    for _ in range(9):
        on.append(collect())
        off.append(collect("-p", "no:crux_devtools"))
    a, b = statistics.median(off), statistics.median(on)
    own = subprocess.run([sys.executable, "-X", "importtime", "-c", "import pytest, crux_devtools.pytest_plugin"], capture_output=True, text=True).stderr
    self_us = sum(int(line.split("|")[1]) for line in own.splitlines() if line.startswith("import time:") and "crux_devtools" in line)
    print(f"pytest --collect-only of 500 tests: {a * 1000:.0f} ms blocked, {b * 1000:.0f} ms with the plugin: +{(b - a) * 1000:.1f} ms "
          f"(target <= +5 ms); importing the plugin itself: {self_us / 1000:.1f} ms")


def main() -> int:
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        plain = copy(tmp, "plain", {})
        report = json.loads(run("inspect", str(plain), "--json").stdout)
        claimed = copy(tmp, "claimed", claims_that_hold(report))
        determinism(claimed)
        speed(plain, claimed)
        model_calls(claimed)
        collect_overhead(tmp)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
