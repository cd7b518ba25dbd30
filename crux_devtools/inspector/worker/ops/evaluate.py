"""``evaluate``: one example (or a custom input) of a target evaluated and planned again."""

from __future__ import annotations

from typing import Any

from ....shapes import EvaluateRequest as Request, ExampleReport as Answer


def handle(worker: Any, request: Request) -> Answer:
    from ..evaluate import evaluate_example

    target = worker.find(request["prompt_id"])
    name, data = worker.input_of(target, request.get("example"), request.get("input"))
    return evaluate_example(  # type: ignore[no-any-return]
        worker.project.root,
        target,
        name,
        data,
        token_budget=request.get("token_budget"),
        input_budget=request.get("input_budget"),
        defaults=worker.defaults,
        messages=request.get("messages"),
        model=request.get("model"),
    )
