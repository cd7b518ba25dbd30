"""Verification at rest: time from the last save to a verified report, how often verification
disagreed, and the held worker's memory over many saves of a module holding 5 MB.

Run: .venv/bin/python benchmarks/bench_verify.py [--saves 10] [--memory-saves 300]

1. For the sample project (a copy of ``sample_project/``) and the generated 100-module project
   (``scale_project.py``), a live ProjectSession (the default options) takes ``--saves`` edits of one
   module, at rest in between (``settled()``): the fast figure is the time from the write to the
   incremental report, the verified figure the time from the write to the report that says it is
   verified (the settle wait, ``verify_after``, included). Prints medians and the disagreements.
2. A project whose module holds 5 MB of text is saved ``--memory-saves`` times, each save awaited
   to its (fast) report; the held worker's RSS is printed at the start, its peak during the saves and
   after the last save's verified report (target: within 10% of the start).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
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

BIG = '''\
from pydantic import BaseModel
from crux_devtools import prompt, tool

DATA = "{seed}" + "x" * 5_000_000  # 5 MB held by the module


class Lookup(BaseModel):
    key: str


lookup = tool("lookup", description="Look a key up in DATA.", parameters=Lookup, execute=lambda p: DATA[:10])
big = prompt("big", system="Holds " + str(len(DATA)) + " characters, edit {seed}.", tools=[lookup])
'''


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def held_rss(session: ProjectSession) -> float:
    worker = session._worker  # the benchmark measures the held worker itself
    return rss_mb(worker.pid) if worker is not None else 0.0


async def verified_saves(root: Path, saves: int, edit: object) -> tuple[list[float], list[float], ProjectSession]:
    session = ProjectSession(root)
    events: asyncio.Queue[SessionEvent] = asyncio.Queue()
    await session.start()
    session.subscribe(lambda e: events.put_nowait(e) if e.kind in ("report", "error") else None)
    fast: list[float] = []
    verified: list[float] = []
    try:
        for i in range(saves):
            await session.settled()
            await asyncio.sleep(0.2)
            while not events.empty():
                events.get_nowait()
            started = time.perf_counter()
            edit(root, i)  # type: ignore[operator]
            await asyncio.wait_for(events.get(), 120)
            fast.append((time.perf_counter() - started) * 1000)
            while not (session.report is not None and session.report["verified"] and not session._dirty):
                await asyncio.wait_for(events.get(), 120)
            verified.append((time.perf_counter() - started) * 1000)
    finally:
        await session.stop()
    return fast, verified, session


def touch_sample(root: Path, i: int) -> None:
    path = root / "01_contexts.py"
    path.write_text(path.read_text(encoding="utf-8") + f"\n# edit {i}\n", encoding="utf-8")


async def timings(saves: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        sample = Path(tmp) / "sample"
        shutil.copytree(HERE.parent / "sample_project", sample, ignore=shutil.ignore_patterns(".crux", "__pycache__"))
        scale = make_project(Path(tmp) / "scale", 100)
        for name, root, edit in (
            ("sample project", sample, touch_sample),
            ("100-module project", scale, lambda r, i: touch_module(r, (i * 7 + 3) % 100, f"Edit {i}.")),
        ):
            fast, verified, session = await verified_saves(root, saves, edit)
            print(
                f"{name}: save to fast report median {statistics.median(fast):.0f} ms; save to verified report median "
                f"{statistics.median(verified):.0f} ms (min {min(verified):.0f}, max {max(verified):.0f}, n={len(verified)}, "
                f"verify_after {session.verify_after * 1000:.0f} ms included); verifications {session.verifications}, "
                f"disagreements {session.disagreements}"
            )


async def memory(saves: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "big"
        root.mkdir()
        (root / "pyproject.toml").write_text('[project]\nname = "big"\nversion = "0"\n', encoding="utf-8")
        (root / "big.py").write_text(BIG.format(seed=0), encoding="utf-8")
        session = ProjectSession(root, history=False)
        events: asyncio.Queue[SessionEvent] = asyncio.Queue()
        await session.start()
        await session.settled()
        session.subscribe(lambda e: events.put_nowait(e) if e.kind in ("report", "error") else None)
        start = held_rss(session)
        peak = start
        try:
            for i in range(1, saves + 1):
                (root / "big.tmp").write_text(BIG.format(seed=i), encoding="utf-8")  # saved whole, as editors do
                os.replace(root / "big.tmp", root / "big.py")
                while True:  # this save's report (a verification's event may come first)
                    await asyncio.wait_for(events.get(), 120)
                    if session.report is not None and f"edit {i}." in json.dumps(session.report["prompts"]):
                        break
                peak = max(peak, held_rss(session))
            began = time.perf_counter()
            await session.settled()
            rest = held_rss(session)
            print(
                f"memory, {saves} saves of a module holding 5 MB: held worker RSS {start:.0f} MB at start, peak {peak:.0f} MB, "
                f"{rest:.0f} MB at rest ({(rest / start - 1) * 100:+.1f}%), verified {(time.perf_counter() - began) * 1000:.0f} ms "
                f"after the last report; verifications {session.verifications}, disagreements {session.disagreements}"
            )
        finally:
            await session.stop()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--saves", type=int, default=10)
    parser.add_argument("--memory-saves", type=int, default=300)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    if args.saves:
        await timings(args.saves)
    if args.memory_saves:
        await memory(args.memory_saves)


if __name__ == "__main__":
    asyncio.run(main())
