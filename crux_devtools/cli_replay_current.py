"""``crux-devtools replay --source current``: a recorded step planned from the project's source as it is now.

The target is evaluated in a worker (``inspector/replay_current.py``) with the step's recorded input,
messages and epoch state; the answer is replayed and compared like a recorded step, and each change
names the context and the ``file:line`` where it is defined.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import click


def recorded_step(root: Path, run_id: str, index: int) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any] | None]:
    """The run, its step ``index`` and that step's plan inputs (``None`` for a run recorded before they were kept)."""
    from .core.record.runstore import RunStore, RunStoreError, read_step_plan

    store = RunStore.for_project(root, create=False)
    try:
        run = store.get(run_id)
        if run is None:
            raise click.ClickException(f"no recorded run {run_id!r} in {store.path}")
        step = next((s for s in run.get("steps") or [] if isinstance(s, dict) and s.get("index") == index), None)
        if step is None:
            have = ", ".join(str(s.get("index")) for s in run.get("steps") or [] if isinstance(s, dict)) or "none"
            raise click.ClickException(f"run {run_id!r} has no step {index}; its steps: {have}")
        return run, step, read_step_plan(store, run_id, index)
    except RunStoreError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        store.close()


def step_context(step: dict[str, Any], plan: dict[str, Any] | None) -> dict[str, Any]:
    """What the worker plans the step with (the recorded input is added by the caller): the messages
    split as the recording says (``replaying.split_messages``) and the step's epoch state."""
    from .inspector.replaying import split_messages

    split = split_messages(step, plan["state"] if plan is not None else None)
    if plan is None:
        return {**split, "ceilings": {}, "epoch": 1, "namespace": None}
    state = plan["state"]
    return {**split, "ceilings": state.get("ceilings") or {}, "epoch": state.get("epoch") or 1, "namespace": plan["frame"].get("namespace")}


async def _plan_in_worker(root: Path, target: str, request: dict[str, Any], timeout: float) -> tuple[dict[str, Any], dict[str, Any]]:
    from .inspector.api import find_prompt
    from .inspector.session import ProjectSession

    session = ProjectSession(root, timeout=timeout, watch=False, history=False, prewarm=False, fork=False)
    try:
        await session.start()
        report: Any = session.report
        prompt = find_prompt(report, target)
        if prompt is None:
            known = ", ".join(p["id"] for p in (report or {}).get("prompts", [])) or "none"
            errors = (report or {}).get("errors") or []
            why = f"; the project has load errors, first: {errors[0]['file']}:{errors[0]['line']}: {errors[0]['message']}" if errors else ""
            raise click.ClickException(f"the run's target {target!r} no longer exists in the source of {root}; known targets: {known}{why}")
        answer = await session.replay_plan(target, request)
    finally:
        await session.stop()
    if not answer.get("ok"):
        raise worker_failure(f"planning {target!r} from today's source", answer)
    return answer["result"], dict(prompt)


def worker_failure(what: str, answer: dict[str, Any]) -> click.ClickException:
    """A worker's failed answer as one line: ``WHAT failed: FILE:LINE: Type: message``."""
    error = answer.get("error") or {}
    where = f"{error.get('file')}:{error.get('line')}: " if error.get("file") else ""
    return click.ClickException(f"{what} failed: {where}{error.get('type')}: {error.get('message')}")


def replay_current_step(root: Path, run_id: str, index: int, overrides: Any, timeout: float = 30.0) -> dict[str, Any]:
    """The replay document of a recorded step planned from today's source (see the module docstring)."""
    from .core.record.replay import ReplayError, replay_recorded
    from .inspector.replaying import replay_document

    run, step, plan = recorded_step(root, run_id, index)
    request = {"input": run.get("input") or {}, **step_context(step, plan)}
    data, prompt = asyncio.run(_plan_in_worker(root, str(run.get("target")), request, timeout))
    where: dict[str, tuple[str | None, int | None]] = {str(c["id"]): (c.get("file"), c.get("line")) for c in prompt.get("contexts") or []}
    own = (prompt.get("file"), prompt.get("line"))
    where.update({"prompt": own, "messages": own})
    try:
        replayed = replay_recorded(run_id, step, data, overrides, messages=data["messages"], source="current")
    except ReplayError as exc:
        raise click.ClickException(str(exc)) from None
    document = replay_document(replayed, run, where)
    document["replayed"]["warnings"] = list(data.get("warnings") or []) + document["replayed"]["warnings"]
    return document


__all__ = ["replay_current_step", "worker_failure"]
