"""``written``: the project files user code in this worker wrote so far (``graph.Tracker.written_files``)."""

from __future__ import annotations

from typing import Any

from ....shapes import WrittenRequest as Request, WrittenResult as Answer

DOING = "holding your project between requests"


def handle(worker: Any, request: Request) -> Answer:
    from ..graph import tracker

    return {"written": tracker.written_files()}
