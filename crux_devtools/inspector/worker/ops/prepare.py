"""``prepare``: an example's missing summaries prepared into ``.crux/summaries.sqlite3`` (a model is
called only with ``allow_models``)."""

from __future__ import annotations

from typing import Any

from ....shapes import PrepareRequest as Request, PrepareResult as Answer


def lifted(request: Request) -> bool:
    return bool(request.get("allow_models"))


def handle(worker: Any, request: Request) -> Answer:
    from ..evaluate import prepare

    target = worker.find(request["prompt_id"])
    _name, data = worker.input_of(target, request.get("example"), request.get("input"))
    return prepare(  # type: ignore[no-any-return]
        worker.project.root, target, data, worker.defaults, contributor=request.get("contributor"),
        allow_models=bool(request.get("allow_models")), token_budget=request.get("token_budget"),
    )
