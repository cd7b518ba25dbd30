"""Edit-to-report latency of the inspector engine, and what starting a worker costs.

Run: .venv/bin/python benchmarks/bench_engine.py
Copies sample_project/ to a temporary folder, opens a live ProjectSession on it and saves a file 20
times (a changed system text each time, a pause between saves as when a person edits); the latency
is from the write to the session holding the new report. Target: median <= 150 ms.
Also prints what each way of getting a fresh worker costs: a fresh interpreter (start, import the
library, pydantic and tiktoken, warm up), or a fork of the pre-warmed fork server (the default).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from crux_devtools.inspector.api import SessionEvent  # noqa: E402
from crux_devtools.inspector.session.discovery import discover  # noqa: E402
from crux_devtools.inspector.transport.forkserver import ForkServer  # noqa: E402
from crux_devtools.inspector.transport.process import SpawnedWorker  # noqa: E402
from crux_devtools.inspector.session.service import ProjectSession  # noqa: E402

SAVES = 20
EDITED = "01_contexts.py"
MARKER = "You are Ari, a support agent for Nimbus cloud storage."


def summary(name: str, values: list[float]) -> str:
    values = sorted(values)
    p90 = values[max(0, int(len(values) * 0.9) - 1)]
    return f"{name}: median {statistics.median(values):.0f} ms, p90 {p90:.0f} ms, min {values[0]:.0f} ms, max {values[-1]:.0f} ms (n={len(values)})"


async def worker_costs(root: Path, runs: int = 5) -> None:
    modules = [m.to_dict() for m in discover(root).modules]
    fresh, warm_load = [], []
    for _ in range(runs):
        started = time.perf_counter()
        worker = await SpawnedWorker.start(root)
        await worker.wait_ready()
        ready = time.perf_counter()
        await worker.call("load", {"root": str(root), "modules": modules}, 30)
        done = time.perf_counter()
        await worker.close()
        fresh.append((done - started) * 1000)
        warm_load.append((done - ready) * 1000)
    print(summary("fresh interpreter, start + warm-up + load", fresh))
    print(summary("worker already warm: project import + evaluation only", warm_load))


async def fork_costs(root: Path, runs: int = 10) -> None:
    server = ForkServer(root)
    started = time.perf_counter()
    await server.start()
    print(f"fork server start (interpreter + warm-up, once per session): {(time.perf_counter() - started) * 1000:.0f} ms")
    forks = []
    try:
        for _ in range(runs):
            started = time.perf_counter()
            worker = await server.fork()
            await worker.call("ping", {}, 10)
            forks.append((time.perf_counter() - started) * 1000)
            await worker.close()
    finally:
        await server.close()
    print(summary("forked worker, fork + connect + first answer", forks))


async def edit_to_report(root: Path, *, fork: bool, saves: int, worker_ms: list[float] | None = None) -> list[float]:
    session = ProjectSession(root, debounce=0.01, fork=fork)
    arrived: asyncio.Queue[float] = asyncio.Queue()

    def on_event(event: SessionEvent) -> None:
        if event.kind in ("report", "error"):
            arrived.put_nowait(time.perf_counter())

    await session.start()
    session.subscribe(on_event)
    path = root / EDITED
    original = path.read_text(encoding="utf-8")
    latencies = []
    try:
        for i in range(saves):
            await session.settled()  # a person saves seconds apart: the spare worker is warm by then
            await asyncio.sleep(0.1)
            while not arrived.empty():  # a verification's "verified" event, not this save's report
                arrived.get_nowait()
            started = time.perf_counter()
            path.write_text(original.replace(MARKER, f"{MARKER} Revision {i}."), encoding="utf-8")
            finished = await asyncio.wait_for(arrived.get(), 60)
            latencies.append((finished - started) * 1000)
            report = session.report
            assert report is not None and not report["errors"], report and report["errors"]
            if worker_ms is not None:
                worker_ms.append(report["duration_ms"])
    finally:
        await session.stop()
    return latencies


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "sample_project"
        shutil.copytree(HERE.parent / "sample_project", root, ignore=shutil.ignore_patterns(".crux", "__pycache__", "*.sqlite3*"))
        print(f"sample project: {len(discover(root).modules)} modules; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        await worker_costs(root)
        await fork_costs(root)
        inside: list[float] = []
        print(summary(f"edit-to-report, forked from the pre-warmed server ({SAVES} saves)", await edit_to_report(root, fork=True, saves=SAVES, worker_ms=inside)))
        print(summary("  of which the worker's import + evaluation", inside))
        print(summary("edit-to-report, fresh interpreters, spare started ahead (5 saves)", await edit_to_report(root, fork=False, saves=5)))
        print("target: median edit-to-report <= 150 ms")


if __name__ == "__main__":
    asyncio.run(main())
