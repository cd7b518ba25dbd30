"""``replay_send``: a replayed request sent to the target's model; answers the child run (``replay_send.py``)."""

from __future__ import annotations

from typing import Any

from ....shapes import ReplaySendAnswer as Answer, ReplaySendRequest as Request


def lifted(request: Request) -> bool:
    return True


def handle(worker: Any, request: Request) -> Answer:
    from ..replay_send import send_replayed

    return worker.redacted_child(send_replayed(worker.project.root, worker.run_target(request["prompt_id"]), dict(request)))  # type: ignore[no-any-return]
