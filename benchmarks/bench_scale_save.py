"""One-file save to new report on a generated project of 10 and of 100 modules.

Run: .venv/bin/python benchmarks/bench_scale_save.py [--saves 10]
For each size, ``scale_project.make_project`` writes the project to a temporary folder, a live
ProjectSession (watching files, the default options) loads it, then ``touch_module`` rewrites one
module ``--saves`` times (a different module each time, the session settled in between, as when a
person edits); the latency is from the write to the session's new report event. Prints both medians,
the ratio 100/10 (target: at most 2x) and how the loads went (incremental or full).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from scale_project import make_project, touch_module  # noqa: E402

from crux_devtools.inspector.api import SessionEvent  # noqa: E402
from crux_devtools.inspector.session.service import ProjectSession  # noqa: E402


async def save_latencies(root: Path, modules: int, saves: int) -> tuple[list[float], dict[str, int], list[int]]:
    session = ProjectSession(root)
    arrived: asyncio.Queue[SessionEvent] = asyncio.Queue()
    await session.start()
    session.subscribe(lambda event: arrived.put_nowait(event) if event.kind in ("report", "error") else None)
    latencies: list[float] = []
    kinds: dict[str, int] = {}
    counts: list[int] = []
    try:
        for i in range(saves):
            await session.settled()
            await asyncio.sleep(0.2)
            while not arrived.empty():  # a late event of the previous save is not this save's report
                arrived.get_nowait()
            started = time.perf_counter()
            touch_module(root, (i * 7 + 3) % modules, f"Edit {i}.")
            event = await asyncio.wait_for(arrived.get(), 120)
            latencies.append((time.perf_counter() - started) * 1000)
            assert event.kind == "report", event.summary
            load = getattr(event, "load", "full")  # an older engine (to compare) has neither field
            kinds[load] = kinds.get(load, 0) + 1
            counts.append(len(getattr(event, "reevaluated", [])))
    finally:
        await session.stop()
    return latencies, kinds, counts


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--saves", type=int, default=10)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    medians: dict[int, float] = {}
    for modules in (10, 100):
        with tempfile.TemporaryDirectory() as tmp:
            root = make_project(Path(tmp) / "p", modules)
            latencies, kinds, counts = await save_latencies(root, modules, args.saves)
        medians[modules] = statistics.median(latencies)
        print(
            f"{modules:>3} modules ({modules * 4} prompts): save to report median {medians[modules]:.0f} ms, "
            f"min {min(latencies):.0f} ms, max {max(latencies):.0f} ms (n={len(latencies)}); loads {kinds}; "
            f"prompts re-evaluated per save {sorted(set(counts))}"
        )
    print(f"ratio 100/10: {medians[100] / medians[10]:.2f}x (target <= 2x)")


if __name__ == "__main__":
    asyncio.run(main())
