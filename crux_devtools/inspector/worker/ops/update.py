"""``update``: re-import what the changed files affect and re-evaluate their targets in place
(``Worker.update``), or ``{"full": why}`` when only a full load is right."""

from __future__ import annotations

from typing import Any

from ....shapes import UpdateAnswer as Answer, UpdateRequest as Request

DOING = "importing your modules"


def handle(worker: Any, request: Request) -> Answer:
    return worker.update(request)  # type: ignore[no-any-return]
