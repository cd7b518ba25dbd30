"""``crux-devtools replay --source current``: a recorded step planned from the project's source as it is now.

A worker evaluates the target with the step's recorded input, messages and epoch state and replays it
like a recorded step (``inspector/worker/replay_current.py``), each change naming the context and the
``file:line`` where it is defined. The replay is asked through ``replay_source.replay_variant``, as
the web's Replay panel and the TUI's replay screen ask it, so the three show one computation.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import click


def recorded_run(root: Path, run_id: str, index: int) -> dict[str, Any]:
    """The recorded run, checked to have step ``index`` (a one-line error otherwise)."""
    from ..core.record.replay import ReplayError, recorded_step
    from ..core.record.runstore import RunStore, RunStoreError

    store = RunStore.for_project(root, create=False)
    try:
        return recorded_step(store, run_id, index)[0]
    except (ReplayError, RunStoreError) as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        store.close()


async def _replay_in_worker(root: Path, run: dict[str, Any], index: int, overrides: Any, timeout: float) -> dict[str, Any]:
    from ..inspector.features.replay.source import replay_variant
    from ..inspector.session.service import ProjectSession

    session = ProjectSession(root, timeout=timeout, watch=False, history=False, prewarm=False, fork=False)
    try:
        await session.start()
        replayed = await replay_variant(session, run, index, overrides, "current")
    finally:
        await session.stop()
    if replayed.document is None:
        raise click.ClickException(str(replayed.error))
    return replayed.document


def worker_failure(what: str, answer: dict[str, Any]) -> click.ClickException:
    """A worker's failed answer as one line: ``WHAT failed: FILE:LINE: Type: message``."""
    from ..inspector.features.replay.source import failure_line

    return click.ClickException(failure_line(what, answer.get("error") or {}))


def replay_current_step(root: Path, run_id: str, index: int, overrides: Any, timeout: float = 30.0) -> dict[str, Any]:
    """The replay document of a recorded step planned from today's source (see the module docstring)."""
    run = recorded_run(root, run_id, index)
    return asyncio.run(_replay_in_worker(root, run, index, overrides, timeout))


__all__ = ["replay_current_step", "worker_failure"]
