"""The prompt-cache advice of one target: which block of its request is static, per-input or
per-request, how long the cacheable prefix is, the ``use`` order that would make it longest, where
the planner would put the breakpoints, and what caching would cost per model profile.

Pure (no user code, no pydantic, no I/O): it reads inspector reports. ``advise`` takes a target's
``PromptReport``, the example reports of every request planned for it (its examples, and the inputs
of recorded runs), and, for the same inputs, a second evaluation each (what differs between two
evaluations of one input is per-request: a clock, a random id). The cacheable prefix is
``core.plan.cache_prefix.shared_prefix`` over those requests, the computation ``diff`` uses.

The document (``crux-devtools cache --format json``, the Cache panel)::

    {"schema": 1, "targets": [{"id", "kind", "requests", "blocks": [{"id", "part", "class", "fields",
     "tokens", "file", "line", "differs_in"}], "prefix_tokens", "suggestion", "breakpoints"}],
     "profiles": [{"target", "model", "cache_min_tokens", "input_tokens", "prefix_tokens",
     "cost_per_1000_uncached", "cost_per_1000_cached", "break_even_read_share", "ttl", "ttl_reason"}]}

``suggestion`` is None, or ``{"order", "moves": [{"id", "after"}], "prefix_tokens_after", "text"}``:
advice for a source edit; nothing is reordered.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from ..core.plan.cache_prefix import shared_prefix
from ..core.plan.cache_plan import Boundary, CachePolicy, choose
from ..core.record.pricing import price_from_profile
from .changes import MESSAGES, PROMPT, TOOLS, Counter, RequestSnapshot, default_counter, segments, snapshot_from_example, tokens_before

BlockClass = Literal["static", "per-input", "per-request"]
CLASSES: tuple[BlockClass, ...] = get_args(BlockClass)
SCHEMA = 1


@dataclass(frozen=True, slots=True)
class Planned:
    """One request planned for a target: its name (an example, or ``run:<id>``), its input, its
    example report, and the report of a second evaluation of the same input (None: not made)."""

    name: str
    input: Mapping[str, Any]
    example: Mapping[str, Any]
    again: Mapping[str, Any] | None = None


def _snapshot(prompt: Mapping[str, Any], example: Mapping[str, Any]) -> RequestSnapshot | None:
    snapshot = snapshot_from_example(prompt, example)
    return snapshot if snapshot.sent and (example.get("preview") or {}).get("sent") else None


def _block_texts(snapshot: RequestSnapshot) -> dict[str, str]:
    """Each block's text in one request: ``tools`` (every schema), and each system block's pieces."""
    out: dict[str, str] = {}
    for owner, text in segments(snapshot):
        if owner == MESSAGES:
            continue
        out[owner] = out.get(owner, "") + text
    return out


def _order(snapshots: Sequence[RequestSnapshot]) -> list[str]:
    """Blocks in request order: the first request's, and a block only later requests have at its
    place there (before the block that follows it in that request)."""
    order: list[str] = []
    for snapshot in snapshots:
        owners = [owner for owner, _text in segments(snapshot) if owner != MESSAGES]
        for index, owner in enumerate(owners):
            if owner in order:
                continue
            after = next((o for o in owners[index + 1 :] if o in order), None)
            order.insert(order.index(after) if after is not None else len(order), owner)
    return order


def _changed_fields(inputs: Sequence[Mapping[str, Any]], texts: Sequence[str]) -> list[str]:
    """The input fields that explain a block's differences: those that differ from the first input
    in exactly the requests whose block text differs from the first's; when none does, every field
    that differs in some request whose text differs."""
    def value(data: Mapping[str, Any], key: str) -> str:
        return json.dumps(data.get(key), sort_keys=True, default=str)

    keys = sorted(set().union(*(set(i) for i in inputs)))
    differs = [texts[i] != texts[0] for i in range(len(texts))]
    moved = {k: [value(inputs[i], k) != value(inputs[0], k) for i in range(len(inputs))] for k in keys}
    exact = [k for k in keys if moved[k] == differs]
    return exact or [k for k in keys if any(m and d for m, d in zip(moved[k], differs, strict=True))]


def advise(prompt: Mapping[str, Any], planned: Sequence[Planned], *, profiles: Mapping[str, Mapping[str, Any]] | None = None,
           run_starts: Sequence[float] = (), counter: Counter | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The advice of one target (see the module docstring): its document and its profiles' economics."""
    counter = counter or default_counter()
    pairs = [(p, _snapshot(prompt, p.example), _snapshot(prompt, p.again) if p.again is not None else None) for p in planned]
    usable = [(p, s, a) for p, s, a in pairs if s is not None]
    snapshots = [s for _p, s, _a in usable]
    target: dict[str, Any] = {"id": prompt["id"], "kind": prompt.get("kind", "prompt"), "requests": len(snapshots), "blocks": [],
                              "prefix_tokens": 0, "suggestion": None, "breakpoints": []}
    if not snapshots:
        return target, []
    where = {str(c["id"]): c for c in prompt.get("contexts") or ()}
    texts = [_block_texts(s) for s in snapshots]
    again = [(_block_texts(a) if a is not None else None) for _p, _s, a in usable]
    inputs = [p.input for p, _s, _a in usable]
    # the tools cost what the planner counts (its compact JSON schemas), so every figure agrees with the plan's
    first_pieces = segments(snapshots[0])
    planned_tool_tokens = tokens_before(snapshots[0], first_pieces, sum(len(t) for o, t in first_pieces if o == TOOLS), counter)
    blocks: list[dict[str, Any]] = []
    for block in _order(snapshots):
        seen = [t.get(block, "") for t in texts]
        twice = any(a is not None and a.get(block, "") != t.get(block, "") for t, a in zip(texts, again, strict=True))
        differs = sum(1 for text in seen[1:] if text != seen[0])
        kind: BlockClass = "per-request" if twice else "per-input" if differs else "static"
        entry = where.get(block)
        declared = list(entry.get("fields") or ()) if entry else []
        changed = _changed_fields(inputs, seen) if kind == "per-input" else []
        fields = [f for f in declared if f in changed] or changed if kind == "per-input" else []
        file, line = (entry.get("file"), entry.get("line")) if entry else (prompt.get("file"), prompt.get("line"))
        first = next((text for text in seen if text), "")
        tokens = planned_tool_tokens if block == TOOLS else counter.count(first)
        blocks.append({
            "id": block, "part": "tools" if block == TOOLS else "system", "class": kind, "fields": fields,
            "tokens": tokens, "file": file, "line": line, "differs_in": differs,
        })
    _attribute_tools(blocks, snapshots, prompt)
    # the cacheable prefix: what every request (each evaluated twice) shares, in whole blocks
    requests = [[piece for piece in segments(s) if piece[0] != MESSAGES] for s in snapshots]
    requests += [[piece for piece in segments(a) if piece[0] != MESSAGES] for _p, _s, a in usable if a is not None]
    shared = shared_prefix(requests)
    prefix = tokens_before(snapshots[0], requests[0], shared.block_chars, counter)
    target.update(blocks=blocks, prefix_tokens=prefix, suggestion=_suggestion(blocks, prefix, counter, texts[0]))
    for b in blocks:  # what only the suggestion's sentence needed
        b.pop("by", None)
        b.pop("varying", None)
    policy = _policy_of(prompt, profiles or {})
    target["breakpoints"] = _breakpoints(blocks, texts[0], policy, counter, planned_tool_tokens)
    economics = _economics(prompt, snapshots, prefix, profiles or {}, run_starts)
    return target, economics


def _attribute_tools(blocks: list[dict[str, Any]], snapshots: Sequence[RequestSnapshot], prompt: Mapping[str, Any]) -> None:
    """A tools block that is not static is defined where the tools that come and go are: the
    context that brings them (its ``file``/``line``, and ``"by"``: its id)."""
    tools = next((b for b in blocks if b["id"] == TOOLS), None)
    if tools is None or tools["class"] == "static":
        return
    names = [[str(t.get("name")) for t in s.tools] for s in snapshots]
    everywhere = set.intersection(*(set(n) for n in names))
    varying = sorted(set().union(*(set(n) for n in names)) - everywhere)
    for entry in prompt.get("contexts") or ():
        if set(entry.get("tools") or ()) & set(varying):
            tools.update(file=entry.get("file"), line=entry.get("line"), by=str(entry["id"]), varying=varying)
            return
    tools.update(varying=varying)


def _suggestion(blocks: Sequence[Mapping[str, Any]], prefix: int, counter: Counter, first: Mapping[str, str]) -> dict[str, Any] | None:
    """The ``use`` order that puts the static system blocks first, when a non-static block sits before one."""
    system = [b for b in blocks if b["part"] == "system"]
    leading = [b for b in blocks if b["part"] == "tools"]
    if leading and leading[0]["class"] != "static":
        tools = leading[0]
        varying = ", ".join(tools.get("varying") or ()) or "their order"
        by = f" ({varying}, brought by {tools['by']}, {tools['file']}:{tools['line']})" if tools.get("by") else f" ({varying})"
        return {"order": [b["id"] for b in system], "moves": [], "prefix_tokens_after": 0,
                "text": f"the tools differ between requests{by}: they come first, so the cacheable prefix stops there; offer the same tools, "
                        "in the same order, in every request (declare them on the prompt, not on a context that comes and goes)"}
    movable = [b for b in system if b["id"] != PROMPT]
    own = [b for b in system if b["id"] == PROMPT]
    if own and own[0]["class"] != "static":
        return {"order": [b["id"] for b in system], "moves": [], "prefix_tokens_after": prefix,
                "text": f"the prompt's own text is {own[0]['class']} and always comes first: move what varies in it into a context placed after the static ones"}
    rank = {name: index for index, name in enumerate(CLASSES)}
    order = own + sorted(movable, key=lambda b: rank[b["class"]])  # sorted() is stable: use order within a class
    if [b["id"] for b in order] == [b["id"] for b in system]:
        return None
    statics = [b for b in order if b["class"] == "static"]
    if not statics or not any(b["class"] != "static" for b in system[: system.index(statics[-1]) + 1]):
        return None
    last_static = statics[-1]["id"]
    moves = [{"id": b["id"], "after": last_static} for b in system[: system.index(statics[-1])] if b["class"] != "static"]
    kept = "".join(first.get(b["id"], "") for b in statics)
    after = sum(b["tokens"] for b in leading) + counter.count(kept)
    first_move = next(b for b in system if b["id"] == moves[0]["id"])
    anchor = statics[-1]
    where = lambda b: f"{b['file']}:{b['line']}" if b.get("file") else "where it is defined is unknown"  # noqa: E731
    text = (f"move {first_move['id']} ({first_move['class']}, {first_move['tokens']:,} tokens, {where(first_move)}) after {anchor['id']} "
            f"(static, {anchor['tokens']:,} tokens): cacheable {prefix:,} -> {after:,} tokens")
    if len(moves) > 1:
        text += f" (with {', '.join(m['id'] for m in moves[1:])} moved too)"
    return {"order": [b["id"] for b in order], "moves": moves, "prefix_tokens_after": after, "text": text}


def _policy_of(prompt: Mapping[str, Any], profiles: Mapping[str, Mapping[str, Any]]) -> CachePolicy:
    model = (prompt.get("plan_model") or {}).get("name")
    profile = profiles.get(model) if isinstance(model, str) else None
    minimum = (profile or {}).get("cache_min_tokens")
    return CachePolicy("auto", minimum, (profile or {}).get("cache_ttl", "5m"), (profile or {}).get("cache_breakpoints", True))


def _breakpoints(blocks: Sequence[Mapping[str, Any]], first: Mapping[str, str], policy: CachePolicy, counter: Counter,
                 tool_tokens: int) -> list[dict[str, Any]]:
    """Where ``cache = "auto"`` puts the breakpoints for the first request, from the classes found."""
    candidates: list[Boundary] = []
    tools = first.get(TOOLS, "")
    if tools and blocks and blocks[0]["class"] == "static":
        candidates.append(Boundary("tools", 0, tool_tokens, "the tools"))
    system = [b for b in blocks if b["part"] == "system"]
    text = ""
    static_end = per_input_end = 0
    static_run = fixed_run = True  # still in the leading static / not-per-request blocks
    for b in system:
        text += first.get(b["id"], "")
        static_run = static_run and b["class"] == "static"
        fixed_run = fixed_run and b["class"] != "per-request"
        if static_run:
            static_end = len(text)
        if fixed_run:
            per_input_end = len(text)
    if static_end:
        candidates.append(Boundary("system", static_end, tool_tokens + counter.count(text[:static_end]), "the static prefix"))
    if per_input_end > static_end:
        candidates.append(Boundary("system", per_input_end, tool_tokens + counter.count(text[:per_input_end]), "the per-input prefix"))
    kept, _warnings = choose(candidates, policy)
    if not policy.breakpoints:
        kept = []
    return [{"after": b.after, "offset": b.offset, "tokens": b.tokens, "ttl": policy.ttl} for b in kept]


def ttl_suggestion(run_starts: Sequence[float]) -> tuple[str | None, str]:
    """``"5m"``, ``"1h"`` or ``"none"`` from the gaps between recorded runs (seconds since the epoch),
    with the reason; None when fewer than two runs were recorded."""
    starts = sorted(run_starts)
    if len(starts) < 2:
        return None, "fewer than two recorded runs: no gaps to judge the lifetime by"
    gap = statistics.median(b - a for a, b in zip(starts, starts[1:]))
    text = f"median gap between runs {gap:,.0f} s"
    if gap < 300:
        return "5m", text + ", under 5 minutes: the 5-minute lifetime is renewed by the traffic"
    if gap < 3600:
        return "1h", text + ", over 5 minutes and under an hour: 5-minute entries would expire between calls"
    return "none", text + ", over an hour: every call would write again; caching would cost more than it saves"


def _economics(prompt: Mapping[str, Any], snapshots: Sequence[RequestSnapshot], prefix: int,
               profiles: Mapping[str, Mapping[str, Any]], run_starts: Sequence[float]) -> list[dict[str, Any]]:
    """Per model profile: the minimum, cost per 1,000 calls cached and uncached, the break-even share of reads."""
    tokens = [s.input_tokens for s in snapshots if isinstance(s.input_tokens, int)]
    average = round(sum(tokens) / len(tokens)) if tokens else 0
    ttl, why = ttl_suggestion(run_starts)
    out = []
    for name, profile in sorted(profiles.items()):
        minimum = profile.get("cache_min_tokens")
        price = price_from_profile(profile, name)
        row: dict[str, Any] = {"target": prompt["id"], "model": name, "cache_min_tokens": minimum, "input_tokens": average, "prefix_tokens": prefix,
                               "cost_per_1000_uncached": None, "cost_per_1000_cached": None, "break_even_read_share": None,
                               "ttl": ttl, "ttl_reason": why}
        if price is not None:
            row["cost_per_1000_uncached"] = round(1000 * average * price.input / 1e6, 6)
            write = price.cache_write_1h if profile.get("cache_ttl") == "1h" else price.cache_write
            cacheable = prefix if minimum is None or prefix >= minimum else 0
            if price.cache_read is not None and write is not None:
                rest = average - cacheable
                cached = (cacheable * write + 999 * cacheable * price.cache_read + 1000 * rest * price.input) / 1e6
                row["cost_per_1000_cached"] = round(cached, 6)
                row["break_even_read_share"] = 0.0 if write <= price.input else round((write - price.input) / (write - price.cache_read), 4)
        out.append(row)
    return out


def document(targets: Sequence[dict[str, Any]], profiles: Sequence[dict[str, Any]]) -> dict[str, Any]:
    return {"schema": SCHEMA, "targets": list(targets), "profiles": list(profiles)}


__all__ = ["CLASSES", "Planned", "SCHEMA", "advise", "document", "ttl_suggestion"]
