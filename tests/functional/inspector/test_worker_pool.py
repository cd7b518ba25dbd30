"""Starting workers early: the pool's warm-up is joined, never doubled; the fork server forks the first
worker before its whole warm-up is done; the TUI starts the fork server before its own imports."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from waits import WAIT

from crux_devtools.inspector.session.discovery import discover
from crux_devtools.inspector.transport.pool import WorkerPool

MARKER_PROMPTS = (
    "import sys\nfrom crux_devtools import prompt\n"
    "p = prompt('p', system='replay ' + str('crux_devtools.core.record.replay' in sys.modules))\n"
)


async def test_warming_while_a_warm_up_runs_joins_it(tmp_path: Path) -> None:
    """Two warm-ups at once (the TUI starts one before the session starts its own) used to start two
    fork servers, the second closing the first under the first's feet."""
    pool = WorkerPool(tmp_path)
    try:
        spares = await asyncio.wait_for(asyncio.gather(pool.warm(), pool.warm(), pool.warm()), WAIT)
        started = [s for s in spares if s is not None]
        assert len(started) == 1 and started[0].alive
        taken = await asyncio.wait_for(pool.take(), WAIT)
        assert taken is started[0]
        assert (await taken.call("ping", {}, WAIT))["ok"]
        await taken.close()
    finally:
        await pool.close()


async def test_closing_the_pool_while_its_fork_server_warms_up_stops_the_server(tmp_path: Path) -> None:
    """Quitting the TUI right after it started: the fork server being warmed is stopped, not left running."""
    pool = WorkerPool(tmp_path)
    assert pool.start_warming()
    await asyncio.wait_for(pool.spawned(), WAIT)
    assert pool._server is not None and pool._server._zygote is not None
    zygote = pool._server._zygote
    await asyncio.wait_for(pool.close(), WAIT)
    assert not zygote.alive
    assert await asyncio.wait_for(zygote.exited, WAIT) is not None


async def test_the_first_worker_is_forked_before_the_whole_warm_up_and_the_next_after_it(tmp_path: Path) -> None:
    """The first load (that the person waits for) does not wait for the library modules no load
    needs (the replay of recorded runs here); the workers forked after it get them imported ahead."""
    (tmp_path / "marker_prompts.py").write_text(MARKER_PROMPTS, encoding="utf-8")
    modules = [m.to_dict() for m in discover(tmp_path).modules]
    pool = WorkerPool(tmp_path, prewarm=False)
    texts = []
    try:
        for _ in range(2):
            worker = await asyncio.wait_for(pool.take(), WAIT)
            answer = await worker.call("load", {"root": str(tmp_path), "modules": modules}, WAIT)
            assert answer["ok"], answer
            texts.append(answer["result"]["prompts"][0]["examples"][0]["inspection"]["system"])
            await worker.close()
    finally:
        await pool.close()
    assert texts == ["replay False", "replay True"]


LAUNCH_SCRIPT = """
import sys
from pathlib import Path
from crux_devtools.inspector.transport import forkserver

async def start(self):
    print("session" in str(sorted(m for m in sys.modules if m.endswith(".session"))), "textual" in sys.modules, flush=True)
    import os
    os._exit(0)

forkserver.ForkServer.start = start
from crux_devtools.tui.launch import run_tui
run_tui(Path(sys.argv[1]))
"""


def test_the_tui_starts_the_fork_server_before_importing_the_session_and_textual(tmp_path: Path) -> None:
    """The first report waits for the worker's warm-up: it starts before this process imports the
    rest (the session's modules, Textual), not after."""
    done = subprocess.run([sys.executable, "-c", LAUNCH_SCRIPT, str(tmp_path)], capture_output=True, text=True, timeout=WAIT, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["False", "False"]


GC_PROMPTS = (
    "import gc, json\nfrom crux_devtools import prompt\n"
    "p = prompt('p', system=json.dumps([gc.get_stats()[2]['collections'], gc.get_freeze_count() > 0, gc.isenabled()]))\n"
)


async def test_the_first_forked_worker_starts_on_a_frozen_heap_no_full_collection_walked(tmp_path: Path) -> None:
    """The fork server's warm-up ran with the collector on, then ran a full collection before its
    first fork (about 25 ms the first load waited for, freeing almost nothing): now the warm heap is
    frozen as it is, and the child's collector is on for user code."""
    (tmp_path / "gc_prompts.py").write_text(GC_PROMPTS, encoding="utf-8")
    modules = [m.to_dict() for m in discover(tmp_path).modules]
    pool = WorkerPool(tmp_path, prewarm=False)
    try:
        worker = await asyncio.wait_for(pool.take(), WAIT)
        answer = await worker.call("load", {"root": str(tmp_path), "modules": modules}, WAIT)
        await worker.close()
    finally:
        await pool.close()
    assert answer["ok"], answer
    assert answer["result"]["prompts"][0]["examples"][0]["inspection"]["system"] == "[0, true, true]"


START_SCRIPT = """
import asyncio, gc, importlib.abc, importlib.util, json, sys, threading, time
from pathlib import Path
from crux_devtools.inspector.session.service import ProjectSession

seen = {}

async def start(self):
    seen["session started"] = time.monotonic()
    await asyncio.sleep(0)

ProjectSession.start = start


class FakeApp:
    def __init__(self, starting):
        self.starting = starting

    async def run_async(self):
        await self.starting
        await asyncio.sleep(0)
        seen["collector after the start"] = [gc.isenabled(), gc.get_freeze_count() > 0]


class Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "crux_devtools.tui.app":
            return None
        sys.meta_path.remove(self)
        seen["import in the main thread"] = threading.current_thread() is threading.main_thread()
        seen["collector during the start"] = gc.isenabled()
        spec = importlib.util.find_spec(name)
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            seen["app imported"] = time.monotonic()
            module.make_tui = lambda session, starting: FakeApp(starting)

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, Finder())
from crux_devtools.tui.launch import run_tui
run_tui(Path(sys.argv[1]))
seen["session started while the app was imported"] = seen.pop("session started") < seen.pop("app imported")
print(json.dumps(seen))
"""


def test_the_tui_start_imports_textual_in_a_thread_with_the_collector_off_until_the_session_started(tmp_path: Path) -> None:
    """While Textual is imported (about 150 ms) the event loop goes on (the session asks the worker
    for its first load meanwhile), and no collection walks what the start builds: the collector is
    off until the session has started, then what was built is frozen out of its reach."""
    done = subprocess.run([sys.executable, "-c", START_SCRIPT, str(tmp_path)], capture_output=True, text=True, timeout=WAIT, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.splitlines()[-1]) == {
        "import in the main thread": False,
        "collector during the start": False,
        "collector after the start": [True, True],
        "session started while the app was imported": True,
    }


EARLY_SCRIPT = """
import asyncio, json, sys
from pathlib import Path

sys.argv = ["/some/bin/crux-devtools", "tui", sys.argv[1]]
import crux_devtools.cli
from crux_devtools.inspector.transport import early_start, process

seen = {"started before the CLI's imports": early_start._started is not None}
early_pid = early_start._started[1].pid


async def spawned(*args, **kwargs):
    raise AssertionError("the pool started a second fork server")


process.SpawnedWorker.start = spawned
from crux_devtools.inspector.transport.pool import WorkerPool


async def main():
    pool = WorkerPool(Path(sys.argv[2]).resolve())
    try:
        worker = await asyncio.wait_for(pool.take(), 60)
        seen["the pool's fork server is the early one"] = pool._server._zygote.pid == early_pid
        seen["its child answers"] = (await worker.call("ping", {}, 60))["ok"]
        await worker.close()
        zygote = pool._server._zygote
    finally:
        await pool.close()
    seen["closed with the pool"] = await asyncio.wait_for(zygote.exited, 60) is not None


asyncio.run(main())
print(json.dumps(seen))
"""


def test_the_tui_command_starts_the_fork_server_before_the_cli_imports_and_the_pool_takes_it_over(tmp_path: Path) -> None:
    """``crux-devtools tui DIR`` starts the fork server's interpreter at the top of the CLI module
    (asyncio and click cost about 50 ms before any command ran); the pool then adopts that process
    instead of starting its own, and stops it when it closes."""
    done = subprocess.run([sys.executable, "-c", EARLY_SCRIPT, str(tmp_path), str(tmp_path)], capture_output=True, text=True, timeout=WAIT, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.splitlines()[-1]) == {
        "started before the CLI's imports": True,
        "the pool's fork server is the early one": True,
        "its child answers": True,
        "closed with the pool": True,
    }


def test_only_the_tui_command_on_a_folder_starts_the_fork_server_early(tmp_path: Path) -> None:
    from crux_devtools.inspector.transport.early_start import tui_folder

    folder = str(tmp_path.resolve())
    assert tui_folder(["/venv/bin/crux-devtools", "tui", str(tmp_path)]) == folder
    assert tui_folder(["crux-devtools", "tui"]) == str(Path.cwd().resolve())
    for argv in (
        ["crux-devtools", "tui", "--help"],
        ["crux-devtools", "tui", str(tmp_path / "missing")],
        ["crux-devtools", "web", str(tmp_path)],
        ["crux-devtools", "tui", str(tmp_path), "extra"],
        ["pytest", "tui", str(tmp_path)],  # another program that imports the CLI module
        [],
    ):
        assert tui_folder(argv) is None, argv


def test_an_early_fork_server_for_another_folder_is_stopped_not_adopted(tmp_path: Path) -> None:
    from crux_devtools.inspector.transport import early_start

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    early_start.start_for(["crux-devtools", "tui", str(tmp_path / "a")])
    assert early_start._started is not None
    process = early_start._started[1]
    assert early_start.take(tmp_path / "b") is None
    assert process.poll() is not None and early_start._started is None


async def test_the_fork_server_forks_its_first_child_once_warm_without_waiting_for_the_loop(tmp_path: Path) -> None:
    """The first fork request goes with the server's start: a TUI whose event loop is busy drawing its
    first frame when the server becomes warm no longer delays the first worker by a round trip."""
    from crux_devtools.inspector.transport.forkserver import ForkServer

    server = ForkServer(tmp_path)
    try:
        await asyncio.wait_for(server.start(), WAIT)
        assert server._zygote is not None
        zygote = server._zygote.pid
        children = Path(f"/proc/{zygote}/task/{zygote}/children")
        deadline = asyncio.get_running_loop().time() + WAIT
        while not children.read_text().split() and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.01)  # not asking for a fork: the server does not hear from us meanwhile
        forked = [int(pid) for pid in children.read_text().split()]
        assert forked, "the fork server forked nothing before it was asked"
        worker = await asyncio.wait_for(server.fork(), WAIT)
        assert worker.pid == forked[0]
        assert (await worker.call("ping", {}, WAIT))["ok"]
        await worker.close()
    finally:
        await server.close()
