"""A run while it is being recorded (``/runs/{id}`` before the run is written): the step streaming,
its text so far, time to first token and tokens per second; and those two figures of a finished
streamed step. The figures are computed once, by ``core/record/live.py``'s ``stream_figures``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...core.record.live import figures_text, step_stream_text
from .prompt import ReportHeader, prompt_href
from .runs import fmt_ms, fmt_started


@dataclass
class LiveRunView:
    """What ``_run_live.html`` shows: the run as far as it is known, and its streaming step."""

    header: ReportHeader
    id: str
    target: str
    target_href: str
    target_known: bool
    kind: str
    model: str
    origin: str
    started: str
    started_title: str
    step: int
    text: str
    chunks: int
    elapsed: str
    figures: str | None  # "first token 120 ms · 48.2 tok/s" (our count of the text so far), None before the first token
    live: bool = True  # False: the run is neither live nor written (its process is gone)


def live_run_view(header: ReportHeader, run: dict[str, Any], known_targets: set[str], counter: Any) -> LiveRunView:
    """The view of ``run`` as ``RunStore.live_run`` gives it (``counter`` counts the text's tokens)."""
    found = run.get("live")
    live: dict[str, Any] = found if isinstance(found, dict) else {}
    text = str(live.get("text") or "")
    tokens = counter.count(text) if text else 0
    started, started_title = fmt_started(run.get("started_at"))
    target = str(run.get("target") or "")
    return LiveRunView(
        header=header, id=str(run.get("id") or ""), target=target, target_href=prompt_href(target), target_known=target in known_targets,
        kind=str(run.get("kind") or ""), model=str(run.get("model") or "—"), origin=str(run.get("origin") or "app"),
        started=started, started_title=started_title, step=int(live.get("index") or 0), text=text, chunks=int(live.get("chunks") or 0),
        elapsed=fmt_ms(live.get("elapsed_ms")), figures=figures_text(live.get("first_token_ms"), live.get("elapsed_ms"), tokens),
    )


def gone_view(header: ReportHeader, run_id: str) -> LiveRunView:
    """A run page whose run stopped being live without being written (its process ended mid-run)."""
    return LiveRunView(header, run_id, "", "", False, "", "—", "", "—", "", 0, "", 0, "—", None, live=False)


__all__ = ["LiveRunView", "gone_view", "live_run_view", "step_stream_text"]
