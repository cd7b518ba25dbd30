"""Reading the session's run store from the web app: one place that opens it and says why it cannot.

The store (``session.runs()``) is one SQLite file that other processes write while pages are open.
Reads run in a thread (the store is thread-safe), so a slow disk never stalls the event loop that
streams live updates. A store that cannot be opened is a sentence for a banner, never a 500.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from ..core.record.runstore import RunStore, RunStoreError
from ..inspector.api import find_prompt
from .views.runs import RECENT, RecentRuns, RunFilters, run_row

log = logging.getLogger(__name__)


def open_store(session: Any) -> tuple[RunStore | None, str | None]:
    """The session's run store, or why there is none (said in a sentence the page shows)."""
    opener = getattr(session, "runs", None)
    if not callable(opener):
        return None, "this inspector session does not record runs"
    try:
        store = opener()
    except Exception as exc:  # a broken store is a banner on the page, never a crash
        log.warning("opening the run store failed: %s", exc)
        return None, f"the run store cannot be opened: {exc}"
    if store is None:
        return None, "the run store (.crux/runs.sqlite3) cannot be opened; the server log says why"
    return store, None


async def messages_at_step(session: Any, at_step: str) -> tuple[dict[str, Any] | None, str]:
    """The messages of a recorded step (``RUN:K``) for the prompt page (``replaying.step_messages``),
    and a sentence saying what the page shows (or why the step's messages cannot be used)."""
    from ..inspector.features.replay.document import step_messages

    run_id, _sep, index = at_step.rpartition(":")
    if not run_id or not index.isdigit():
        return None, f"at_step {at_step!r} is not RUN:STEP; the request is planned with the input alone."
    store, unavailable = open_store(session)
    if store is None:
        return None, f"The run's messages cannot be read: {unavailable}; the request is planned with the input alone."
    try:
        run = await asyncio.to_thread(store.get, run_id)
        messages = await asyncio.to_thread(step_messages, store, run, int(index)) if run is not None else None
    except RunStoreError as exc:
        return None, f"The run's messages cannot be read: {exc}; the request is planned with the input alone."
    if run is None or messages is None:
        return None, f"No recorded step {index} of run {run_id!r}: the request is planned with the input alone."
    history, traffic = len(messages["history"]), messages["turn"]
    calls = sum(len(m.get("tool_calls") or []) for m in traffic)
    what = [f"{history} earlier message{'s' if history != 1 else ''} of the caller"] if history else []
    what.append(f"the tool traffic of the steps before it ({calls} tool call{'s' if calls != 1 else ''} and {'their results' if calls != 1 else 'its result'})" if traffic
                else "no tool traffic (the first step)")
    return messages, f"Planned as step {index} of run {run_id} sent it: the run input, {', then '.join(what)}."


async def recent_runs(session: Any, target: str) -> RecentRuns:
    """A prompt's newest few runs and how many it has in all (the prompt page's "Recent runs")."""
    store, unavailable = open_store(session)
    rows, total = [], 0
    if store is not None:
        try:
            summaries, total = await asyncio.to_thread(lambda: (store.list(target=target, limit=RECENT), store.count(target=target)))
            rows = [run_row(s) for s in summaries]
        except RunStoreError as exc:
            unavailable = str(exc)
    prompt = find_prompt(getattr(session, "report", None), target)
    runnable = prompt is not None and prompt["has_model"]
    return RecentRuns(target=target, rows=rows, total=total, all_href=f"/runs?{RunFilters(target=target).query()}", unavailable=unavailable, runnable=runnable)
