"""TUI measures, on the real ``crux-devtools tui`` in a real terminal (tmux).

    .venv/bin/python benchmarks/bench_tui.py [--starts 5] [--saves 15]

1. Start-up: the time from launching ``crux-devtools tui`` on a fresh copy of ``sample_project/`` to
   the first screen that shows every prompt id of the project (target: under 1.5 s). Median over
   ``--starts`` launches.
2. Save-to-screen: with the TUI running, rewrites a source file ``--saves`` times, each time adding a
   prompt with a new id, and measures the time from the write to the screen showing that id (target:
   median 250 ms or less).

The screen is read with ``tmux capture-pane`` every 20 ms, so each number includes up to about 20 ms of
polling plus the capture itself.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COMMAND = Path(sys.executable).parent / "crux-devtools"
SOCKET = f"crux-bench-{os.getpid()}"
LESSON = "01_contexts.py"


def tmux(*args: str) -> str:
    done = subprocess.run(["tmux", "-L", SOCKET, *args], capture_output=True, text=True, check=False)
    if done.returncode != 0 and args[0] in ("new-session", "respawn-pane"):
        raise SystemExit(f"tmux {args[0]} failed: {done.stderr.strip()}")
    return done.stdout


def screen() -> str:
    return tmux("capture-pane", "-p", "-t", "b")


def wait_for(check: Callable[[str], bool], timeout: float = 30.0) -> float:
    """Poll until ``check(screen)`` holds; return the monotonic time it first held."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check(screen()):
            return time.monotonic()
        time.sleep(0.02)
    panes = tmux("list-panes", "-a", "-F", "#{pane_pid} #{pane_dead} #{pane_current_command} #{pane_width}x#{pane_height}")
    raise SystemExit(f"the screen never showed what was expected; panes: {panes}; last screen:\n{screen()}")


def prompt_ids(project: Path) -> list[str]:
    out = subprocess.run([str(COMMAND), "inspect", str(project), "--json"], capture_output=True, text=True, check=True).stdout
    return [p["id"] for p in json.loads(out)["prompts"]]


def launch(project: Path) -> float:
    """Start the TUI in a pane that already has its final size; return the launch time."""
    tmux("kill-server")
    for attempt in range(5):  # a tmux server that is still shutting down can refuse the first try
        done = subprocess.run(["tmux", "-L", SOCKET, "new-session", "-d", "-s", "b", "-x", "140", "-y", "60", "cat"], capture_output=True, text=True, check=False)
        if done.returncode == 0:
            break
        time.sleep(0.2)
    else:
        raise SystemExit(f"tmux new-session failed: {done.stderr.strip()}")
    started = time.monotonic()
    tmux("respawn-pane", "-k", "-t", "b", f"env -u COLUMNS -u LINES {COMMAND} tui {project}; sleep 60")
    return started


def measure_start(project: Path, ids: list[str], runs: int) -> tuple[list[float], list[float]]:
    """Per launch: time to the first drawn frame (footer visible), and to every prompt id visible."""
    frames, prompts = [], []
    for _ in range(runs):
        shutil.rmtree(project / ".crux", ignore_errors=True)
        started = launch(project)
        drawn = wait_for(lambda s: "q Quit" in s)
        shown = wait_for(lambda s: all(i in s for i in ids))
        frames.append(drawn - started)
        prompts.append(shown - started)
        tmux("send-keys", "-t", "b", "q")
        time.sleep(0.5)
    return frames, prompts


def measure_saves(project: Path, ids: list[str], saves: int) -> list[float]:
    launch(project)
    wait_for(lambda s: all(i in s for i in ids))
    source = (project / LESSON).read_text()
    times = []
    for n in range(saves):
        new_id = f"bench-save-{n}"
        time.sleep(0.4)  # let the previous reload and its worker warm-up settle, as between real saves
        written = time.monotonic()
        (project / LESSON).write_text(source + f'\n\nbench_prompt = prompt("{new_id}", system="Saved by the benchmark.")\n')
        shown = wait_for(lambda s, i=new_id: i in s)
        times.append(shown - written)
    tmux("send-keys", "-t", "b", "q")
    return times


async def split_saves(project: Path, saves: int) -> tuple[list[float], list[float]]:
    """In one process (headless app, real session): write -> session event, and event -> screen."""
    from crux_devtools.inspector.session import ProjectSession
    from crux_devtools.tui import make_tui

    session = ProjectSession(project, history=False)
    app = make_tui(session)
    events: list[float] = []
    session.subscribe(lambda e: events.append(time.monotonic()) if e.kind == "report" else None)
    engine, ui = [], []
    source = (project / LESSON).read_text()
    async with app.run_test(size=(140, 60)) as pilot:
        while not app.query_one("#tree").root.children:
            await pilot.pause(0.01)
        for n in range(saves):
            await pilot.pause(0.4)
            new_id = f"bench-split-{n}"
            events.clear()
            written = time.monotonic()
            (project / LESSON).write_text(source + f'\n\nbench_prompt = prompt("{new_id}", system="Saved by the benchmark.")\n')
            while not any(new_id in str(node.label) for node in app.query_one("#tree").root.children):
                await asyncio.sleep(0.002)
            shown = time.monotonic()
            engine.append(events[0] - written)
            ui.append(shown - events[0])
    return engine, ui


def describe(name: str, values: list[float], target: str) -> None:
    ms = sorted(v * 1000 for v in values)
    print(f"{name}: median {statistics.median(ms):.0f} ms, min {ms[0]:.0f} ms, max {ms[-1]:.0f} ms over {len(ms)} runs (target: {target})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--saves", type=int, default=15)
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        raise SystemExit("bench_tui needs tmux")
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "sample_project"
        shutil.copytree(REPO / "sample_project", project, ignore=shutil.ignore_patterns("__pycache__", ".crux*"))
        ids = prompt_ids(project)
        print(f"sample project: {len(ids)} prompts ({', '.join(ids)}); load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        try:
            frames, prompts = measure_start(project, ids, args.starts)
            describe("start to first screen with every prompt", prompts, "under 1500 ms")
            describe("  of which: start to first frame (UI drawn, project still loading)", frames, "-")
            describe("save to screen", measure_saves(project, ids, args.saves), "median 250 ms or less")
            tmux("kill-server")
            engine, ui = asyncio.run(split_saves(project, args.saves))
            describe("  of which: save to session event (engine)", engine, "-")
            describe("  of which: session event to screen (TUI)", ui, "-")
        finally:
            tmux("kill-server")


if __name__ == "__main__":
    main()
