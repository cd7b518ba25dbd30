"""Run ``crux-devtools tui``: start the worker first, then build the UI while it loads.

The first report waits for the worker process to import the library and load the token encoding
(most of a second), then for the user's modules. So the fork server's interpreter is started before
anything else is imported (by the CLI module itself, ``inspector/transport/early_start.py``; else here, by the
worker pool), and the worker warms up and loads while this process imports the rest (the session's
modules, Textual, in a thread so the event loop keeps serving the worker) and draws the first frame,
on the machine's other core.
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import sys
from pathlib import Path

IMPORT_SWITCH_INTERVAL = 0.0005  # seconds


async def run_tui_async(root: Path) -> None:
    # What the start builds (the modules, the app's widgets and styles, the first report) lives as
    # long as the process: the cyclic garbage collector is off until the session has started, and
    # what is there then is moved out of its reach (``gc.freeze``), so no later collection walks it
    # (with the collector on, full collections took 30-80 ms of the first frames).
    gc.disable()
    from ..inspector.transport.pool import WorkerPool

    pool = WorkerPool(root.resolve())
    pool.start_warming()  # a failure is the session's to report: its own ``warm()`` joins this one
    await pool.spawned()

    from ..inspector.session.service import ProjectSession

    session = ProjectSession(root, pool=pool)
    starting = asyncio.ensure_future(session.start())  # joins the warm-up; loads once the worker is ready

    starting.add_done_callback(_collect_from_now_on)

    # Textual is imported in a thread: meanwhile the event loop answers the worker (asks for the fork,
    # sends the load), so the first load does not wait for the import to end. Each of those steps
    # waits for the import thread to hand over the interpreter lock: a shorter switch interval
    # (Python's is 5 ms) keeps that wait short.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(IMPORT_SWITCH_INTERVAL)
    try:
        app = await asyncio.to_thread(importlib.import_module, "crux_devtools.tui.app")
    finally:
        sys.setswitchinterval(interval)
    await app.make_tui(session, starting=starting).run_async()


def _collect_from_now_on(_: object) -> None:
    """The session has started (or failed to): what the start built is kept out of collections."""
    gc.freeze()
    gc.enable()


def run_tui(root: Path) -> None:
    """Run the TUI over the project in ``root`` until the user quits."""
    asyncio.run(run_tui_async(root))
