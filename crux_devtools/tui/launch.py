"""Run ``crux-devtools tui``: start the worker first, then build the UI while it loads.

The first report waits for the worker process to import the library and load the token encoding
(most of a second), then for the user's modules. So the worker pool starts its fork server before
anything else is imported (the session's modules, Textual): the worker warms up while this process
imports the rest and draws the first frame, on the machine's other core.
"""

from __future__ import annotations

import asyncio
from pathlib import Path


async def run_tui_async(root: Path) -> None:
    from ..inspector.pool import WorkerPool

    pool = WorkerPool(root.resolve())
    pool.start_warming()  # a failure is the session's to report: its own ``warm()`` joins this one
    await pool.spawned()

    from ..inspector.session import ProjectSession

    session = ProjectSession(root, pool=pool)
    starting = asyncio.ensure_future(session.start())  # joins the warm-up; loads once the worker is ready

    from .app import make_tui

    await make_tui(session, starting=starting).run_async()


def run_tui(root: Path) -> None:
    """Run the TUI over the project in ``root`` until the user quits."""
    asyncio.run(run_tui_async(root))
