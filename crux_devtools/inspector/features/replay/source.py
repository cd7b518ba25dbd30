"""One replay of a recorded step, as every front end asks for it: from the recording or from today's source.

``replay_variant(session, run, index, overrides, source)`` is the one way the CLI's ``replay``
(``--source current``), the web's Replay panel and the TUI's replay screen get a replay: it asks the
session's worker (op ``replay_step``) and answers a ``Replayed``: the replay document, or the sentence
that says why there is none. From today's source, the run's target must still be in the session's
report (else the sentence names the targets that are); each context's file and line go along, so a
changed text names where it is defined. Light: no planner, no user code in this process.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ....core.record.replay_overrides import Overrides
from ...api import find_prompt

SOURCES = ("recorded", "current")  # plan from what the step's recording kept / from the project's source as it is now


@dataclass(frozen=True, slots=True)
class Replayed:
    """A replay document, or why there is none; ``no_plan_inputs``: the step was recorded before plan
    inputs were kept, so only today's source can plan it."""

    document: dict[str, Any] | None
    error: str | None = None
    no_plan_inputs: bool = False


def failure_line(what: str, error: Mapping[str, Any]) -> str:
    """A worker's failure as one line: ``WHAT failed: FILE:LINE: Type: message``."""
    where = f"{error.get('file')}:{error.get('line')}: " if error.get("file") else ""
    return f"{what} failed: {where}{error.get('type')}: {error.get('message')}"


def missing_target(root: Path | str | None, target: str, report: Mapping[str, Any] | None) -> str:
    """Why a run's target cannot be planned from today's source: it is not in the project's report."""
    known = ", ".join(p["id"] for p in (report or {}).get("prompts", [])) or "none"
    errors = (report or {}).get("errors") or []
    why = f"; the project has load errors, first: {errors[0]['file']}:{errors[0]['line']}: {errors[0]['message']}" if errors else ""
    return f"the run's target {target!r} no longer exists in the source of {root}; known targets: {known}{why}"


def current_command(root: Path | str | None, run_id: str, index: int) -> str:
    """The command line that plans step ``index`` of a run from today's source."""
    return f"crux-devtools replay {shlex.quote(str(root))} --run {shlex.quote(run_id)} --step {index} --source current"


async def replay_variant(session: Any, run: Mapping[str, Any], index: int, overrides: Overrides, source: str = "recorded") -> Replayed:
    """Step ``index`` of ``run`` replayed with ``overrides`` from ``source`` (``recorded`` or
    ``current``) in the session's worker, which receives them as ``overrides.to_dict()`` (see the
    module docstring)."""
    target = str(run.get("target"))
    wire = overrides.to_dict()
    if source == "current":
        prompt = find_prompt(session.report, target)
        if prompt is None:
            return Replayed(None, missing_target(getattr(session, "root", None), target, session.report))
        where: dict[str, Any] = {c["id"]: [c["file"], c["line"]] for c in prompt["contexts"]}
        own = [prompt["file"], prompt["line"]]
        where.update({"prompt": own, "messages": own})
        answer = await session.replay_step(dict(run), index, wire, source="current", where=where)
    else:
        answer = await session.replay_step(dict(run), index, wire)
    if not answer.get("ok"):
        error = answer.get("error") or {}
        if source == "current":
            return Replayed(None, failure_line(f"planning {target!r} from today's source", error))
        return Replayed(None, f"{error.get('type')}: {error.get('message')}")
    result = answer["result"]
    if "error" in result:
        return Replayed(None, str(result["error"]), bool(result.get("no_plan_inputs")))
    return Replayed(result)


__all__ = ["SOURCES", "Replayed", "current_command", "failure_line", "missing_target", "replay_variant"]
