"""A recorded step's Replay panel: ``GET /runs/{id}/steps/{k}/replay`` and ``POST .../replay/send``.

Replays run in the session's worker (the planner never runs in the server's process), from the
step's recording or from today's source (``inspector/features/replay/source.replay_variant``, the CLI's own
way); the panel is an htmx fragment (``_replay.html``) that the step's form swaps in. A send calls the run's model in the
worker after the browser's confirmation and writes the answer as a child run (``parent``,
``fork_step``) to the project's store.
"""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import parse_qsl

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from ...core.record.runstore import RunStoreError
from ...inspector.features.replay.source import current_command, replay_variant
from ...inspector.features.replay.document import send_request, write_child_run
from ...inspector.features.runs.costs import prices_for
from .pages import render, url_encoded_form
from ..runs_access import open_store
from ..views.replay import ReplayPanel, as_example, parse_variant, recorded_column, variant_column, variant_list

router = APIRouter()


async def _run_and_step(request: Request, run_id: str, index: int) -> tuple[dict[str, Any] | None, dict[str, Any] | None, str | None]:
    store, unavailable = open_store(request.app.state.session)
    if store is None:
        return None, None, unavailable
    try:
        run = await asyncio.to_thread(store.get, run_id)
    except RunStoreError as exc:
        return None, None, str(exc)
    if run is None:
        return None, None, f"no recorded run {run_id!r}"
    step = next((s for s in run.get("steps") or [] if isinstance(s, dict) and s.get("index") == index), None)
    if step is None:
        return run, None, f"run {run_id!r} has no step {index}"
    return run, step, None


async def send_question(session: Any, run: dict[str, Any]) -> dict[str, Any] | None:
    """The worker's question about a send of ``run``'s target (the model it would call, its token),
    asked without sending; ``None`` when the target is gone or has no model (a send then says why)."""
    try:
        answer = await session.replay_send(str(run.get("target")), {"ask": True})
    except Exception:  # noqa: BLE001 - a worker that cannot answer: no estimate; pressing Send reports the fault
        return None
    if not answer.get("ok") or not isinstance(answer.get("result"), dict) or "confirm" not in answer["result"]:
        return None
    return dict(answer["result"]["confirm"])


@router.get("/runs/{run_id}/steps/{index}/replay", response_class=HTMLResponse)
async def replay_panel(request: Request, run_id: str, index: int) -> Response:
    run, step, problem = await _run_and_step(request, run_id, index)
    if run is None or step is None:
        return render(request, "_replay.html", {"panel": None, "problem": problem}, status=404)
    params = request.query_params
    fields = [(k, v) for k, v in params.multi_items() if k not in ("v", "add", "clear")]
    new, problems = parse_variant(fields)
    previous = [] if "clear" in params else params.getlist("v")
    variants = variant_list(previous, new if ("add" in params or not previous) and not problems else None)
    recorded = recorded_column(step)
    columns = []
    prices = prices_for(getattr(request.app.state.session, "root", None))
    session = request.app.state.session
    asked = await send_question(session, run)  # the model a send would call now, not the recorded one
    for variant in variants:
        replayed = await replay_variant(session, run, index, variant.overrides, variant.source)
        column = variant_column(variant, replayed, recorded)
        if replayed.document is not None and column.input_tokens is not None and asked is not None:
            column.estimate = prices.estimate(asked.get("model"), column.input_tokens)
        columns.append(column)
    panel = ReplayPanel(run_id, index, recorded, columns, problems, as_example(run), f"/runs/{run_id}/steps/{index}/replay",
                        current_command(getattr(session, "root", None), run_id, index),
                        asked.get("model") if asked else None, str(asked.get("confirm") or "") if asked else "")
    return render(request, "_replay.html", {"panel": panel, "problem": None})


@router.post("/runs/{run_id}/steps/{index}/replay/send", response_class=HTMLResponse)
async def replay_send(request: Request, run_id: str, index: int) -> Response:
    """Send one variant's replayed request (the browser asked first) and record the child run."""
    run, step, problem = await _run_and_step(request, run_id, index)
    form = await url_encoded_form(request)
    variant, problems = parse_variant(parse_qsl(form.get("q", "")))
    if run is None or step is None or problems:
        return render(request, "_replay_sent.html", {"sent": None, "problem": problem or "; ".join(problems)}, status=400)
    session = request.app.state.session
    replayed = await replay_variant(session, run, index, variant.overrides, variant.source)
    document = replayed.document
    if document is None or document["replayed"]["sent"] is None:
        why = replayed.error or f"nothing to send: the replayed request does not fit ({document['replayed']['error_code'] if document else ''})"
        return render(request, "_replay_sent.html", {"sent": None, "problem": why}, status=400)
    # the token of the model the browser's question was priced at: a model changed since is asked about again
    answer = await session.replay_send(str(run.get("target")), {**send_request(document, run), "confirmed": form.get("confirm") or None})
    if not answer.get("ok"):
        failure = answer.get("error") or {}
        return render(request, "_replay_sent.html", {"sent": None, "problem": f"{failure.get('type')}: {failure.get('message')}"}, status=502)
    if "confirm" in answer["result"]:  # nothing went: the model that would be called is not the one confirmed
        asked = answer["result"]["confirm"]
        again = {"model": asked.get("model"), "confirm": asked.get("confirm"), "q": form.get("q", ""),
                 "estimate": prices_for(getattr(session, "root", None)).question(asked), "href": f"/runs/{run_id}/steps/{index}/replay/send"}
        return render(request, "_replay_sent.html", {"sent": None, "problem": None, "again": again})  # 200: htmx swaps it in
    child = answer["result"]
    root = getattr(session, "root", None)
    try:
        await asyncio.to_thread(write_child_run, root, child)
    except RunStoreError as exc:
        return render(request, "_replay_sent.html", {"sent": None, "problem": str(exc)}, status=503)
    return render(request, "_replay_sent.html", {"sent": child, "problem": None})


__all__ = ["router"]
