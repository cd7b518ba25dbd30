"""Forking an agent at a recorded step and running on (runs in the worker: the model adapter and the
tools are user code).

``continue_from`` plans step K from its recording (with the replay's overrides), sends it to the
target's model, and goes on as ``generate``'s loop does: each tool call the model makes is answered
with the recorded result of the same call (same tool, same arguments) anywhere in the recorded run;
with ``live_tools`` a call that was never recorded runs the target's real tool, else the run stops
with an error naming the call. Every later step is planned from step K's plan inputs with the
conversation grown by the new traffic, holding each contributor at or below the rung it was sent at
(fidelity never rises within an epoch). The answer is the child run (``parent``, ``fork_step``).
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from ...core.plan.budget import model_name_of
from ...core.errors import ErrorInfo
from ...core.contract import acall
from ...core.record.recording import relative_file
from ...core.record.replay import ReplayError, plan_recorded
from ...core.record.runstore import RunStore, iso_now, new_run_id, read_step_plan
from ...core.tokens import default_counter
from ...shapes import ErrorInfoDict
from .evaluate import fresh_model, runnable_model
from .run_confirm import check_call
from .replay_current import overrides_of


def _call_key(name: str, arguments: Any) -> str:
    return f"{name}\0{json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)}"


def recorded_answers(run: dict[str, Any]) -> dict[str, str]:
    """What the model was shown for each tool call of the recorded run, by tool and arguments."""
    out: dict[str, str] = {}
    for step in run.get("steps") or []:
        for call, result in zip(step.get("tool_calls") or [], step.get("tool_results") or [], strict=False):
            if isinstance(call, dict) and isinstance(result, dict) and isinstance(result.get("model_output"), str):
                out.setdefault(_call_key(str(call.get("name")), call.get("arguments")), result["model_output"])
    return out


def continue_from(root: Any, target: Any, request: dict[str, Any], defaults: Any) -> dict[str, Any]:
    """``request``: ``run``, ``step``, ``overrides``, ``live_tools``, ``confirmed``. Answers the child
    run, ``{"confirm": ...}`` for a model that is not scripted and not confirmed, or ``{"error"}``."""
    model = runnable_model(target)
    if model is None:
        return {"error": f"{target.kind} {target.id!r} has no model adapter to continue with"}
    store = RunStore.for_project(root, create=False)
    try:
        run = store.get(str(request["run"]))
        index = int(request.get("step") or 0)
        data = read_step_plan(store, str(request["run"]), index) if run is not None else None
    except ReplayError as exc:  # a damaged run: say which
        return {"error": str(exc)}
    finally:
        store.close()
    if run is None or data is None:
        return {"error": f"run {request['run']!r} step {request.get('step')} has no plan inputs to continue from"}
    try:
        overrides = overrides_of(request.get("overrides") or {}, defaults)
        # the token of the model about to be called, as a Run; the question is priced at the first
        # request the continuation would send (planned as the loop plans it)
        asked = check_call(target, request.get("confirmed"), lambda: first_request_tokens(run, index, data, overrides))
        if asked is not None:
            return {"confirm": asked}
        return asyncio.run(_loop(root, target, fresh_model(model), run, index, data, overrides, bool(request.get("live_tools"))))
    except ReplayError as exc:
        return {"error": str(exc)}


def first_request_tokens(run: dict[str, Any], index: int, data: dict[str, Any], overrides: Any) -> int | None:
    """The input tokens of the first request a continuation from step ``index`` sends (None: it fits nothing)."""
    step = next(s for s in run["steps"] if s.get("index") == index)
    messages = list((step.get("sent") or {}).get("messages") or [])
    planned = plan_recorded(data["frame"], data["texts"], dict(data["state"]), messages, overrides)
    return planned.plan.input_tokens if planned.request is not None else None


async def _loop(root: Any, target: Any, model: Any, run: dict[str, Any], index: int, data: dict[str, Any], overrides: Any, live_tools: bool) -> dict[str, Any]:
    from ...core.run.runtime import run_tools  # the loop's own tool runner: validation, offload policies

    frame, texts, state = data["frame"], data["texts"], dict(data["state"])
    step = next(s for s in run["steps"] if s.get("index") == index)
    messages = list((step.get("sent") or {}).get("messages") or [])
    answers = recorded_answers(run)
    real_tools = getattr(target.prompt, "all_tools", {}) or {}
    max_steps = getattr(target.obj, "max_steps", None) or 8
    started_at, started = iso_now(), time.perf_counter()
    steps: list[dict[str, Any]] = []
    error: ErrorInfoDict | None = None
    text: str | None = None
    for k in range(index, max(max_steps, index + 1)):
        planned = plan_recorded(frame, texts, state, messages, overrides)
        plan = planned.plan
        if planned.request is None:
            error = {"type": "RequestCompositionError", "message": plan.warnings[0] if plan.warnings else "nothing fits", "traceback": None}
            break
        receipt = {"input_tokens": plan.input_tokens, "max_input_tokens": planned.limits.max_input_tokens, "optimize_at": planned.limits.optimize_at,
                   "adaptations": [a.to_dict() for a in plan.adaptations], "contributions": [c.to_dict() for c in plan.contributions],
                   "candidates": [c.to_dict() for c in plan.candidates], "warnings": planned.warnings, "model": model_name_of(model)}
        record: dict[str, Any] = {"index": k, "request": receipt, "sent": planned.request.to_dict(), "response_text": None, "tool_calls": [], "tool_results": [],
                  "offloads": [], "usage": None, "latency_ms": None, "error": None}
        steps.append(record)
        if not planned.new_epoch:  # fidelity never rises within the epoch: hold each contributor at its rung
            for contributor, chosen in zip(plan.contributors, plan.choice, strict=True):
                state["ceilings"] = {**state["ceilings"], contributor.id: max(state["ceilings"].get(contributor.id, 0), chosen)}
        call_started = time.perf_counter()
        try:
            response = await acall(model, planned.request)
        except Exception as exc:  # noqa: BLE001 - an adapter fault ends the fork with the step's error
            error = ErrorInfo.from_exception(exc, f"model {model_name_of(model)!r} failed: {type(exc).__name__}: {exc}").to_dict()
            record["error"] = error
            break
        record["latency_ms"] = round((time.perf_counter() - call_started) * 1000, 3)
        usage_of = getattr(response, "usage", None)
        record["usage"] = dict(usage_of) if isinstance(usage_of, dict) else None
        record["response_text"] = response.text
        if not response.tool_calls:
            text = response.text
            break
        record["tool_calls"] = [c.to_dict() for c in response.tool_calls]
        tool_messages = []
        for call in response.tool_calls:
            shown = answers.get(_call_key(call.name, call.arguments))
            if shown is None and live_tools and call.name in real_tools:
                results, pending, failure, _cause = await run_tools([call], {call.name: real_tools[call.name]}, frame["namespace"], default_counter())
                if failure is not None:
                    error = failure.to_dict()
                    break
                if pending:  # offloaded: the model may read it back from now on
                    state["support_required"] = True
                shown = results[0].model_output
                record["tool_results"].append({"name": call.name, "output": results[0].output, "model_output": shown, "call_id": call.id})
            elif shown is None:
                why = "pass --live-tools to run it" if call.name in real_tools else "the target offers no such tool"
                error = {"type": "NoRecordedResult", "message": f"no recorded result for {call.name}({json.dumps(call.arguments, ensure_ascii=False)}); {why}", "traceback": None}
                break
            else:
                record["tool_results"].append({"name": call.name, "output": None, "model_output": shown, "call_id": call.id, "recorded": True})
            tool_messages.append({"role": "tool", "tool_call_id": call.id, "content": shown})
        if error is not None:
            record["error"] = error
            break
        messages = messages + [response.to_message()] + tool_messages
    else:
        error = {"type": "MaxSteps", "message": f"stopped after max_steps={max_steps} without a text answer", "traceback": None}
    usage = [s["usage"] for s in steps if s["usage"]]
    site = getattr(target.obj, "defined_at", None)
    child = {
        "id": new_run_id(), "target": target.id, "kind": target.kind, "file": site[0] if site else None, "line": site[1] if site else None,
        "origin": "inspector", "started_at": started_at, "duration_ms": round((time.perf_counter() - started) * 1000, 3),
        "status": "ok" if error is None else ("max_steps" if error["type"] == "MaxSteps" else "error"), "error": error,
        "model": model_name_of(model), "input": run.get("input"), "text": text,
        "usage": {k: sum(u.get(k, 0) for u in usage) for k in ("input_tokens", "output_tokens")} if usage else None,
        "steps": steps, "parent": run.get("id"), "fork_step": index,
    }
    return relative_file(child, root)


__all__ = ["continue_from", "recorded_answers"]
