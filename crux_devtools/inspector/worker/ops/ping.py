"""``ping``: the worker's pid (it is up and answering)."""

from __future__ import annotations

import os
from typing import Any

from ....shapes import PingRequest as Request, PingResult as Answer

NEEDS_PROJECT = False
DOING = "starting up"


def handle(worker: Any, request: Request) -> Answer:
    return {"pid": os.getpid()}
