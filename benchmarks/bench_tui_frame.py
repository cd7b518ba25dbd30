"""The TUI's own CPU up to its first frame, in one process, headless (no terminal, no worker).

    .venv/bin/python benchmarks/bench_tui_frame.py [--starts 10]

Builds the app over a session that never loads (the first frame of a real start comes before the
first report), runs it headless (``app.run_test``) until its first refresh, and prints the median
CPU time (``time.process_time``) over ``--starts`` starts, after one start that warms the imports.
CPU time rather than wall time: the number holds on a machine that other work keeps busy. It is the
TUI's share of ``bench_tui.py``'s "Textual imported" to "first frame written".
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from pathlib import Path
from typing import Any


class NeverLoads:
    """A ``SessionLike`` whose start never ends: the app shows its first frame, without a report."""

    root = Path("/tmp/project")
    report = None
    history_warning = None

    def subscribe(self, callback: Any) -> Any:
        return lambda: None

    async def start(self) -> None:
        await asyncio.Event().wait()

    async def stop(self) -> None:
        pass

    def runs(self) -> None:
        return None


async def first_frame_cpu() -> float:
    from crux_devtools.tui.app import make_tui

    app = make_tui(NeverLoads())  # type: ignore[arg-type]
    started = time.process_time()
    async with app.run_test(size=(140, 60)) as pilot:
        await pilot.pause()
        spent = time.process_time() - started
        app.exit()
    return spent


async def main(starts: int) -> None:
    await first_frame_cpu()  # the imports and Textual's caches
    times = sorted([await first_frame_cpu() for _ in range(starts)])
    print(f"first frame CPU: median {statistics.median(times) * 1000:.1f} ms (min {times[0] * 1000:.1f}, max {times[-1] * 1000:.1f}, n={starts})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=10)
    asyncio.run(main(parser.parse_args().starts))
