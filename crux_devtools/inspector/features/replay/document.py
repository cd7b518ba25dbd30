"""A replayed step as the front ends show it: the replayed request, its changes against the recorded one.

``replay_document`` turns a ``core.record.replay.ReplayedStep`` into one JSON document (the CLI's ``--json``,
the web panel and the TUI read the same): ``run``, ``step``, ``source``, ``overrides``, ``identical``,
``recorded`` (``input_tokens``, ``sent``), ``replayed`` (``input_tokens``, ``sent``, ``status``,
``adaptations``, and the plan's limits, warnings and diagnostics), ``changes`` and ``cache_prefix``.
The changes come from the review's change engine (``review.changes.compare``) with the recorded
request as base and the replayed one as head, so ``replay`` and ``diff`` speak one vocabulary.
``render_replay`` prints a document for a terminal.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from ....core.record.pricing import cache_usage_text
from ....review.changes import RequestSnapshot, compare, snapshot_from_request
from ....review.render import describe, prefix_line
from ..text.sent import sent_lines


def _snapshot(sent: Mapping[str, Any] | None, contributions: Iterable[Mapping[str, Any]], *, input_tokens: int | None, status: str,
              left_out: Iterable[str] = (), where: Mapping[str, tuple[str | None, int | None]] | None = None) -> RequestSnapshot:
    """The change engine's snapshot of a planned request, ladder contributors included: each one's
    rung, and (unless omitted) its place among the contexts in the request."""
    contributions = list(contributions)
    snapshot = snapshot_from_request(sent, contributions, input_tokens=input_tokens, status=status, where=where)
    rungs = dict(snapshot.rungs)
    contexts_in = list(snapshot.contexts_in)
    out = dict(snapshot.out)
    for c in contributions:
        if c.get("kind") != "ladder":
            continue
        name = str(c.get("contributor"))
        rungs[name] = str(c.get("representation"))
        if c.get("representation") == "omitted":
            out[name] = "budget"
        elif name not in contexts_in:
            contexts_in.append(name)
    for name in left_out:
        out[name] = "removed"
    return dataclasses.replace(snapshot, rungs=rungs, contexts_in=tuple(contexts_in), out=out)


def replay_document(replayed: Any, run: Mapping[str, Any] | None = None, where: Mapping[str, tuple[str | None, int | None]] | None = None) -> dict[str, Any]:
    """The JSON document of a replay (see the module docstring). ``replayed``: a ``ReplayedStep``;
    ``where``: where each context is defined (``--source current``), so a text change names its line."""
    r = replayed.to_dict()
    step = next((s for s in (run or {}).get("steps") or [] if isinstance(s, dict) and s.get("index") == r["step"]), {})
    request = step.get("request") or {}
    own = ((run or {}).get("file"), (run or {}).get("line"))
    where = {"prompt": own, "messages": own, **(where or {})}
    base = _snapshot(r["recorded_sent"], request.get("contributions") or [], input_tokens=r["recorded_tokens"], status="fits", where=where)
    head = _snapshot(r["sent"], r["contributions"], input_tokens=r["input_tokens"], status=r["status"], left_out=r["left_out"], where=where)
    changes, cache_prefix = compare(base, head)
    if r["sent"] is None:  # nothing would be sent: no context "left the request", the status says it all
        changes = [c for c in changes if c["kind"] == "status"]
    return {
        "run": r["run"],
        "step": r["step"],
        "source": r["source"],
        "overrides": r["overrides"],
        "identical": r["identical"],
        "recorded": {"input_tokens": r["recorded_tokens"], "sent": r["recorded_sent"], "usage": step.get("usage")},
        "replayed": {
            "input_tokens": r["input_tokens"], "sent": r["sent"], "status": r["status"], "adaptations": r["adaptations"],
            "model": r["model"], "max_input_tokens": r["max_input_tokens"], "optimize_at": r["optimize_at"], "output_reserve": r["output_reserve"], "new_epoch": r["new_epoch"],
            "contributions": r["contributions"], "candidates": r["candidates"], "warnings": r["warnings"],
            "error_code": r["error_code"], "diagnostics": r["diagnostics"], "left_out": r["left_out"],
        },
        "changes": changes,
        "cache_prefix": cache_prefix,
    }


def receipt_of(document: Mapping[str, Any]) -> dict[str, Any]:
    """The receipt of a replayed request sent as a child run's one step: what the replayed plan decided."""
    replayed = document["replayed"]
    return {
        "input_tokens": replayed["input_tokens"], "max_input_tokens": replayed["max_input_tokens"], "optimize_at": replayed["optimize_at"],
        "adaptations": replayed["adaptations"], "candidates": replayed["candidates"], "contributions": replayed["contributions"],
        "warnings": replayed["warnings"], "measurement": "exact", "epoch": None, "previous_request_id": None,
    }


def send_request(document: Mapping[str, Any], run: Mapping[str, Any]) -> dict[str, Any]:
    """What the worker's ``replay_send`` takes to send a replayed request (without ``confirmed``)."""
    return {"sent": document["replayed"]["sent"], "run": document["run"], "step": document["step"], "input": run.get("input"), "receipt": receipt_of(document)}


def split_messages(step: Mapping[str, Any], state: Mapping[str, Any] | None) -> dict[str, Any]:
    """A recorded step's messages as a plan takes them: ``{"history", "turn", "support_required"}``,
    the caller's messages before the user prompt, this run's tool traffic after it (tool calls and
    results), and whether an offloaded result had made ``read_offload`` part of the request.

    ``state`` is the step's plan-input state; without it (a run recorded before plan inputs were
    kept) the messages are split at the last user message (the traffic after the prompt is only
    assistant and tool messages) and ``read_offload`` among the sent tools stands for the flag."""
    sent = step.get("sent") or {}
    messages = [m for m in sent.get("messages") or [] if isinstance(m, Mapping)]
    if state is not None and isinstance(state.get("history"), int):
        start = state["history"] + (1 if state.get("prompt") else 0)
        return {"history": messages[: state["history"]], "turn": messages[start:], "support_required": bool(state.get("support_required"))}
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=None)
    history, turn = (messages, []) if last_user is None else (messages[:last_user], messages[last_user + 1 :])
    return {"history": history, "turn": turn, "support_required": any(isinstance(t, Mapping) and t.get("name") == "read_offload" for t in sent.get("tools") or [])}


def step_messages(store: Any, run: Mapping[str, Any] | None, index: int) -> dict[str, Any] | None:
    """``split_messages`` of recorded step ``index`` of ``run`` (its plan inputs read from ``store``,
    when given), so the prompt view shows the request as that step sent it; ``None`` for no such step."""
    from ....core.errors import DamagedRunError
    from ....core.record.runstore import read_step_plan

    step = next((s for s in (run or {}).get("steps") or [] if isinstance(s, Mapping) and s.get("index") == index), None)
    if run is None or step is None:
        return None
    try:
        kept = read_step_plan(store, str(run.get("id")), index) if store is not None else None
    except DamagedRunError:
        kept = None  # the messages are split from the request as sent; replaying the step says what is damaged
    return split_messages(step, kept["state"] if kept else None)


def write_child_run(root: Any, run: dict[str, Any]) -> None:
    """Write a run a replay made (a send's answer) to the project's store (raises ``RunStoreError``)."""
    from ....core.record.runstore import RunStore

    store = RunStore.for_project(root)
    try:
        store.write(run)
    finally:
        store.close()


def overrides_text(overrides: Mapping[str, Any]) -> str:
    """``max=1500, rung sync-log=offload, drop examples`` (``none`` for a plain replay): every override
    of ``Overrides.to_dict()`` in its order, a value as ``key=value``, an object's entries as ``key c=r``
    (``rungs``: ``rung``), a list's items as ``key item``."""
    words: list[str] = []
    for key, value in overrides.items():
        if isinstance(value, Mapping):
            words += [f"{key.removesuffix('s')} {c}={r}" for c, r in value.items()]
        elif isinstance(value, list | tuple):
            words += [f"{key.replace('_', '-')} {item}" for item in value]
        elif value is not None:
            words.append(f"{key.replace('_', '-')}={value}")
    return ", ".join(words) or "none"


def render_replay(document: Mapping[str, Any], *, brief: bool = False, request: bool = True) -> str:
    """A replay for a terminal: what was replayed, the verdict, the changes, the cache prefix, the request."""
    replayed, recorded = document["replayed"], document["recorded"]
    lines = [
        f"run {document['run']} step {document['step']} replayed from the {document['source']} source; overrides: {overrides_text(document['overrides'])}",
        f"  recorded: {recorded['input_tokens']} input tokens; replayed: {replayed['input_tokens']} input tokens "
        f"({replayed['status']}, max {replayed['max_input_tokens']}, optimize_at {replayed['optimize_at']}"
        + (", a new epoch" if replayed.get("new_epoch") else "") + ")",
    ]
    if document["identical"]:
        lines.append("  identical to the recorded request")
    else:
        lines.append("  changes against the recorded request:" if document["changes"] else "  the request differs from the recorded one")
        lines.extend(f"    {describe(change)}" for change in document["changes"])
    prefix = document.get("cache_prefix")
    line = prefix_line(prefix)
    if line is not None:
        lines.append(f"  {line}")
    elif prefix:
        lines.append("  cacheable prefix: the whole request is unchanged")
    if cache := cache_usage_text(recorded.get("usage")):
        lines.append(f"  recorded provider usage: {cache}")
    for a in replayed["adaptations"]:
        variant = f" ({a['variant']})" if a.get("variant") else ""
        lines.append(f"  adapted {a['contributor']} -> {a['representation']}{variant}: {a['full_tokens']} -> {a['selected_tokens']} tokens")
    for warning in replayed["warnings"]:
        lines.append(f"  warning: {warning}")
    if replayed["status"] != "fits":
        lines.append(f"  {replayed['error_code']}: nothing fits max_input_tokens={replayed['max_input_tokens']}")
        lines.extend(f"    {d['contributor']}: {d['message']}" for d in replayed["diagnostics"])
    elif request:
        lines.append("  replayed request:")
        preview = {"sent": replayed["sent"], "contributions": replayed["contributions"], "output_reserve": replayed["output_reserve"]}
        lines.extend(sent_lines(preview, brief))
    return "\n".join(lines)


__all__ = ["overrides_text", "receipt_of", "render_replay", "replay_document", "send_request"]
