"""``prime``: a spare worker readied for the next load (libraries imported, texts counted, files compiled: ``main.prime``)."""

from __future__ import annotations

from typing import Any

from ....shapes import PrimeRequest as Request, PrimeResult as Answer

NEEDS_PROJECT = False
DOING = "warming up for your project"


def handle(worker: Any, request: Request) -> Answer:
    return worker.prime(request)  # type: ignore[no-any-return]
