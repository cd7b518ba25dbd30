"""What the worker's run op decides about confirmation, for the fake sessions of the front-end tests:
a prompt the fake report shows with a real model runs only with that model's token."""

from __future__ import annotations

from typing import Any

from crux_devtools.inspector.api import find_prompt
from crux_devtools.inspector.worker.run_confirm import confirmation_request

FAKE_TOKEN = "fake-model-token"


def fake_check_run(report: Any, prompt_id: str, confirm: Any) -> dict[str, Any] | None:
    prompt = find_prompt(report, prompt_id)
    if prompt is None or prompt.get("model_kind") in ("scripted", None) or confirm is True or confirm == FAKE_TOKEN:
        return None
    return confirmation_request(prompt_id, prompt.get("kind", "agent"), f"{prompt['model_kind']}-model", FAKE_TOKEN)
