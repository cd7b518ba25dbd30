"""TUI measures, on the real ``crux-devtools tui`` in a real terminal (tmux), with where the time goes.

    .venv/bin/python benchmarks/bench_tui.py [--starts 5] [--saves 15]

1. Start-up: the time from launching the TUI on a fresh copy of ``sample_project/`` (no ``.crux``) to
   the first screen that shows every prompt id of the project (goal: under 500 ms). Median over
   ``--starts`` launches.
2. Save-to-screen: with the TUI running, rewrites a source file ``--saves`` times, each time adding a
   prompt with a new id, and measures the time from the write to the screen showing that id (goal:
   median under 60 ms).

The TUI runs as ``crux-devtools tui`` does (``cli.main``, with the console script's ``sys.argv``), in
this script's ``--traced`` mode: the same code, with timestamps (``time.monotonic``, one clock for
every process of the machine) taken at each step by wrapping a few functions, so each number is
split into its steps: the Python start and the CLI import, the worker start (the fork server's
warm-up, the first fork, the first load), Textual's import and first frame; for a save, the
watcher, the session's report event, the app handling it, the frame written to the terminal. The
screen is read with ``tmux capture-pane`` every 10 ms, so "on screen" includes up to about 10 ms of
polling plus the capture itself.
"""

from __future__ import annotations

import json
import os
import sys
import time

STEP_NAMES = {
    "main": "Python started, bench entry",
    "cli": "CLI imported",
    "warm": "worker start asked (fork server)",
    "session": "session starting",
    "textual:begin": "Textual import begins",
    "textual": "Textual imported",
    "frame:first": "first frame written",
    "screen:frame": "first frame on screen",
    "zygote": "fork server warm (worker ready)",
    "forked": "first worker forked",
    "event:report": "session: report event",
    "app:report": "app handled the report",
    "frame:report": "frame with the report written",
    "screen:report": "every prompt on screen",
    "watcher": "watcher saw the save",
}
START_STEPS = (
    "main", "cli", "warm", "session", "textual:begin", "textual", "frame:first", "screen:frame", "zygote", "forked",
    "event:report", "app:report", "frame:report", "screen:report",
)
SAVE_STEPS = ("watcher", "event:report", "app:report", "frame:report", "screen:report")
START_GOAL_MS = 500
SAVE_GOAL_MS = 60


# -- the traced TUI (runs in the tmux pane) -----------------------------------------------------
def traced(project: str, trace: str) -> None:
    """Run ``crux-devtools tui PROJECT`` with timestamps appended to ``trace`` (JSON lines)."""
    out = open(trace, "a", buffering=1)  # noqa: SIM115 - open until the process ends

    def stamp(step: str, **fields: object) -> None:
        out.write(json.dumps({"step": step, "t": time.monotonic(), **fields}) + "\n")

    stamp("main")
    import functools
    import importlib.abc
    import importlib.util

    def after(module_name: str, patch: object) -> None:
        """Call ``patch(module)`` once ``module_name`` is imported (now, or when the TUI imports it)."""
        if module_name in sys.modules:
            patch(sys.modules[module_name])  # type: ignore[operator]
            return

        class Finder(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):  # type: ignore[no-untyped-def]
                if name != module_name:
                    return None
                sys.meta_path.remove(self)
                spec = importlib.util.find_spec(name)
                assert spec is not None and spec.loader is not None
                run = spec.loader.exec_module

                def exec_module(module):  # type: ignore[no-untyped-def]
                    run(module)
                    patch(module)  # type: ignore[operator]

                spec.loader.exec_module = exec_module  # type: ignore[method-assign]
                return spec

        sys.meta_path.insert(0, Finder())

    def wrap(owner: object, name: str, step: object, *, at_end: bool = False) -> None:
        """Stamp ``step`` (or ``step(*args)``: a step name or ``None``) when ``owner.name`` is called
        (if it has one: the script also times older versions of the code)."""
        original = getattr(owner, name, None)
        if original is None:
            return
        label = step if callable(step) else (lambda *args: step)

        if asyncio_function(original):
            @functools.wraps(original)
            async def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
                if not at_end and (what := label(*args)):
                    stamp(what)
                result = await original(*args, **kwargs)
                if at_end and (what := label(*args)):
                    stamp(what)
                return result
        else:
            @functools.wraps(original)
            def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
                if what := label(*args):
                    stamp(what)
                return original(*args, **kwargs)

        setattr(owner, name, wrapper)

    def asyncio_function(function: object) -> bool:
        import inspect

        return inspect.iscoroutinefunction(function)

    def patch_session(module):  # type: ignore[no-untyped-def]
        wrap(module.ProjectSession, "start", "session")
        wrap(module.ProjectSession, "_changed", "watcher")
        wrap(module.ProjectSession, "_emit", lambda self, event: f"event:{event.kind}")

    def patch_early(module):  # type: ignore[no-untyped-def]
        wrap(module, "start_for", lambda argv: "warm" if module.tui_folder(argv) else None)

    def patch_pool(module):  # type: ignore[no-untyped-def]
        wrap(module.WorkerPool, "start_warming", "warm")
        wrap(module.WorkerPool, "warm", "warm")

    def patch_forkserver(module):  # type: ignore[no-untyped-def]
        wrap(module.ForkServer, "start", "zygote", at_end=True)
        wrap(module.ForkServer, "fork", "forked", at_end=True)

    def patch_app(module):  # type: ignore[no-untyped-def]
        stamp("textual")

        def handled(self, message):  # type: ignore[no-untyped-def]
            return f"app:{message.event.kind}" if message.event is not None else "app:started"

        wrap(module.CruxTui, "on_session_changed", handled)

    def patch_driver(module):  # type: ignore[no-untyped-def]
        wrap(module.LinuxDriver, "write", lambda self, data: "write" if len(data) > 200 else None)

    class TextualBegins(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):  # type: ignore[no-untyped-def]
            if name == "crux_devtools.tui.app":
                stamp("textual:begin")
                sys.meta_path.remove(self)
            return None

    after("crux_devtools.inspector.session.service", patch_session)
    after("crux_devtools.inspector.transport.early_start", patch_early)
    after("crux_devtools.inspector.transport.pool", patch_pool)
    after("crux_devtools.inspector.transport.forkserver", patch_forkserver)
    after("crux_devtools.tui.app", patch_app)
    after("textual.drivers.linux_driver", patch_driver)
    sys.meta_path.insert(0, TextualBegins())
    sys.argv = ["crux-devtools", "tui", project]  # as the console script sees it
    from crux_devtools.cli import main

    stamp("cli")
    main()


# -- the benchmark ------------------------------------------------------------------------------
def main() -> None:
    import argparse
    import shutil
    import subprocess
    import tempfile
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from tmux_pane import stop

    repo = Path(__file__).resolve().parents[1]
    command = Path(sys.executable).parent / "crux-devtools"
    socket = f"crux-bench-{os.getpid()}"
    lesson = "01_contexts.py"

    def tmux(*args: str) -> str:
        done = subprocess.run(["tmux", "-L", socket, *args], capture_output=True, text=True, check=False)
        if done.returncode != 0 and args[0] in ("new-session", "respawn-pane"):
            raise SystemExit(f"tmux {args[0]} failed: {done.stderr.strip()}")
        return done.stdout

    def screen() -> str:
        return tmux("capture-pane", "-p", "-t", "b")

    def wait_for(check, timeout: float = 60.0) -> float:  # type: ignore[no-untyped-def]
        """Poll until ``check(screen)`` holds; return the monotonic time it first held."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if check(screen()):
                return time.monotonic()
            time.sleep(0.01)
        raise SystemExit(f"the screen never showed what was expected; last screen:\n{screen()}")

    def launch(project: Path, trace: Path) -> float:
        """Start the traced TUI in a pane that already has its final size; return the launch time."""
        stop(socket)
        for _ in range(5):  # a tmux server that is still shutting down can refuse the first try
            done = subprocess.run(["tmux", "-L", socket, "new-session", "-d", "-s", "b", "-x", "140", "-y", "60", "cat"], capture_output=True, text=True, check=False)
            if done.returncode == 0:
                break
            time.sleep(0.2)
        else:
            raise SystemExit(f"tmux new-session failed: {done.stderr.strip()}")
        trace.write_text("")
        started = time.monotonic()
        tmux("respawn-pane", "-k", "-t", "b", f"env -u COLUMNS -u LINES {sys.executable} {Path(__file__).resolve()} --traced {project} {trace}; sleep 60")
        return started

    def read(trace: Path) -> list[dict]:  # type: ignore[type-arg]
        return [json.loads(line) for line in trace.read_text().splitlines() if line.strip()]

    def first(rows: list[dict], step: str, after: float = float("-inf")) -> float | None:  # type: ignore[type-arg]
        return next((r["t"] for r in rows if r["step"] == step and r["t"] >= after), None)

    def measure_start(project: Path, ids: list[str], runs: int, trace: Path) -> list[dict[str, float]]:
        found = []
        for _ in range(runs):
            shutil.rmtree(project / ".crux", ignore_errors=True)
            started = launch(project, trace)
            drawn = wait_for(lambda s: "q Quit" in s)
            shown = wait_for(lambda s: all(i in s for i in ids))
            rows = read(trace)
            steps = {step: first(rows, step) for step in START_STEPS if step in ("main", "cli", "warm", "session", "textual:begin", "textual", "zygote", "forked")}
            steps["frame:first"] = first(rows, "write")
            steps["event:report"] = first(rows, "event:report")
            steps["app:report"] = first(rows, "app:report")
            steps["frame:report"] = first(rows, "write", steps["app:report"] or float("inf"))
            steps["screen:frame"], steps["screen:report"] = drawn, shown
            found.append({k: (v - started) * 1000 for k, v in steps.items() if v is not None})
            tmux("send-keys", "-t", "b", "q")
            time.sleep(0.5)
        return found

    def measure_saves(project: Path, ids: list[str], saves: int, trace: Path) -> list[dict[str, float]]:
        launch(project, trace)
        wait_for(lambda s: all(i in s for i in ids))
        source = (project / lesson).read_text()
        found = []
        for n in range(saves):
            new_id = f"bench-save-{n}"
            time.sleep(1.0)  # as when a person edits: the verification at rest and the spare's warm-up are done
            written = time.monotonic()
            (project / lesson).write_text(source + f'\n\nbench_prompt = prompt("{new_id}", system="Saved by the benchmark.")\n')
            shown = wait_for(lambda s, i=new_id: i in s)
            rows = read(trace)
            steps = {"watcher": first(rows, "watcher", written), "event:report": first(rows, "event:report", written)}
            steps["app:report"] = first(rows, "app:report", written)
            steps["frame:report"] = first(rows, "write", steps["app:report"] or float("inf"))
            steps["screen:report"] = shown
            found.append({k: (v - written) * 1000 for k, v in steps.items() if v is not None})
        tmux("send-keys", "-t", "b", "q")
        return found

    def describe(title: str, runs: list[dict[str, float]], steps: tuple[str, ...], goal: float) -> None:
        import statistics

        total = statistics.median(r["screen:report"] for r in runs)
        spread = sorted(r["screen:report"] for r in runs)
        print(f"{title}: median {total:.0f} ms (min {spread[0]:.0f}, max {spread[-1]:.0f}, {len(runs)} runs); goal {goal:.0f} ms, ratio {total / goal:.2f}")
        previous = 0.0
        medians = {step: statistics.median(r[step] for r in runs if step in r) for step in steps if any(step in r for r in runs)}
        for step, at in sorted(medians.items(), key=lambda item: item[1]):  # in time order: the UI and the worker overlap
            print(f"  {STEP_NAMES[step]:<38} at {at:6.0f} ms  (+{at - previous:4.0f})")
            previous = at

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--saves", type=int, default=15)
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        raise SystemExit("bench_tui needs tmux")
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "sample_project"
        trace = Path(tmp) / "trace.jsonl"
        shutil.copytree(repo / "sample_project", project, ignore=shutil.ignore_patterns("__pycache__", ".crux*"))
        out = subprocess.run([str(command), "inspect", str(project), "--json"], capture_output=True, text=True, check=True).stdout
        ids = [p["id"] for p in json.loads(out)["prompts"]]
        print(f"sample project: {len(ids)} prompts ({', '.join(ids)}); load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        try:
            if args.starts:
                describe("start to every prompt on screen", measure_start(project, ids, args.starts, trace), START_STEPS, START_GOAL_MS)
            if args.saves:
                describe("save to screen", measure_saves(project, ids, args.saves, trace), SAVE_STEPS, SAVE_GOAL_MS)
        finally:
            stop(socket)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--traced"]:
        traced(sys.argv[2], sys.argv[3])
    else:
        main()
