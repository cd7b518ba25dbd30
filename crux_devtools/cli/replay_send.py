"""``crux-devtools replay --send``: the replayed request sent to the run's model, recorded as a child run.

The model adapter is user code, so the call happens in a worker (``inspector/worker/replay_send.py``). A
model that is not a ``ScriptedModel`` is called only after a confirmation (or ``--yes``), which
shows the estimated input cost where a price is known (``core/record/pricing.py``). The child run is
written to the project's store with ``parent`` (the recorded run) and ``fork_step`` (the step).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import click

from ..core.record.replay_overrides import Overrides


ASKS = 3  # confirmations asked at most when the model changes under each of them


def estimate_line(root: Path, model: str | None, input_tokens: int | None) -> str:
    """``estimated input cost $0.0123 (1,234 input tokens, output extra)``, or ``unpriced: ...``."""
    from ..inspector.features.runs.costs import prices_for

    return prices_for(root).estimate(model, input_tokens)


async def _child_run(root: Path, timeout: float, what: str, call: Any, ask: Any) -> dict[str, Any]:
    """The child run a worker op makes (``call(session, confirmed)``), asking first when the worker
    says the model is not scripted."""
    from .replay_current import worker_failure
    from ..inspector.session.service import ProjectSession

    session = ProjectSession(root, timeout=timeout, watch=False, history=False, prewarm=False, fork=False)
    try:
        await session.start()
        answer = await call(session, None)
        for _ in range(ASKS):  # each answer is the question about the model that would be called now
            if not (answer.get("ok") and "confirm" in answer["result"]):
                break
            confirm = answer["result"]["confirm"]
            if not ask(confirm):
                raise click.ClickException("not sent")
            answer = await call(session, confirm.get("confirm"))  # that model's token: another model asks again
        else:
            raise click.ClickException(f"not sent: the model changed each time it was confirmed ({ASKS} times)")
    finally:
        await session.stop()
    if not answer.get("ok"):
        raise worker_failure(what, answer)
    if "id" not in answer["result"]:  # not a run: why it could not start
        raise click.ClickException(str(answer["result"].get("error")))
    return dict(answer["result"])


def record_child(root: Path, timeout: float, what: str, call: Any, ask: Any) -> dict[str, Any]:
    """Make the child run in a worker (``_child_run``) and write it to the project's store; returns it."""
    from ..core.record.runstore import RunStore, RunStoreError

    child = asyncio.run(_child_run(root, timeout, what, call, ask))
    store = RunStore.for_project(root)
    try:
        store.write(child)
    except RunStoreError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        store.close()
    return child


def send_replay(root: Path, run: dict[str, Any], document: dict[str, Any], *, yes: bool, timeout: float = 120.0) -> dict[str, Any]:
    """Send the replayed request of ``document`` and write the child run; returns it."""
    from ..inspector.features.replay.document import send_request

    replayed = document["replayed"]
    if replayed["sent"] is None:
        raise click.ClickException(f"nothing to send: the replayed request does not fit ({replayed['error_code']})")
    request = send_request(document, run)

    def ask(confirm: dict[str, Any]) -> bool:
        question = f"send the replayed request to {confirm.get('model')!r}, a real model ({estimate_line(root, confirm.get('model'), confirm.get('input_tokens', replayed['input_tokens']))})?"
        return yes or click.confirm(question, default=False, err=True)

    target = str(run.get("target"))
    return record_child(root, timeout, "sending the replayed request", lambda session, confirmed: session.replay_send(target, {**request, "confirmed": confirmed}), ask)


def continue_replay(root: Path, run: dict[str, Any], step: int, overrides: Overrides, *, live_tools: bool, yes: bool, timeout: float = 300.0) -> dict[str, Any]:
    """Fork the agent at ``step`` (with ``overrides``), run it on in a worker, write the child run; returns it."""

    def ask(confirm: dict[str, Any]) -> bool:
        estimate = estimate_line(root, confirm.get("model"), confirm.get("input_tokens"))  # the send confirmation's pricing
        question = f"continue the run with {confirm.get('model')!r}, a real model (each step is a paid call; first step: {estimate})?"
        return yes or click.confirm(question, default=False, err=True)

    request = {"step": step, "overrides": overrides.to_dict(), "live_tools": live_tools}
    return record_child(root, timeout, "continuing the run", lambda session, confirmed: session.replay_continue(run, {**request, "confirmed": confirmed}), ask)


__all__ = ["continue_replay", "send_replay"]
