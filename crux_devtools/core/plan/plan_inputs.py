"""What each recorded step's plan was made from, kept so the step can be planned again without the source.

While runs are recorded, every step keeps its *plan inputs*: the text of each block of the system
text in order (the prompt's own text, each plain context's block, each ladder contributor's slot),
every ladder contributor with its rungs (the text of each rung the ladder authorises, whether it was
available and why not), the tools offered and who owns them, the active contexts (so a replay can
leave one out with its tools), the capacity profile, the merged input budget, ``max_tokens``, the
counter, the offload namespace, and the step's epoch state (the rung ceilings, whether the
``read_offload`` tool was already required). The messages are the step's own recorded request:
the state says how many came from the caller, whether the user prompt follows, and how many are
this run's tool traffic.

Shape (in the run dict handed to ``redact``, under ``"plan_inputs"``)::

    {"texts": {hash: text}, "steps": [{"index": K, "frame": {...}, "state": {...}}]}

Every text (blocks, rungs, tool schemas as JSON) is referred to by its hash, and the store keeps
each distinct text once (``RunStore`` writes them to a content-addressed ``blobs`` table; the frame
itself is stored as a blob too, so the steps of a run, and runs of the same prompt and input, share
it). ``replay.py`` reads them back.
"""

from __future__ import annotations

import functools
import hashlib
import json
from typing import Any

from .planner import Contributor, Plan, Planner, _top_ladder
from .requests import Setup
from ..tokens import TiktokenCounter

FORMAT = 1


def text_hash(text: str) -> str:
    """The content address of a text (hex, 32 characters)."""
    h = _recent.get(text)
    if h is None:
        if len(_recent) >= 4096:
            _recent.clear()
        h = _recent[text] = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return h


_recent: dict[str, str] = {}  # the texts of the last runs (a prompt's blocks recur run after run)


def tool_text(t: Any) -> str:
    """A tool's JSON schema (``Tool.json_schema()``) as the text the store keeps; made once per tool kind."""
    parameters = getattr(t, "parameters", None)
    if isinstance(parameters, type):
        return _tool_text(t.name, t.description, parameters)
    return json.dumps(t.json_schema(), ensure_ascii=False)


@functools.lru_cache(maxsize=1024)
def _tool_text(name: str, description: str, parameters: type) -> str:
    from ..tools import _cached_schema

    return f'{{"type":"function","function":{{"name":{json.dumps(name)},"description":{json.dumps(description)},"parameters":{_cached_schema(parameters)}}}}}'  # type: ignore[arg-type]


class PlanInputs:
    """The plan inputs of one run's steps, gathered while it runs and built into data at the end."""

    __slots__ = ("pending", "texts", "_hashes")

    def __init__(self) -> None:
        self.pending: list[tuple[int, Planner, Setup]] = []
        self.texts: dict[str, str] = {}
        self._hashes: dict[str, str] = {}

    def add(self, index: int, plan: Plan, s: Setup) -> None:
        """Keep what step ``index`` was planned from (cheap: references; the data is built by ``build``)."""
        if plan.planner is not None:
            self.pending.append((index, plan.planner, s))

    def ref(self, text: str) -> str:
        h = self._hashes.get(text)
        if h is None:
            h = self._hashes[text] = text_hash(text)
            self.texts[h] = text
        return h

    def build(self) -> dict[str, Any] | None:
        if not self.pending:
            return None
        steps = []
        previous: tuple[Any, dict[str, Any]] | None = None
        for index, planner, s in self.pending:
            # Within a run every step plans from the same gathered texts: when the rungs on offer are
            # the same too, so is every text, and the frame is the previous step's (the same object:
            # the store serialises a run's repeated frame once).
            key = _signature(planner, s)
            frame = previous[1] if previous is not None and previous[0] == key else self._frame(planner, s)
            steps.append({"index": index, "frame": frame, "state": _state(planner)})
            previous = (key, frame)
        return {"format": FORMAT, "texts": self.texts, "steps": steps}

    # -- one step -----------------------------------------------------------------------------
    def _frame(self, planner: Planner, s: Setup) -> dict[str, Any]:
        ref = self.ref
        o, walked, prompt = planner.o, planner.g.walked, planner.g.prompt
        order_of = {id(c): i for i, c in enumerate(planner.contributors)}
        active = [n for n in walked.nodes if n.status == "active"]
        plain = iter([n.id for n in active if _top_ladder(n) is None and n.text])  # the plain blocks, in slot order
        slots: list[dict[str, Any]] = []
        for slot in planner.slots:
            if isinstance(slot, Contributor):
                slots.append({"contributor": order_of[id(slot)]})
            elif slot is walked.own_text and not slots:
                slots.append({"text": ref(slot), "context": "<prompt>"})
            else:
                slots.append({"text": ref(slot), "context": next(plain)})
        tools: dict[str, str] = {}

        def tool_ref(t: Any) -> str:
            tools[t.name] = ref(tool_text(t))
            return t.name

        contributors = [
            {
                "id": c.id,
                "priority": c.priority,
                "full": ref(c.full_text),
                "sources": [src.id for src in c.shape.sources],
                "on_miss": c.shape.summary.on_miss if c.shape.summary is not None else None,
                "tools": [tool_ref(t) for t in c.tools],
                "rungs": [_rung(r, ref) for r in c.rungs],
            }
            for c in planner.contributors
        ]
        fixed = [tool_ref(t) for t in planner._fixed_tools]
        support = tool_text(planner._support_tool())
        limits, budget = s.limits, s.budget
        return {
            "model": _model_name(s.model),
            "profile": {
                "context_window": limits.context_window,
                "default_output_reserve": limits.output_reserve if s.max_tokens is None else None,
                "counting_confidence": limits.counting_confidence,
            },
            "capacity_source": s.capacity_source,
            "budget": None if budget is None else {"optimize_at": budget.optimize_at, "max": budget.max},
            "max_tokens": s.max_tokens,
            "limits": limits.to_dict(),
            "counter": _counter(s.counter),
            "measurement": s.measurement,
            "namespace": o.namespace,
            "slots": slots,
            "contributors": contributors,
            "fixed_tools": fixed,
            "tools": tools,
            "support_tool": ref(support),
            "active_tools": o.active_tools,
            "prompt_tools": [t.name for t in prompt.tools],
            "contexts": [{"id": n.id, "owners": _owners(n), "tools": [t.name for t in n.context.tools], "ladder": _ladder_id(n, planner)} for n in active],
            "token_budget": s.token_budget,
            "dropped": [d.to_dict() for d in planner.g.dropped],
            # only with a cache placement, so a step planned without one keeps its frame as it was
            **({"cache": {"policy": s.cache.to_dict(), "static": sorted(planner.static_ids())}} if s.cache is not None else {}),
        }


def _signature(planner: Planner, s: Setup) -> tuple[Any, ...]:
    """What decides a step's frame besides the run's gathered texts (which are the same objects all run)."""
    return (
        id(planner.g), id(s), planner.o.namespace, tuple(t.name for t in planner._fixed_tools),
        tuple((c.id, c.priority, tuple(t.name for t in c.tools), tuple((r.name, r.reason == "over-limit" or r.available, r.variant, r.cost is None) for r in c.rungs))
              for c in planner.contributors),
    )


def _ladder_id(node: Any, planner: Planner) -> str | None:
    ladder = _top_ladder(node)
    if ladder is None:
        return None
    sh = planner.g.shapes.get(id(ladder))
    return sh.id if sh is not None else None


def _owners(node: Any) -> list[str]:
    out: list[str] = []
    owner = node.owner
    while owner is not None:
        out.append(owner.id)
        owner = owner.owner
    return out


def _rung(rung: Any, ref: Any) -> dict[str, Any]:
    available, reason, detail = rung.available, rung.reason, rung.detail
    if reason == "over-limit":  # only the epoch's ceiling marks a rung so while building: undo it, the state keeps the ceilings
        available, reason, detail = True, None, None
    return {
        "name": rung.name,
        "text": None if rung.text is None else ref(rung.text),
        "available": available,
        "reason": reason,
        "detail": detail,
        "variant": rung.variant,
        "priced": rung.cost is not None,
    }


def _state(planner: Planner) -> dict[str, Any]:
    o = planner.o
    return {
        "ceilings": dict(o.ceilings),
        "epoch": o.epoch,
        "support_required": o.support_required,
        "history": len(o.messages),
        "prompt": bool(planner.g.walked.prompt_text),
        "turn": len(o.turn),
    }


def _counter(counter: Any) -> dict[str, Any]:
    if isinstance(counter, TiktokenCounter):
        return {"encoding": counter.encoding_name}
    return {"custom": type(counter).__name__}


def _model_name(model: Any) -> str | None:
    from .budget import model_name_of

    return model_name_of(model)


__all__ = ["FORMAT", "PlanInputs", "text_hash", "tool_text"]
