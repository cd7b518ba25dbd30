"""The request planner: choose a rung for every ladder contributor so that the request fits.

This module is the ``Planner`` and its types only (it imports neither the runtime nor agents):
``requests.py`` sets a request up and previews it, ``runtime.py`` runs it.

Contributors. Every top-level ladder reached through ``use`` (also inside contexts) is one ladder
contributor, with rungs in fidelity order full -> authored (each ``prefer`` alternative) -> summary
-> offload -> omitted, only those its ladder authorises. Everything else (the prompt's own text,
plain contexts, the user prompt, messages, tool schemas) is fixed and required.

Cost model. The system text is the blocks joined by ``"\\n\\n"``; a block costs
``count(block + "\\n\\n")`` (exactly additive under tiktoken's pre-tokenizer for blocks that start
with a non-space character; at most one token high for the last block). A rung's cost also includes
the schemas of the tools only that contributor owns, because omission removes them. Messages cost
the tokens of their compact JSON, tools the tokens of their compact JSON schema. Every distinct
text is counted once (the counter caches by content).

Selection (linear in contributors x rungs). Contributors are sorted by (priority desc, use order).
For each, in that order, pick the highest available rung such that ``used + cost + LB(rest)``
fits, where ``LB(rest)`` is the sum of the cheapest legal rung of every later contributor (a running
suffix sum). This yields the lexicographically best fidelity vector: by induction, when contributor
``i`` is decided, the chosen rung is the highest one that still admits *some* completion (the
cheapest one), so no candidate with a higher rung for ``i`` and the same choices before it fits;
later contributors cannot change an earlier decision. The pass runs against ``optimize_at`` and,
if even the cheapest candidate is over it, against ``max`` (two tiers). The chosen request is then
counted exactly once; if the estimate was low (a block starting with whitespace, the shared
``read_offload`` schema) contributors are degraded further in reverse lexicographic order (lowest
priority first, one rung at a time) until the exact count fits.

Epochs. ``ceilings`` maps a contributor id to the lowest rung index it was sent at in the current
epoch; higher rungs are rejected (reason ``"over-limit"``, detail naming the epoch), so fidelity
never rises within an epoch. The runtime keeps ceilings per (model, effective budget).

``preview`` never prepares artifacts: an unprepared summary is a candidate with
``rejection_reason="unprepared"``. The offload rung needs no model, so ``preview`` may select it
(its handle is derived without writing; ``generate`` writes the value before dispatch).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from .budget import Limits, model_name_of
from .cache_plan import CachePolicy, SystemBlock, place_breakpoints
from ..compose.callbacks import Call, Resolution, expect_text
from ..compose.entries import Ladder
from ..errors import Diagnostic
from .ladders import Shape, shape
from .offload_store import READ_OFFLOAD, OffloadStore, make_handle, read_offload_tool, reference_text
from ..compose.prompts import Prompt
from .receipts import Adaptation, Candidate, Contribution
from ..compose.resolve import SEPARATOR, Node, Walk, apply_token_budget, tools_of, walk
from ..compose.results import Drop
from .rungs import RUNG_RANK, RejectionReason, RungName
from .summaries import SummaryStore, artifact_key
from ..tokens import TokenCounter, count_joined, count_with_separator
from ..tools import Tool

SUMMARY_RUNG = RUNG_RANK["summary"]


# --- gathering: resolve the prompt and every authored alternative --------------------------------


@dataclass(slots=True)
class Gathered:
    prompt: Prompt
    input: BaseModel
    walked: Walk
    alt_texts: dict[int, str]
    shapes: dict[int, Shape] = field(default_factory=dict)  # id(ladder) -> its layers
    dropped: list[Drop] = field(default_factory=list)  # contexts the token budget dropped
    budget_warning: str | None = None  # the system text is over the token budget even after drops

    def apply_budget(self, token_budget: int | None, counter: TokenCounter) -> Gathered:
        """Drop contexts by priority to fit ``token_budget`` before any ladder is planned."""
        if token_budget is not None:
            self.dropped, tokens = apply_token_budget(self.walked, token_budget, counter)
            if tokens > token_budget:
                self.budget_warning = (
                    f"the system text is {tokens} tokens, over token_budget={token_budget} even after dropping "
                    "every context it may drop (the prompt's own text is never dropped)"
                )
        return self


def _top_ladder(node: Node) -> Ladder | None:
    top = None
    current: Node | None = node
    while current is not None:
        if current.ladder is not None:
            top = current.ladder
        current = current.owner
    return top


def gather(prompt: Prompt, input: BaseModel) -> Resolution[Gathered]:
    """Resolve the prompt (callbacks once each) and the text of every active ``prefer`` alternative."""
    walked = yield from walk(prompt, input)
    alt_texts: dict[int, str] = {}
    shapes: dict[int, Shape] = {}
    for node in walked.nodes:
        ladder = _top_ladder(node) if node.status == "active" else None
        if ladder is None or id(ladder) in shapes:
            continue
        shapes[id(ladder)] = sh = shape(ladder)
        prefer = sh.prefer
        for alt in prefer.alternatives if prefer is not None else ():
            if callable(alt.system):
                alt_texts[id(alt)] = expect_text(alt.id, "system", (yield Call(alt.id, "system", alt.system, input)))
            else:
                alt_texts[id(alt)] = alt.system or ""
    return Gathered(prompt=prompt, input=input, walked=walked, alt_texts=alt_texts, shapes=shapes)


# --- contributors and rungs ----------------------------------------------------------------------


@dataclass(slots=True)
class Rung:
    name: RungName
    text: str | None
    cost: int | None
    available: bool
    reason: RejectionReason | None = None
    detail: str | None = None
    variant: str | None = None
    block_tokens: int = 0


@dataclass(slots=True, eq=False)
class Contributor:
    id: str
    shape: Shape
    priority: int
    order: int
    full_text: str
    tools: list[Tool]
    rungs: list[Rung] = field(default_factory=list)
    summary_key: str | None = None
    offload_key: str = ""


@dataclass(slots=True)
class PlanOptions:
    model: Any
    limits: Limits
    counter: TokenCounter
    measurement: str
    messages: list[dict[str, Any]]  # the caller's history, sent before the user prompt
    active_tools: list[str] | None
    summary_store: SummaryStore
    offload_store: OffloadStore
    namespace: str
    ceilings: dict[str, int] = field(default_factory=dict)
    epoch: int = 1
    support_required: bool = False
    extra_tools: list[Tool] = field(default_factory=list)
    turn: list[dict[str, Any]] = field(default_factory=list)  # assistant/tool messages after the user prompt
    cache: CachePolicy | None = None  # place prompt-cache breakpoints (``cache_plan.py``); None: none


@dataclass(slots=True)
class Plan:
    """The outcome of planning one request (internal; results are built from it)."""

    fits: bool
    tier: str | None
    system: str
    messages: list[dict[str, Any]]
    tools: list[Tool]
    input_tokens: int
    contributors: list[Contributor]
    choice: list[int]
    candidates: list[Candidate]
    adaptations: list[Adaptation]
    contributions: list[Contribution]
    warnings: list[str]
    diagnostics: list[Diagnostic]
    error_code: str | None
    offloads: list[tuple[str, str, str]]  # (contributor id, store key, exact text)
    missing_summaries: list[Contributor]
    tool_tokens: dict[str, int] = field(default_factory=dict)
    planner: Planner | None = None  # what it was planned from (its slots and tools), for a recording
    cache: dict[str, Any] | None = None  # the cache placement (``ModelRequest.cache``) when asked for


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True, default=str)


def tool_tokens(counter: TokenCounter, t: Tool) -> int:
    return counter.count(_json(t.json_schema()))


def message_tokens(counter: TokenCounter, message: dict[str, Any]) -> int:
    return counter.count(_json(message))


class Planner:
    """Plans one request from gathered text; pure and synchronous (no model calls, no writes)."""

    def __init__(self, gathered: Gathered, options: PlanOptions) -> None:
        self.g = gathered
        self.o = options
        self.counter = options.counter
        self.slots: list[str | Contributor] = []
        self.contributors: list[Contributor] = []
        self._offered: dict[str, tuple[Tool, str]] = {}
        self._fixed_tools: list[Tool] = []
        self._build()

    # -- building ------------------------------------------------------------------------------
    def _build(self) -> None:
        walked, prompt = self.g.walked, self.g.prompt
        if walked.own_text:
            self.slots.append(walked.own_text)
        by_ladder: dict[int, Contributor] = {}
        texts: dict[int, list[str]] = {}
        owner_of_tool: dict[str, set[Any]] = {t.name: {"fixed"} for t in prompt.tools}
        for node in walked.nodes:
            if node.status != "active":
                continue
            ladder = _top_ladder(node)
            if ladder is None:
                if node.text:
                    self.slots.append(node.text)
                for t in node.context.tools:
                    owner_of_tool.setdefault(t.name, set()).add("fixed")
                continue
            contributor = by_ladder.get(id(ladder))
            if contributor is None:
                sh = self.g.shapes.get(id(ladder)) or shape(ladder)
                contributor = Contributor(id=sh.id, shape=sh, priority=-1, order=len(self.contributors), full_text="", tools=[])
                by_ladder[id(ladder)] = contributor
                texts[id(ladder)] = []
                self.contributors.append(contributor)
                self.slots.append(contributor)
            if node.context in contributor.shape.sources:
                contributor.priority = max(contributor.priority, node.effective_priority)
            if node.text:
                texts[id(ladder)].append(node.text)
            for t in node.context.tools:
                owner_of_tool.setdefault(t.name, set()).add(contributor)
        for contributor in self.contributors:
            contributor.full_text = SEPARATOR.join(texts[id(contributor.shape.ladder)])
            if contributor.priority < 0:
                contributor.priority = contributor.shape.priority
        self._offered = tools_of(prompt, walked.nodes)
        active = self.o.active_tools
        if active is not None and READ_OFFLOAD in active:
            self.o.support_required = True  # explicitly selected: offered even before anything is offloaded
        if active is not None:
            unknown = [n for n in active if n not in self._offered and n != READ_OFFLOAD]
            if unknown:
                raise ValueError(
                    f"active_tools names unknown tools {unknown}; this request offers: {', '.join(sorted(self._offered)) or 'none'}"
                )
        for name, (t, _source) in self._offered.items():
            if active is not None and name not in active:
                continue
            owners = owner_of_tool.get(name, {"fixed"})
            if len(owners) == 1 and isinstance(next(iter(owners)), Contributor):
                next(iter(owners)).tools.append(t)
            else:
                self._fixed_tools.append(t)
        for contributor in self.contributors:
            self._rungs(contributor)

    def _block_cost(self, text: str) -> int:
        # Same cache as count_joined's, so the final exact count re-encodes nothing.
        return count_with_separator(self.counter, text, SEPARATOR) if text else 0

    def _rungs(self, c: Contributor) -> None:
        sh, counter = c.shape, self.counter
        tool_cost = sum(tool_tokens(counter, t) for t in c.tools)
        full_block = self._block_cost(c.full_text)
        rungs = [Rung("full", c.full_text, full_block + tool_cost, True, block_tokens=full_block)]
        if sh.prefer is not None:
            for alt in sh.prefer.alternatives:
                text = self.g.alt_texts.get(id(alt), "")
                block = self._block_cost(text)
                rungs.append(Rung("authored", text, block + tool_cost, True, variant=alt.id, block_tokens=block))
        if sh.summary is not None:
            summ = sh.summary
            c.summary_key = artifact_key(c.full_text, summ.strategy, model_name_of(summ.model))
            artifact = self.o.summary_store.get(c.summary_key)
            if artifact is not None:
                text = f"[summary of {c.id}]\n{artifact.text}"
                block = self._block_cost(text)
                rungs.append(Rung("summary", text, block + tool_cost, True, block_tokens=block))
            else:
                detail = "no summary artifact yet" + ("; on_miss='skip'" if summ.on_miss == "skip" else "; generate prepares it when needed")
                rungs.append(Rung("summary", None, None, False, reason="unprepared", detail=detail))
        if sh.offload is not None:
            c.offload_key = f"context:{c.id}"
            handle = make_handle(self.o.namespace, c.offload_key)
            text = reference_text(c.id, handle, c.full_text, counter)
            block = self._block_cost(text)
            rung = Rung("offload", text, block + tool_cost, True, block_tokens=block)
            above = sh.offload.above_tokens
            if above is not None and full_block <= above:
                rung.available, rung.reason = False, "below-floor"
                rung.detail = f"the source is {full_block} tokens; only a source over above_tokens={above} is offloaded"
            rungs.append(rung)
        if sh.droppable:
            rung = Rung("omitted", None, 0, True)
            required = [t.name for t in c.tools if self.o.active_tools is not None and t.name in self.o.active_tools]
            if required:
                rung.available, rung.reason = False, "required-tool"
                rung.detail = f"omission would remove the explicitly selected tools {required}"
            rungs.append(rung)
        self._hold_to_ceiling(c, rungs)
        c.rungs = rungs

    def _hold_to_ceiling(self, c: Contributor, rungs: list[Rung]) -> None:
        """Mark the rungs above the lowest one ``c`` was sent at in this epoch as unavailable."""
        ceiling = self.o.ceilings.get(c.id)
        if ceiling is not None:
            for rung in rungs[: min(ceiling, len(rungs))]:
                if rung.available:
                    rung.available, rung.reason = False, "over-limit"
                    rung.detail = f"held below this rung for the rest of epoch {self.o.epoch} (fidelity never rises within an epoch)"

    # -- costs ---------------------------------------------------------------------------------
    def _base_messages(self) -> list[dict[str, Any]]:
        """The caller's history, then the user prompt, then this run's tool traffic."""
        out: list[dict[str, Any]] = list(self.o.messages)
        if self.g.walked.prompt_text:
            out.append({"role": "user", "content": self.g.walked.prompt_text})
        out.extend(self.o.turn)
        return out

    def _support_tool(self) -> Tool:
        return read_offload_tool(self.o.offload_store, self.o.namespace)

    def fixed_cost(self) -> int:
        counter = self.counter
        system = sum(self._block_cost(s) for s in self.slots if isinstance(s, str))
        messages = sum(message_tokens(counter, m) for m in self._base_messages())
        tools = sum(tool_tokens(counter, t) for t in self._fixed_tools + self.o.extra_tools)
        support = tool_tokens(counter, self._support_tool()) if self.o.support_required else 0
        return system + messages + tools + support

    # -- selection -----------------------------------------------------------------------------
    def ordered(self) -> list[Contributor]:
        return sorted(self.contributors, key=lambda c: (-c.priority, c.order))

    def greedy(self, order: list[Contributor], limit: int, fixed: int, support_cost: int) -> list[int] | None:
        """One pass in priority order; ``LB`` is the exact cheapest completion of the rest.

        The ``read_offload`` schema (``support_cost``) is paid once, by the first offload rung. The
        cheapest completion of contributors ``i..`` is therefore either every one at its cheapest
        non-offload rung, or ``support_cost`` plus every one at its cheapest rung overall (zero
        extra once paid); both are suffix sums, so each step is O(rungs).
        """
        inf = float("inf")
        min_all: list[float] = []
        min_non: list[float] = []
        for c in order:
            costs = [(r.name, r.cost) for r in c.rungs if r.available and r.cost is not None]
            if not costs:
                return None
            min_all.append(min(cost for _n, cost in costs))  # type: ignore[type-var]
            min_non.append(min((cost for n, cost in costs if n != "offload"), default=inf))  # type: ignore[type-var]
        n = len(order)
        suf_all = [0.0] * (n + 1)
        suf_non = [0.0] * (n + 1)
        for i in range(n - 1, -1, -1):
            suf_all[i] = suf_all[i + 1] + min_all[i]
            suf_non[i] = suf_non[i + 1] + min_non[i]

        def lower_bound(i: int, paid: bool) -> float:
            return suf_all[i] if paid else min(suf_non[i], support_cost + suf_all[i])

        paid = self.o.support_required
        if fixed + lower_bound(0, paid) > limit:
            return None
        used, choice = fixed, []
        for i, c in enumerate(order):
            for index, rung in enumerate(c.rungs):
                if not rung.available or rung.cost is None:
                    continue
                pays = rung.name == "offload" and not paid
                cost = rung.cost + (support_cost if pays else 0)
                if used + cost + lower_bound(i + 1, paid or pays) <= limit:
                    break
            else:  # pragma: no cover - the cheapest completion was checked to fit
                return None
            used += cost
            paid = paid or pays
            choice.append(index)
        return choice

    def assemble(self, order: list[Contributor], choice: list[int]) -> tuple[str, list[str], list[dict[str, Any]], list[Tool], int]:
        """The request for ``choice`` and its exact input token count."""
        chosen = {id(c): c.rungs[i] for c, i in zip(order, choice, strict=True)}
        blocks: list[str] = []
        for slot in self.slots:
            text = slot if isinstance(slot, str) else chosen[id(slot)].text
            if text:
                blocks.append(text)
        tools = list(self._fixed_tools)
        for slot in self.slots:
            if isinstance(slot, Contributor) and chosen[id(slot)].name != "omitted":
                tools.extend(slot.tools)
        tools.extend(self.o.extra_tools)
        if self.o.support_required or any(r.name == "offload" for r in chosen.values()):
            if READ_OFFLOAD not in {t.name for t in tools}:
                tools.append(self._support_tool())
        messages = self._base_messages()
        counter = self.counter
        total = count_joined(counter, blocks, SEPARATOR)
        total += sum(message_tokens(counter, m) for m in messages)
        total += sum(tool_tokens(counter, t) for t in tools)
        return SEPARATOR.join(blocks), blocks, messages, tools, total

    def repair(self, order: list[Contributor], choice: list[int], limit: int) -> tuple[list[int], tuple[str, list[str], list[dict[str, Any]], list[Tool], int]] | None:
        """Count the chosen request exactly once; if over ``limit`` (the estimate was low), degrade in
        reverse lexicographic order, one rung at a time, recounting (cached pieces) until it fits."""
        assembled = self.assemble(order, choice)
        for i in range(len(order) - 1, -1, -1):
            while assembled[4] > limit:
                lower = [j for j in range(choice[i] + 1, len(order[i].rungs)) if order[i].rungs[j].available and order[i].rungs[j].cost is not None]
                if not lower:
                    break
                choice[i] = lower[0]
                assembled = self.assemble(order, choice)
            if assembled[4] <= limit:
                break
        return (choice, assembled) if assembled[4] <= limit else None

    def plan(self) -> Plan:
        limits = self.o.limits
        order = self.ordered()
        fixed = self.fixed_cost()
        support_cost = tool_tokens(self.counter, self._support_tool())
        result: tuple[list[int], tuple[str, list[str], list[dict[str, Any]], list[Tool], int]] | None = None
        tier: str | None = None
        tiers = [("optimize_at", limits.optimize_at)] + ([("max", limits.max_input_tokens)] if limits.max_input_tokens != limits.optimize_at else [])
        for name, limit in tiers:
            choice = self.greedy(order, limit, fixed, support_cost)
            if choice is None:
                continue
            result = self.repair(order, choice, limit)
            if result is not None:
                tier = name
                break
        if result is None:
            return self._infeasible(order, fixed)
        choice, (system, _blocks, messages, tools, total) = result
        plan = self._finish(order, choice, total, system, messages, tools, tier)
        plan.planner = self
        return plan

    # -- results -------------------------------------------------------------------------------
    def _finish(self, order: list[Contributor], choice: list[int], total: int, system: str, messages: list[dict[str, Any]], tools: list[Tool], tier: str | None) -> Plan:
        candidates: list[Candidate] = []
        adaptations: list[Adaptation] = []
        offloads: list[tuple[str, str, str]] = []
        for c, selected in zip(order, choice, strict=True):
            picked = c.rungs[selected]
            for index, rung in enumerate(c.rungs):
                if index == selected:
                    reason, detail = None, None
                elif not rung.available:
                    reason, detail = rung.reason, rung.detail
                elif index < selected and tier == "optimize_at" and rung.cost is not None and total - (picked.cost or 0) + rung.cost <= self.o.limits.max_input_tokens:
                    reason, detail = "over-optimize-at", "fits under max but not under optimize_at with the higher-priority contributors' rungs"
                elif index < selected:
                    reason, detail = "over-limit", "does not fit with the higher-priority contributors' rungs"
                else:
                    reason, detail = "lower-fidelity", "a higher-fidelity rung fits"
                tokens = None if rung.cost is None else total - (picked.cost or 0) + rung.cost
                candidates.append(
                    Candidate(c.id, rung.name, rung.available, index == selected, tokens, reason, rung.variant, rung.cost, detail)  # type: ignore[arg-type]
                )
            if picked.name != "full":
                adaptations.append(Adaptation(c.id, picked.name, c.rungs[0].cost or 0, picked.cost or 0, picked.variant))  # type: ignore[arg-type]
            if picked.name == "offload":
                offloads.append((c.id, c.offload_key, c.full_text))
        missing = [
            c for c, selected in zip(order, choice, strict=True)
            if c.shape.summary is not None and c.shape.summary.on_miss != "skip"
            and any(r.name == "summary" and r.reason == "unprepared" for r in c.rungs)
            and RUNG_RANK[c.rungs[selected].name] > SUMMARY_RUNG
        ]
        warnings = [f"{c.id!r}: a summary would keep more fidelity than {c.rungs[s].name!r} but is not prepared" for c, s in zip(order, choice, strict=True) if c in missing]
        contributions = self._contributions(order, choice, tools, messages)
        schema_tokens = {t.name: tool_tokens(self.counter, t) for t in tools}
        cache = None
        if self.o.cache is not None:
            static = self.static_ids()
            blocks = [SystemBlock(c.contributor, c.span[0], c.span[1], c.kind in ("prompt-system", "context") and c.contributor in static)
                      for c in contributions if c.span is not None]
            cache, cache_warnings = place_breakpoints(system, blocks, [t.json_schema() for t in tools], sum(schema_tokens.values()), self.o.cache, self.counter)
            warnings += cache_warnings
        return Plan(
            fits=True, tier=tier, system=system, messages=messages, tools=tools, input_tokens=total,
            contributors=order, choice=choice, candidates=candidates, adaptations=adaptations,
            contributions=contributions, warnings=warnings,
            diagnostics=[], error_code=None, offloads=offloads, missing_summaries=missing,
            tool_tokens=schema_tokens, cache=cache,
        )

    def static_ids(self) -> set[str]:
        """The system blocks that are static by construction: a literal text, in the request
        whatever the input (the prompt's own text; a plain context no ``when``/``match`` decides)."""
        out = {"<prompt>"} if not callable(self.g.prompt.system) else set()
        for node in self.g.walked.nodes:
            if node.status == "active" and not node.conditional and not callable(node.context.system) and _top_ladder(node) is None:
                out.add(node.id)
        return out

    def _contributions(self, order: list[Contributor], choice: list[int], tools: list[Tool], messages: list[dict[str, Any]]) -> list[Contribution]:
        counter = self.counter
        chosen = {id(c): c.rungs[i] for c, i in zip(order, choice, strict=True)}
        out: list[Contribution] = []
        walked = self.g.walked
        fixed_nodes = iter([n for n in walked.nodes if n.status == "active" and _top_ladder(n) is None and n.text])
        position = 0  # where the next non-empty block starts in the sent system text

        def span(text: str | None) -> tuple[int, int] | None:
            nonlocal position
            if not text:
                return None
            start = position
            position = start + len(text) + len(SEPARATOR)
            return (start, start + len(text))

        for slot in self.slots:
            if isinstance(slot, Contributor):
                rung = chosen[id(slot)]
                handle = make_handle(self.o.namespace, slot.offload_key) if rung.name == "offload" else None
                out.append(
                    Contribution(
                        slot.id, "ladder", rung.name, rung.block_tokens, tuple(t.name for t in slot.tools) if rung.name != "omitted" else (),
                        span(rung.text), rung.variant, handle,
                    )
                )
            elif slot is walked.own_text and not out:
                out.append(Contribution("<prompt>", "prompt-system", "full", self._block_cost(slot), (), span(slot)))
            else:
                node = next(fixed_nodes)
                out.append(Contribution(node.id, "context", "full", self._block_cost(slot), tuple(t.name for t in node.context.tools), span(slot)))
        prompt_at = len(self.o.messages) if walked.prompt_text else None
        if prompt_at is not None:
            out.append(Contribution("<user-prompt>", "user-prompt", "full", message_tokens(counter, messages[prompt_at])))
        rest = [m for i, m in enumerate(messages) if i != prompt_at]
        if rest:
            out.append(Contribution("<messages>", "messages", "full", sum(message_tokens(counter, m) for m in rest)))
        if tools:
            out.append(Contribution("<tools>", "tools", "full", sum(tool_tokens(counter, t) for t in tools), tuple(t.name for t in tools)))
        return out

    def _infeasible(self, order: list[Contributor], fixed: int) -> Plan:
        limits = self.o.limits
        diagnostics: list[Diagnostic] = []
        choice = []
        for c in order:
            costs = [(r.cost, i) for i, r in enumerate(c.rungs) if r.available and r.cost is not None]
            choice.append(min(costs)[1] if costs else len(c.rungs) - 1)
        _system, _blocks, messages, tools, minimum = self.assemble(order, choice)  # exact, including the read_offload schema if needed
        unprepared = [c for c in order if any(r.reason == "unprepared" for r in c.rungs) and c.shape.summary and c.shape.summary.on_miss != "skip"]
        # A missing summary is the reason only if it could make the request fit: even a summary of no
        # tokens in place of each one's cheapest rung must leave the request under max. Otherwise the
        # budget is too small whatever is prepared (generate says the same after preparing them).
        freed = sum((c.rungs[i].cost or 0) for c, i in zip(order, choice, strict=True) if c in unprepared)
        if any(c.rungs[i].name == "offload" for c, i in zip(order, choice, strict=True) if c in unprepared):
            freed += tool_tokens(self.counter, self._support_tool())
        if minimum - freed > limits.max_input_tokens:
            unprepared = []
        code = "REPRESENTATION_UNAVAILABLE" if unprepared else "REQUEST_TOO_LARGE"
        # the breakdown of exactly that cheapest request (its read_offload tool too): the parts add up to ``minimum``
        parts = self._contributions(order, choice, tools, messages)
        for contribution in parts:
            if contribution.tokens:
                diagnostics.append(
                    Diagnostic(
                        id=f"{code.lower()}:{contribution.contributor}", code=code, contributor=contribution.contributor,
                        tokens=contribution.tokens,
                        message=f"required {contribution.kind} {contribution.contributor!r} needs {contribution.tokens} tokens at its cheapest legal rung",
                    )
                )
        joins = minimum - sum(c.tokens for c in parts)
        if joins:  # each part is counted alone; the system text counted whole differs by a token or so where they join
            diagnostics.append(Diagnostic(id=f"{code.lower()}:<joins>", code=code, contributor="<joins>", tokens=joins,
                                          message=f"the system text counted whole is {joins:+d} tokens against its parts counted alone (where they join)"))
        for c in unprepared:
            diagnostics.append(Diagnostic(id=f"unprepared:{c.id}", code=code, contributor=c.id, tokens=None, message=f"the summary of {c.id!r} is not prepared"))
        candidates = [
            Candidate(c.id, r.name, r.available, False, None if r.cost is None else minimum - (c.rungs[s].cost or 0) + r.cost,  # type: ignore[arg-type]
                      r.reason if not r.available else "over-limit", r.variant, r.cost, r.detail or "no legal candidate fits max")  # type: ignore[arg-type]
            for c, s in zip(order, choice, strict=True) for r in c.rungs
        ]
        message = (
            f"no legal candidate fits max_input_tokens={limits.max_input_tokens}: the cheapest needs about {minimum} tokens"
            + (f"; the summar{'y' if len(unprepared) == 1 else 'ies'} of {', '.join(c.id for c in unprepared)} {'is' if len(unprepared) == 1 else 'are'} not prepared" if unprepared else "")
        )
        return Plan(
            fits=False, tier=None, system="", messages=self._base_messages(), tools=list(self._fixed_tools), input_tokens=minimum,
            contributors=order, choice=choice, candidates=candidates, adaptations=[], contributions=[], warnings=[message],
            diagnostics=diagnostics, error_code=code, offloads=[], missing_summaries=unprepared,
        )
