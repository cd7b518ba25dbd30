"""The resolver: conditional filtering, resolution in use order, concatenation, token budget.

Written once as a generator over ``Call`` requests (see ``callbacks.py``) so that ``resolve`` and
``aresolve`` share every rule.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .callbacks import Call, Resolution, expect_text
from .contexts import Conditional, Context, Match, children
from .entries import Ladder
from .results import Drop, Exclusion, Inspection, Part, Resolved
from ..tokens import TiktokenCounter, TokenCounter, count_with_separator, default_counter
from ..tools import Tool

if TYPE_CHECKING:
    from .prompts import Prompt

SEPARATOR = "\n\n"


@dataclass(slots=True, eq=False)
class Node:
    """One context as met during resolution. ``index`` is its position in output (post) order."""

    context: Context
    owner: Node | None
    ladder: Ladder | None
    status: str = "active"
    reason: str | None = None
    detail: str | None = None
    text: str = ""
    index: int = 0
    effective_priority: int = 50
    children: list[Node] = field(default_factory=list)
    conditional: bool = False  # whether an input decides that it is in the request (its own when, when(...), match)

    @property
    def id(self) -> str:
        return self.context.id


@dataclass(slots=True)
class Walk:
    """The outcome of the filtering and resolving phases, before any budget."""

    own_text: str
    prompt_text: str | None
    nodes: list[Node]  # output order: nested before owner; active and excluded
    unmatched: list[str] = field(default_factory=list)  # match(...) keys that selected no case


def walk(prompt: Prompt, input: Any) -> Resolution[Walk]:
    """Filter and resolve every entry of ``prompt`` for one validated input."""
    nodes: list[Node] = []
    active: set[int] = set()
    unmatched: list[str] = []

    def exclude_subtree(entry: Any, owner: Node | None, ladder: Ladder | None, reason: str, detail: str) -> None:
        if isinstance(entry, Context):
            node = Node(entry, owner, ladder, status="excluded", reason=reason, detail=detail)
            inner = f"its owner {entry.id!r} is excluded"
            for child in children(entry):
                exclude_subtree(child, node, ladder, "parent-excluded", inner)
            nodes.append(node)
        else:
            under = entry if isinstance(entry, Ladder) else ladder
            for child in children(entry):
                exclude_subtree(child, owner, under, reason, detail)

    def visit(entries: tuple[Any, ...], owner: Node | None, owner_id: str, ladder: Ladder | None, conditional: bool = False) -> Iterator[Call]:
        for entry in entries:
            if isinstance(entry, Context):
                if id(entry) in active:
                    continue
                node = Node(entry, owner, ladder, conditional=conditional or entry.when is not None)
                if entry.when is not None:
                    ok = yield Call(entry.id, "when", entry.when, input)
                    if not ok:
                        node.status, node.reason = "excluded", "when"
                        node.detail = f"its when(...) returned {ok!r}"
                        for child in children(entry):
                            exclude_subtree(child, node, ladder, "parent-excluded", f"its owner {entry.id!r} is excluded")
                        nodes.append(node)
                        continue
                active.add(id(entry))
                if owner is not None:
                    owner.children.append(node)
                if entry.use:
                    yield from visit(children(entry), node, entry.id, ladder, node.conditional)
                if callable(entry.system):
                    value = yield Call(entry.id, "system", entry.system, input)
                    node.text = expect_text(entry.id, "system", value)
                    node.detail = entry.render_detail()
                else:
                    node.text = entry.system or ""
                nodes.append(node)
            elif isinstance(entry, Conditional):
                ok = yield Call(owner_id, "when(...) predicate", entry.predicate, input)
                if ok:
                    yield from visit(children(entry), owner, owner_id, ladder, True)
                else:
                    detail = f"the when(...) wrapper in {owner_id!r} returned {ok!r}"
                    for child in children(entry):
                        exclude_subtree(child, owner, ladder, "when-wrapper", detail)
            elif isinstance(entry, Match):
                key = yield Call(owner_id, "match(on=...)", entry.on, input)
                try:
                    selected = entry.cases.get(key)
                except TypeError:  # unhashable key selects nothing
                    selected = None
                if selected is None:
                    cases = ", ".join(repr(k) for k in entry.cases) or "none"
                    unmatched.append(f"match(...) in {owner_id!r} selected {key!r}, which has no case (cases: {cases}); nothing of it is sent")
                for case_key, branch in entry.cases.items():
                    if branch is selected:
                        yield from visit(branch, owner, owner_id, ladder, True)
                        continue
                    if selected is None:
                        detail = f"match selected {key!r}, which has no case; this branch is {case_key!r}"
                    else:
                        detail = f"match selected {key!r}; this branch is {case_key!r}"
                    for child in branch:
                        exclude_subtree(child, owner, ladder, "match", detail)
            elif isinstance(entry, Ladder):
                yield from visit(children(entry), owner, owner_id, entry, conditional)

    if callable(prompt.system):
        own = expect_text(prompt.id, "system", (yield Call(prompt.id, "system", prompt.system, input)))
    else:
        own = prompt.system or ""
    yield from visit(prompt.use, None, prompt.id, None)
    user: str | None
    if callable(prompt.prompt):
        user = expect_text(prompt.id, "prompt", (yield Call(prompt.id, "prompt", prompt.prompt, input)))
    else:
        user = prompt.prompt

    # A context excluded in one place but active in another is active; report each exclusion once.
    seen: set[int] = set()
    kept: list[Node] = []
    for node in nodes:
        if node.status == "excluded" and (id(node.context) in active or id(node.context) in seen):
            continue
        if node.status == "excluded":
            seen.add(id(node.context))
        kept.append(node)
    for index, node in enumerate(kept):
        node.index = index
        node.effective_priority = _effective(node)
    return Walk(own_text=own, prompt_text=user, nodes=kept, unmatched=unmatched)


def _effective(node: Node) -> int:
    # Owners are appended after what they own, so compute on demand from the chain.
    priority = node.context.priority
    owner = node.owner
    while owner is not None:
        priority = min(priority, owner.context.priority)
        owner = owner.owner
    return priority


class Budgeter:
    """Drops active contexts until the system text fits, and counts every part exactly.

    Each block's cost (its text plus the separator after it) is counted once, through the
    counter's content cache; the system total is the sum of kept costs, which is exact when no
    block starts with whitespace (see ``tokens.count_joined``), else one full count.
    """

    def __init__(self, walked: Walk, counter: TokenCounter) -> None:
        self.walked = walked
        self.counter = counter
        self.included = [n for n in walked.nodes if n.status == "active"]
        self.cost_sep: dict[int, int] = {
            id(n): count_with_separator(counter, n.text, SEPARATOR) for n in self.included if n.text
        }
        self.own_cost_sep = count_with_separator(counter, walked.own_text, SEPARATOR) if walked.own_text else 0
        self.additive = isinstance(counter, TiktokenCounter) and not any(n.text[:1].isspace() for n in self.included)

    def kept(self) -> list[Node]:
        return [n for n in self.included if n.status == "active" and n.text]

    def texts(self) -> list[str]:
        pieces = [self.walked.own_text] if self.walked.own_text else []
        pieces.extend(n.text for n in self.kept())
        return pieces

    def last_cost(self, text: str) -> int:
        """What the last block costs: its text alone, with no separator after it."""
        return self.counter.count(text)

    def system_tokens(self) -> int:
        kept = self.kept()
        if not self.additive:
            return self.counter.count(SEPARATOR.join(self.texts()))
        if not kept:
            return self.last_cost(self.walked.own_text) if self.walked.own_text else 0
        total = self.own_cost_sep + sum(self.cost_sep[id(n)] for n in kept[:-1])
        return total + self.last_cost(kept[-1].text)

    def apply(self, budget: int | None) -> None:
        if budget is None:
            return
        total = self.system_tokens()
        if total <= budget:
            return
        order = sorted(self.included, key=lambda n: (n.effective_priority, -n.index))
        estimate = total
        cursor = 0
        # Fast phase: subtract each dropped part's cost; exact phase: recount until it truly fits.
        while cursor < len(order) and estimate > budget:
            node = order[cursor]
            cursor += 1
            if node.status != "active":
                continue
            for dropped in self._drop(node):
                estimate -= self.cost_sep.get(id(dropped), 0)
        total = self.system_tokens()
        while total > budget and cursor < len(order):
            node = order[cursor]
            cursor += 1
            if node.status == "active":
                self._drop(node)
                total = self.system_tokens()

    def _drop(self, node: Node) -> list[Node]:
        node.status, node.reason = "dropped", "budget"
        dropped = [node]
        stack = list(node.children)
        while stack:
            child = stack.pop()
            if child.status == "active":
                child.status, child.reason = "dropped", "parent-dropped"
                dropped.append(child)
            stack.extend(child.children)
        return dropped


def tools_of(prompt: Prompt, nodes: list[Node]) -> dict[str, tuple[Tool, str]]:
    """Tools offered: the prompt's own, then those of active contexts, in order.

    A context that leaves the request (excluded, or dropped by the token budget) takes its tools
    with it: an instruction never goes while its capability stays.
    """
    out: dict[str, tuple[Tool, str]] = {t.name: (t, "<prompt>") for t in prompt.tools}
    for node in sorted(nodes, key=lambda n: n.index):
        if node.status != "active":
            continue
        for t in node.context.tools:
            out.setdefault(t.name, (t, node.id))
    return out


def build_parts(walked: Walk, budgeter: Budgeter) -> list[Part]:
    """Parts with their costs. Costs of kept parts add up to the system tokens (except where a
    block starts with whitespace, where tokenization can merge across the boundary)."""
    kept = budgeter.kept()
    last: Node | None = kept[-1] if kept else None
    own = walked.own_text
    if not own:
        own_tokens = 0
    elif last is None:
        own_tokens = budgeter.last_cost(own)
    else:
        own_tokens = budgeter.own_cost_sep
    parts = [Part(source="<prompt>", kind="prompt", text=own, tokens=own_tokens, status="active", reason=None, priority=None)]
    for node in walked.nodes:
        if node.status == "excluded" or not node.text:
            tokens = 0
        elif node is last:
            tokens = budgeter.last_cost(node.text)
        else:
            tokens = budgeter.cost_sep[id(node)]
        parts.append(
            Part(
                source=node.id,
                kind=node.context.kind,
                text=node.text,
                tokens=tokens,
                status=node.status,  # type: ignore[arg-type]
                reason=node.reason,
                priority=node.context.priority,
                effective_priority=node.effective_priority,
                owner=node.owner.id if node.owner is not None else None,
                detail=node.detail,
                tools=tuple(t.name for t in node.context.tools) if node.context.tools else (),
            )
        )
    return parts


def apply_token_budget(walked: Walk, token_budget: int | None, counter: TokenCounter) -> tuple[list[Drop], int]:
    """Drop contexts by priority until the system text fits ``token_budget`` (marks the nodes).

    Returns the drops, in use order, and the system text's tokens after them. The planner calls
    this before ladder planning, so ``preview`` and ``generate`` drop exactly what ``inspect`` does.
    """
    budgeter = Budgeter(walked, counter)
    budgeter.apply(token_budget)
    drops = [
        Drop(n.id, n.context.priority, budgeter.cost_sep.get(id(n), 0), n.reason)  # type: ignore[arg-type]
        for n in walked.nodes
        if n.status == "dropped"
    ]
    return drops, budgeter.system_tokens()


def finish(
    prompt: Prompt, input: Any, walked: Walk, token_budget: int | None, counter: TokenCounter | None
) -> tuple[Resolved, Inspection]:
    """Apply the budget and build both result objects."""
    counter = counter or default_counter()
    budgeter = Budgeter(walked, counter)
    budgeter.apply(token_budget)
    system = SEPARATOR.join(budgeter.texts())
    system_tokens = budgeter.system_tokens()
    tools = tools_of(prompt, walked.nodes)
    resolved = Resolved(system=system, prompt=walked.prompt_text, tools={k: v[0] for k, v in tools.items()}, input=input)
    parts = build_parts(walked, budgeter)
    prompt_tokens = counter.count(walked.prompt_text) if walked.prompt_text else 0
    exclusions = [Exclusion(n.id, n.reason, n.detail or "") for n in walked.nodes if n.status == "excluded"]  # type: ignore[arg-type]
    drops = [
        Drop(p.source, p.priority or 0, p.tokens, p.reason)  # type: ignore[arg-type]
        for p in parts
        if p.status == "dropped"
    ]
    inspection = Inspection(
        prompt_id=prompt.id,
        system=system,
        prompt=walked.prompt_text,
        parts=parts,
        excluded_contexts=exclusions,
        dropped_contexts=drops,
        tools=sorted(tools),
        system_tokens=system_tokens,
        prompt_tokens=prompt_tokens,
        total_tokens=system_tokens + prompt_tokens,
        token_budget=token_budget,
        fits=True if token_budget is None else system_tokens <= token_budget,
        tool_sources={name: source for name, (_, source) in sorted(tools.items())},
        unmatched=list(walked.unmatched),
    )
    return resolved, inspection
