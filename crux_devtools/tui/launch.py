"""Run ``crux-devtools tui``: start the project session first, then build the UI while it loads.

The session's worker process imports the library and the user's modules (about a second); starting
it before importing Textual lets the two happen at the same time, so the first screen with the
project's prompts comes sooner.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

SPAWN_GRACE = 0.05  # seconds the loop gets to spawn the worker before the UI import blocks it


async def run_tui_async(root: Path) -> None:
    from ..inspector.session import ProjectSession

    session = ProjectSession(root)
    starting = asyncio.ensure_future(session.start())
    await asyncio.wait({starting}, timeout=SPAWN_GRACE)

    from .app import make_tui

    await make_tui(session, starting=starting).run_async()


def run_tui(root: Path) -> None:
    """Run the TUI over the project in ``root`` until the user quits."""
    asyncio.run(run_tui_async(root))
