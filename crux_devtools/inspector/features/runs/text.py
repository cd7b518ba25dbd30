"""Recorded runs as plain text, for the command line: one line per run, and a run's one-line summary.

Reads run dicts (the shape ``core/record/runstore.py`` describes, or the ``RunSummary`` of ``RunStore.list``) and never
re-derives anything: token figures are the receipts' and the provider's.
"""

from __future__ import annotations

import os
import re
from datetime import datetime
from typing import Any

from ....core.record.pricing import cache_usage_text, format_usd, format_usd_column
from ..shown.visible import visible

COLUMNS = ("TIME", "TARGET", "STATUS", "STEPS", "INPUT TOKENS", "USAGE IN/OUT", "DURATION", "COST", "MODEL", "ORIGIN", "ID")
RIGHT = frozenset({"STEPS", "INPUT TOKENS", "USAGE IN/OUT", "DURATION", "COST"})


def local_datetime(started_at: Any) -> datetime | None:
    """``started_at`` (ISO 8601) in local time (a time without zone as it is), or ``None`` when it
    cannot be read or shown in local time (``0001-01-01T00:00:00+01:00`` has no local time)."""
    if not isinstance(started_at, str):
        return None
    try:
        when = datetime.fromisoformat(started_at)
        return when.astimezone() if when.tzinfo is not None else when
    except (ValueError, OverflowError, OSError):
        return None


def local_time(started_at: Any) -> str:
    """``started_at`` (ISO 8601) in local time to the second, or the recorded text, or ``-``."""
    when = local_datetime(started_at)
    if when is not None:
        return when.strftime("%Y-%m-%d %H:%M:%S")
    return started_at[:32] if isinstance(started_at, str) and started_at else "-"


def count(value: Any) -> str:
    """A token count with thousands separators; anything else that was recorded as it is, or ``-``."""
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return "-" if value is None else str(value)


def duration(ms: Any) -> str:
    if not isinstance(ms, (int, float)):
        return "-"
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.2f} s"


def usage(value: Any) -> str:
    """The provider-reported usage as ``in/out`` (with the cache reads and writes when there are
    any), or ``-`` when the provider reported none."""
    if not isinstance(value, dict):
        return "-"
    cache = cache_usage_text(value)
    return f"{count(value.get('input_tokens', 0))}/{count(value.get('output_tokens', 0))}" + (f" ({cache})" if cache else "")


def step_count(run: dict[str, Any]) -> int:
    given = run.get("step_count")
    if isinstance(given, int) and not isinstance(given, bool):
        return given
    steps = run.get("steps")
    return len(steps) if isinstance(steps, list) else 0


NOT_PLANNED = "not planned here"
"""What every view shows for the input tokens of a run (or a step) crux did not plan: a call another
library made and an OpenTelemetry span reported. There is no receipt, so there is no count of ours
(the provider's own usage, when the span has it, is shown as usual)."""


def step_planned(step: Any) -> bool:
    """Whether crux planned this step: its receipt has our count of the input tokens."""
    request = step.get("request") if isinstance(step, dict) else None
    tokens = request.get("input_tokens") if isinstance(request, dict) else None
    return isinstance(tokens, int) and not isinstance(tokens, bool)


def run_planned(run: dict[str, Any]) -> bool:
    """Whether crux planned this run (or a summary of it): ``planned`` as ingested runs record it;
    else, for a run from OpenTelemetry, whether any step has a receipt; every other run was planned."""
    flag = run.get("planned")
    if isinstance(flag, bool):
        return flag
    if run.get("origin") != "otel":
        return True
    steps = run.get("steps")
    if isinstance(steps, list):
        return any(step_planned(s) for s in steps)
    total = run.get("input_tokens")
    return isinstance(total, int) and not isinstance(total, bool) and total > 0


def tokens_or_not_planned(run: dict[str, Any]) -> str:
    """The run's input tokens as every view shows them: ``8,533``, or ``not planned here``."""
    return f"{input_tokens(run):,}" if run_planned(run) else NOT_PLANNED


def step_tokens_or_not_planned(step: Any) -> str:
    """A step's input tokens (its receipt's) as every view shows them, or ``not planned here``."""
    return f"{_step_tokens(step):,}" if step_planned(step) else NOT_PLANNED


def input_tokens(run: dict[str, Any]) -> int:
    """Our count of what was sent, summed over the steps (the receipts' ``input_tokens``); a step
    whose count is missing or not a number adds nothing."""
    total = run.get("input_tokens")
    if isinstance(total, int) and not isinstance(total, bool):
        return total
    steps = run.get("steps")
    found = 0
    for step in steps if isinstance(steps, list) else []:
        request = step.get("request") if isinstance(step, dict) else None
        tokens = request.get("input_tokens") if isinstance(request, dict) else None
        if isinstance(tokens, int) and not isinstance(tokens, bool):
            found += tokens
    return found


def cells(run: dict[str, Any], cost: str | None = None) -> tuple[str, ...]:
    """The run's cells, each on one line with its control characters shown, never obeyed; ``cost``
    is the Cost cell as its column shows it (``format_usd_column``), else the run's own."""
    return tuple(visible(cell) for cell in raw_cells(run, cost))


def raw_cells(run: dict[str, Any], cost: str | None = None) -> tuple[str, ...]:
    return (
        local_time(run.get("started_at")),
        str(run.get("target") or "-"),
        str(run.get("status") or "-"),
        str(step_count(run)),
        tokens_or_not_planned(run),
        usage(run.get("usage")),
        duration(run.get("duration_ms")),
        cost if cost is not None else format_usd(run.get("cost_usd")),  # set by the caller from the project's prices (run_costs)
        str(run.get("model") or "-"),
        str(run.get("origin") or "-"),
        str(run.get("id") or "-"),
    )


def widths(rows: list[tuple[str, ...]]) -> list[int]:
    return [max(len(row[i]) for row in [COLUMNS, *rows]) for i in range(len(COLUMNS))]


def line(row: tuple[str, ...], sizes: list[int]) -> str:
    out = [cell.rjust(size) if name in RIGHT else cell.ljust(size) for name, cell, size in zip(COLUMNS, row, sizes, strict=True)]
    return "  ".join(out).rstrip()


def run_table(runs: list[dict[str, Any]]) -> tuple[list[str], list[int]]:
    """A header and one aligned line per run; also the column widths (to align lines added later)."""
    costs = format_usd_column([r.get("cost_usd") for r in runs])  # one precision for the column
    rows = [cells(r, cost) for r, cost in zip(runs, costs, strict=True)]
    sizes = widths(rows)
    return [line(COLUMNS, sizes), *(line(row, sizes) for row in rows)], sizes


def run_line(run: dict[str, Any], sizes: list[int] | None = None) -> str:
    """One run as a line (aligned to ``sizes`` when given, growing a column only if it must)."""
    row = cells(run)
    if sizes is None:
        return line(row, widths([row]))
    return line(row, [max(size, len(cell)) for size, cell in zip(sizes, row, strict=True)])


# What a failed model call's error says when the connection was never made: nothing reached the model.
_NOT_CONNECTED = ("ConnectError", "ConnectionRefusedError", "could not reach model")


def _step_tokens(step: Any) -> int:
    request = step.get("request") if isinstance(step, dict) else None
    tokens = request.get("input_tokens") if isinstance(request, dict) else None
    return tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else 0


def unanswered(step: Any) -> str | None:
    """``"not sent"`` for a step whose model call failed before a connection was made, ``"no answer"``
    for one whose call failed otherwise (it may have reached the model), ``None`` for an answered step."""
    if not isinstance(step, dict) or not isinstance(step.get("error"), dict):
        return None
    if step.get("response_text") is not None or step.get("tool_calls") or step.get("usage"):
        return None  # the model answered (the step failed after, e.g. in a tool)
    error = step["error"]
    said = f"{error.get('message') or ''}\n{error.get('traceback') or ''}"
    return "not sent" if any(mark in said for mark in _NOT_CONNECTED) else "no answer"


def sent_words(run: dict[str, Any]) -> str:
    """The run's input tokens, saying which were really sent: ``8,533 input tokens sent``, or
    ``nothing sent: 8,533 input tokens planned, the model could not be reached`` when a call failed."""
    if not run_planned(run):
        return f"input tokens {NOT_PLANNED}"
    steps = [s for s in run.get("steps") or [] if isinstance(s, dict)]
    failed = [(s, unanswered(s)) for s in steps if unanswered(s) is not None]
    if not failed:
        return f"{input_tokens(run):,} input tokens sent"
    answered = sum(_step_tokens(s) for s in steps if unanswered(s) is None)
    planned = sum(_step_tokens(s) for s, _ in failed)
    if all(kind == "not sent" for _, kind in failed):
        lead, tail = "nothing sent", f"{planned:,} input tokens planned, not sent: the model could not be reached"
    else:
        lead, tail = "nothing answered", f"{planned:,} input tokens sent without an answer: the model call failed"
    return f"{answered:,} input tokens sent, then {tail}" if answered else f"{lead}: {tail}"


_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)', re.M)
_NOT_USER = tuple(f"{os.sep}{name}{os.sep}" for name in ("site-packages", ".venv", "venv", "node_modules"))


def user_frame(error: Any, root: str | os.PathLike[str]) -> tuple[str, int] | None:
    """Where in the project's own code an error was raised, ``("app.py", 12)``: the error's ``file``
    and ``line`` when it has them, else the innermost frame of its traceback in a project file (a tool
    that raised, a model adapter of the project's); None when no frame is the project's."""
    if not isinstance(error, dict):
        return None
    if error.get("file") and error.get("line"):
        return str(error["file"]), int(error["line"])
    base = os.path.join(os.path.realpath(root), "")
    found = None
    for frame in _FRAME.finditer(str(error.get("traceback") or "")):
        path = os.path.realpath(frame.group("file"))
        if path.startswith(base) and not any(part in path for part in _NOT_USER):
            found = (os.path.relpath(path, base), int(frame.group("line")))
    return found


def user_site(error: Any, root: str | os.PathLike[str]) -> str | None:
    """``user_frame`` as ``app.py:12`` (what ``run`` prints before the error)."""
    found = user_frame(error, root)
    return f"{found[0]}:{found[1]}" if found else None


def located(error: Any, root: str | os.PathLike[str] | None) -> Any:
    """``error`` with ``file`` and ``line`` set to its ``user_frame``: the run views (web and TUI)
    show the project's line up front, as ``run`` prints it. Anything else is returned as it is."""
    found = user_frame(error, root) if root is not None else None
    if found is None or (error.get("file"), error.get("line")) == found:
        return error
    return {**error, "file": found[0], "line": found[1]}


def run_summary(run: dict[str, Any]) -> str:
    """One sentence about a run: status, target, steps, tokens, usage, time, model, where it was saved."""
    parts = [
        str(run.get("status") or "error"),
        str(run.get("target") or "-"),
        f"{step_count(run)} step{'s' if step_count(run) != 1 else ''}",
        sent_words(run),
    ]
    if isinstance(run.get("usage"), dict):
        parts.append(f"usage {usage(run.get('usage'))}")
    parts.append(duration(run.get("duration_ms")))
    if run.get("model"):
        parts.append(str(run["model"]))
    if run.get("recorded"):
        parts.append(f"recorded as {run.get('id')}")
    elif run.get("record_error"):
        parts.append(f"not recorded: {run['record_error']}")
    return visible(" · ".join(parts))
