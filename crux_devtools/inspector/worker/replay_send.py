"""Sending a replayed request to the run's model (runs in the worker: the model adapter is user code).

``send_replayed`` calls the target's model adapter once with the replayed request (a ``ScriptedModel``
from the top of its script) and answers with the child run: one step, ``parent`` (the recorded run)
and ``fork_step`` (the step replayed). A model that is not scripted is called only when the request's
``confirmed`` is the token of that very model (``run_confirm.model_token``, handed out with the
question; ``True`` only for an explicit ``--yes``); otherwise the answer is ``{"confirm": {...}}``
(the model that would be called, its token and the request's size) and nothing is sent. So a save
that switches the model while the question is on screen makes the worker ask again. ``ask``
answers that question for any model without sending (a front end pricing Send before it is pressed). A model that
fails (unreachable, an error answer) makes a run with ``status="error"`` and the error: nothing of
the replay is lost.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from ...core.plan.budget import model_name_of
from ...core.errors import ErrorInfo
from ...core.run.models import ModelRequest
from ...core.contract import acall
from ...core.record.recording import relative_file
from ...core.record.replay import RecordedTool
from ...core.record.runstore import iso_now, new_run_id
from .evaluate import fresh_model, runnable_model
from .run_confirm import check_call


def wire_tool(tool: dict[str, Any]) -> RecordedTool:
    """A tool of a request's ``to_dict()`` (name, description, parameters) as an offerable tool."""
    return RecordedTool({"type": "function", "function": {"name": tool.get("name"), "description": tool.get("description"), "parameters": tool.get("parameters")}})


def send_replayed(root: Any, target: Any, request: dict[str, Any]) -> dict[str, Any]:
    """``request``: ``sent`` (the replayed request), ``run`` (the recorded run's id), ``step``,
    ``input``, ``receipt`` (the replayed plan's receipt fields), ``confirmed`` (a model token), ``ask``."""
    model = runnable_model(target)
    if model is None:
        raise ValueError(f"{target.kind} {target.id!r} has no model adapter to send the replayed request to")
    name = model_name_of(model)
    asked = check_call(target, request.get("confirmed"), (request.get("receipt") or {}).get("input_tokens"), ask=bool(request.get("ask")))
    if asked is not None:
        return {"confirm": asked}
    sent = request["sent"]
    call = ModelRequest(sent["system"], list(sent["messages"]), [wire_tool(t) for t in sent["tools"]], sent.get("max_tokens"), sent.get("cache"))  # type: ignore[misc, arg-type]
    started_at, started = iso_now(), time.perf_counter()
    error: ErrorInfo | None = None
    response: Any = None
    try:
        response = asyncio.run(acall(fresh_model(model), call))
    except Exception as exc:  # noqa: BLE001 - any adapter fault is recorded as the child run's error
        error = ErrorInfo.from_exception(exc, f"model {name!r} failed: {type(exc).__name__}: {exc}")
    latency = round((time.perf_counter() - started) * 1000, 3)
    text = getattr(response, "text", None) if response is not None else None
    calls = [c.to_dict() for c in getattr(response, "tool_calls", None) or []]
    usage = getattr(response, "usage", None)
    step = {
        "index": request["step"], "request": {**request.get("receipt", {}), "model": name}, "sent": sent,
        "response_text": text if isinstance(text, str) else None, "tool_calls": calls, "tool_results": [], "offloads": [],
        "usage": dict(usage) if isinstance(usage, dict) else None, "latency_ms": latency, "error": error.to_dict() if error else None,
    }
    site = getattr(target.obj, "defined_at", None)
    run = {
        "id": new_run_id(), "target": target.id, "kind": target.kind, "file": site[0] if site else None, "line": site[1] if site else None,
        "origin": "inspector", "started_at": started_at, "duration_ms": latency,
        "status": "error" if error is not None else "ok", "error": error.to_dict() if error else None, "model": name,
        "input": request.get("input"), "text": step["response_text"] if not calls else None, "usage": step["usage"], "steps": [step],
        "parent": request["run"], "fork_step": request["step"],
    }
    return relative_file(run, root)


__all__ = ["send_replayed", "wire_tool"]
