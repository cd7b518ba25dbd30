"""The TUI's Runs tab, measured.

    .venv/bin/python benchmarks/bench_tui_runs.py [--writes 15]

1. Write to screen: the real ``crux-devtools tui`` in tmux, on a fresh copy of ``sample_project/``,
   with its Runs tab open. A separate process writes one run at a time to the project's
   ``.crux/runs.sqlite3``; each is timed from the end of its write to the screen showing the new
   count (no key pressed). Target (as for an open web page): median 500 ms or less. The screen is
   read every 20 ms, so each figure includes up to about 20 ms of polling.
2. Refresh cost: in one process (headless app over a fake session holding a real store), the time
   ``refresh_runs`` takes (one list of 50 and the counts, then the table) with 100 runs and with
   10,000 runs stored, and their ratio (target: at most 2x, like the web page's).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from tmux_pane import stop  # noqa: E402
COMMAND = Path(sys.executable).parent / "crux-devtools"
SOCKET = f"crux-bench-runs-{os.getpid()}"

# A long-lived writer: one run per line read from stdin, then "written <n>" once it is stored.
WRITER = """
import json, sys, uuid
from datetime import UTC, datetime
from crux_devtools.core.record.runstore import RunStore
store = RunStore.for_project(sys.argv[1])
run = json.loads(sys.argv[2])
for n, _ in enumerate(sys.stdin, start=1):
    store.write({**run, "id": uuid.uuid4().hex, "started_at": datetime.now(UTC).isoformat()})
    print("written", n, flush=True)
"""


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", "-L", SOCKET, *args], capture_output=True, text=True, check=False).stdout


def screen() -> str:
    return tmux("capture-pane", "-p", "-t", "b")


def wait_for(check: Callable[[str], bool], timeout: float = 30.0) -> float:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check(screen()):
            return time.monotonic()
        time.sleep(0.02)
    raise SystemExit(f"the screen never showed what was expected; last screen:\n{screen()}")


def sample_run() -> dict[str, Any]:
    """One real run of the sample agent (two steps, tool calls, an offload), as the recorder writes it."""
    code = (
        "import importlib, json, sys; sys.path.insert(0, 'sample_project'); "
        "from crux_devtools import generate; a = importlib.import_module('05_agent'); "
        "r = generate(a.support_agent, input=a.agent_reply.examples['stalled-sync']); "
        "print(json.dumps({'target': 'support-agent', 'kind': 'agent', 'origin': 'app', 'status': 'ok', 'error': None, "
        "'model': 'nimbus-scripted', 'input': a.agent_reply.examples['stalled-sync'], 'text': r.text, 'usage': r.usage, "
        "'duration_ms': 5.0, 'steps': r.to_dict()['steps']}, default=repr))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def runs_heading(count: int) -> Callable[[str], bool]:
    """Whether the screen shows the Runs tab's heading with ``count`` runs (``All runs · 3 · cost …``)."""
    pattern = re.compile(rf"All runs · {count}\b")
    return lambda s: pattern.search(s) is not None


def measure_writes(project: Path, run: dict[str, Any], writes: int) -> list[float]:
    """Open the Runs tab (by the key its title shows), then time each write to the new count on screen.
    The TUI and the writer are stopped in ``finally``, whatever happens (a timeout, Ctrl-C)."""
    stop(SOCKET)
    writer: subprocess.Popen[str] | None = None
    times = []
    try:
        for _ in range(5):
            if subprocess.run(["tmux", "-L", SOCKET, "new-session", "-d", "-s", "b", "-x", "140", "-y", "40", "cat"], capture_output=True, check=False).returncode == 0:
                break
            time.sleep(0.2)
        tmux("respawn-pane", "-k", "-t", "b", f"env -u COLUMNS -u LINES {COMMAND} tui {project}; sleep 60")
        wait_for(lambda s: "support-agent" in s and re.search(r"\d Runs", s) is not None)
        key = re.search(r"(\d) Runs", screen())
        assert key is not None
        tmux("send-keys", "-t", "b", key.group(1))
        wait_for(runs_heading(0))
        writer = subprocess.Popen([sys.executable, "-c", WRITER, str(project), json.dumps(run)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert writer.stdin is not None and writer.stdout is not None
        for n in range(1, writes + 1):
            time.sleep(0.3)  # runs arrive one at a time, as from an application
            writer.stdin.write("go\n")
            writer.stdin.flush()
            assert writer.stdout.readline().strip() == f"written {n}"
            written = time.monotonic()
            shown = wait_for(runs_heading(n))
            times.append(shown - written)
    finally:
        if writer is not None:
            writer.kill()
            writer.wait()
        tmux("send-keys", "-t", "b", "q")
        stop(SOCKET)  # the pane's TUI and its workers, however it got here
    return times


async def refresh_cost(runs: int, run: dict[str, Any], repeats: int = 60) -> tuple[float, float]:
    """Median and fastest seconds of one ``refresh_runs`` with ``runs`` runs stored (the table is
    rebuilt each time)."""
    sys.path.insert(0, str(REPO / "tests"))
    from tui_fakes import FakeSession

    from crux_devtools.core.record.runstore import RunStore
    from crux_devtools.tui import make_tui
    from crux_devtools.tui.widgets.runs import RunsPanel

    folder = Path(tempfile.mkdtemp(prefix="crux-bench-runs-"))
    try:
        store = RunStore(folder / "runs.sqlite3")
        light = {**run, "steps": run["steps"][:1]}
        for n in range(runs):
            store.write({**light, "id": f"r{n:06d}", "started_at": f"2026-11-{1 + n % 28:02d}T{n % 24:02d}:00:00+00:00"})
        store.close()
        session = FakeSession(runs_file=folder / "runs.sqlite3")
        app = make_tui(session)
        times = []
        async with app.run_test(size=(140, 40)) as pilot:
            await pilot.pause()
            panel = app.query_one(RunsPanel)
            for _ in range(repeats):
                panel.runs = []  # force the table to be rebuilt, as when a new run arrives
                started = time.perf_counter()
                app.refresh_runs()
                times.append(time.perf_counter() - started)
        return statistics.median(times), min(times)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=15)
    args = parser.parse_args()
    run = sample_run()
    with tempfile.TemporaryDirectory(prefix="crux-bench-runs-") as tmp:
        project = Path(tmp) / "sample_project"
        shutil.copytree(REPO / "sample_project", project, ignore=shutil.ignore_patterns("__pycache__", ".crux*"))
        load = os.getloadavg()[0]
        print(f"load average {load:.1f} on {os.cpu_count()} CPUs")
        ms = sorted(t * 1000 for t in measure_writes(project, run, args.writes))
        print(f"write to screen (another process writes, the Runs tab shows it): median {statistics.median(ms):.0f} ms, min {ms[0]:.0f} ms, max {ms[-1]:.0f} ms over {len(ms)} writes (target: median 500 ms or less)")
    small = asyncio.run(refresh_cost(100, run))
    large = asyncio.run(refresh_cost(10_000, run))
    print(
        f"refresh_runs: median {small[0] * 1000:.1f} ms (fastest {small[1] * 1000:.1f}) with 100 runs, "
        f"median {large[0] * 1000:.1f} ms (fastest {large[1] * 1000:.1f}) with 10,000 runs; "
        f"ratio of the fastest {large[1] / small[1]:.2f}, of the medians {large[0] / small[0]:.2f} (target: at most 2; "
        "the medians move with the machine's load)"
    )


if __name__ == "__main__":
    main()
