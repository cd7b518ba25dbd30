"""What replaying a recorded step costs, and how faithful it is.

Run: .venv/bin/python benchmarks/bench_replay.py

1. Fidelity: every step recorded by ``sample_project/record_demo.py`` (run in a copy of the sample
   project, by a real process) and by a generated 50-step agent run (the one of
   ``tests/replay_agent.py``: ladders of every kind, offloaded tool results, a budget it outgrows)
   is replayed with no override; the figure is the share whose replayed request equals the
   recorded ``sent`` exactly. Target: 100%.
2. A what-if re-plan of a recorded step (``--max 2000`` on step 1 of the sample agent's run): the
   core ``replay_step`` alone (read the step's plan inputs from SQLite, rebuild, plan), against one
   ``preview`` of the same request (the agent with the same input; its planning from the source), as
   a ratio; and the web panel from request to page (``GET /runs/{id}/steps/1/replay``, the replay
   running in the session's worker) through the ASGI app. Target: under 100 ms to the page.
Medians of repeated runs; the machine is shared, so the CPU time of the calling thread is shown
beside the wall clock for the in-process figures.
"""

from __future__ import annotations

import asyncio
import importlib.util
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from crux_devtools import preview  # noqa: E402
from crux_devtools.core.record.replay import Overrides, replay_step  # noqa: E402
from crux_devtools.core.record.runstore import RunStore  # noqa: E402


def fidelity(folder: Path) -> tuple[int, int, Path, str]:
    project = folder / "sample"
    shutil.copytree(REPO / "sample_project", project, ignore=shutil.ignore_patterns(".crux", "__pycache__"))
    subprocess.run([sys.executable, str(project / "record_demo.py")], check=True, capture_output=True, cwd=folder)
    from replay_agent import record_generated  # tests/replay_agent.py: a helper module, not a test file

    generated = folder / "generated"
    generated.mkdir()
    record_generated(generated, 50)
    same = total = 0
    for root in (project, generated):
        store = RunStore.for_project(root)
        for run in store.list():
            whole = store.get(run["id"]) or {}
            for step in whole.get("steps") or []:
                total += 1
                same += replay_step(store, run["id"], step["index"]).sent == step["sent"]
    sample_run = str(RunStore.for_project(project).list()[-1]["id"])
    return same, total, project, sample_run


def timed(call: Any, repeat: int = 60) -> tuple[float, float]:
    walls, cpus = [], []
    for _ in range(repeat):
        w, c = time.perf_counter(), time.thread_time()
        call()
        cpus.append((time.thread_time() - c) * 1000)
        walls.append((time.perf_counter() - w) * 1000)
    return statistics.median(walls), statistics.median(cpus)


def load_agent(project: Path) -> Any:
    sys.path.insert(0, str(project))
    spec = importlib.util.spec_from_file_location("bench_sample_agent", project / "05_agent.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def web_panel(project: Path, run_id: str, repeat: int = 30) -> float:
    import httpx

    from crux_devtools.inspector.session.service import ProjectSession
    from crux_devtools.web.app import create_app

    session = ProjectSession(project, history=False, watch=False)
    await session.start()
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(session)), base_url="http://127.0.0.1:4400") as client:
            href = f"/runs/{run_id}/steps/1/replay?max=2000&add=1"
            await client.get(href)  # warm: the worker imports the planner once
            walls = []
            for _ in range(repeat):
                started = time.perf_counter()
                page = await client.get(href)
                walls.append((time.perf_counter() - started) * 1000)
                assert page.status_code == 200 and "example-replies is sent as omitted" in page.text
            return statistics.median(walls)
    finally:
        await session.stop()


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        same, total, project, run_id = fidelity(Path(tmp))
        print(f"fidelity: {same} of {total} recorded steps replay to their recorded request exactly ({same / total:.0%}); target 100%")
        store = RunStore.for_project(project)
        run = store.get(run_id) or {}
        what_if = Overrides(max=2000)
        replay_wall, replay_cpu = timed(lambda: replay_step(store, run_id, 1, what_if))
        lesson = load_agent(project)
        step = run["steps"][1]
        history = step["sent"]["messages"][:0]
        preview_wall, preview_cpu = timed(lambda: preview(lesson.support_agent, input=run["input"], messages=history, input_budget={"max": 2000}))
        print(f"what-if re-plan (replay_step, --max 2000, step 1): median {replay_wall:.2f} ms wall, {replay_cpu:.2f} ms CPU")
        print(f"one preview of the same agent and input:           median {preview_wall:.2f} ms wall, {preview_cpu:.2f} ms CPU")
        print(f"  ratio replay / preview: {replay_cpu / preview_cpu:.2f}x (CPU), {replay_wall / preview_wall:.2f}x (wall)")
        page = asyncio.run(web_panel(project, run_id))
        print(f"web Replay panel, request to page (GET .../steps/1/replay?max=2000, worker included): median {page:.1f} ms; target < 100 ms: {'met' if page < 100 else 'MISSED'}")


if __name__ == "__main__":
    main()
