"""``run``: a target run in the worker and recorded with origin ``inspector``; a real model is called
only with its confirmation token (``run_confirm.py``), else the answer asks for it."""

from __future__ import annotations

from typing import Any

from ....shapes import RunAnswer as Answer, RunRequest as Request


def lifted(request: Request) -> bool:
    return True


def handle(worker: Any, request: Request) -> Answer:
    from ..evaluate import first_request_tokens, run_target
    from ..run_confirm import check_run

    target = worker.find(request["prompt_id"])
    _name, data = worker.input_of(target, request.get("example"), request.get("input"))
    # against the model about to run, not the one shown; the question carries its first request's size to price it
    asked = check_run(target, request.get("confirm"), lambda: first_request_tokens(target, data, worker.defaults))
    if asked is not None:
        return asked  # type: ignore[return-value]
    if worker.recorder is None:
        from crux_devtools.core.record.recording import RunRecorder

        from ...features.diff.redact import project_redact

        worker.recorder = RunRecorder(worker.project.root, redact=project_redact(worker.project.root))  # the project's redact hook
    return run_target(worker.project.root, target, data, worker.recorder)  # type: ignore[return-value]
