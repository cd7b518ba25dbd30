"""``held``: the project modules and targets this worker holds."""

from __future__ import annotations

from typing import Any

from ....shapes import HeldRequest as Request, HeldResult as Answer

DOING = "holding your project between requests"


def handle(worker: Any, request: Request) -> Answer:
    return {"modules": sorted(worker.modules), "targets": [t.id for t in worker.project.targets]}
