"""``load``: import the project's modules and evaluate every target (``Worker.load``); with ``progress``,
each step and each report streams as an event first (``transport/wire.py``)."""

from __future__ import annotations

from typing import Any

from ....shapes import LoadRequest as Request, LoadResult as Answer

NEEDS_PROJECT = False
DOING = "importing your modules"


def handle(worker: Any, request: Request) -> Answer:
    return worker.load(request)  # type: ignore[no-any-return]
