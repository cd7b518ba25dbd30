"""``replay_step``: a recorded step planned again with overrides, from its recording or (``source``:
``current``) from today's source (``replay_current.py``)."""

from __future__ import annotations

from typing import Any

from ....shapes import ReplayStepAnswer as Answer, ReplayStepRequest as Request


def handle(worker: Any, request: Request) -> Answer:
    from ..replay_current import replay_current_document, replay_recorded_document

    fields: dict[str, Any] = dict(request)
    if request.get("source") == "current":
        return replay_current_document(worker.project.root, worker.find(request["prompt_id"]), fields, worker.defaults)  # type: ignore[return-value]
    return replay_recorded_document(worker.project.root, fields, worker.defaults)  # type: ignore[return-value]
