"""``replay_continue``: the agent forked at a recorded step and run on; answers the child run (``replay_continue.py``)."""

from __future__ import annotations

from typing import Any

from ....shapes import ReplayContinueAnswer as Answer, ReplayContinueRequest as Request


def lifted(request: Request) -> bool:
    return True


def handle(worker: Any, request: Request) -> Answer:
    from ..replay_continue import continue_from

    return worker.redacted_child(continue_from(worker.project.root, worker.run_target(request["prompt_id"]), dict(request), worker.defaults))  # type: ignore[no-any-return]
