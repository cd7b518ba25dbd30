"""Blocks of a ``memory(...)`` context: what each renders into the system text and what it keeps.

A block is a small frozen value with two jobs: ``render`` (read the store for one namespace and
return text, ``""`` for nothing; ``render_with_detail`` also says, for the inspector, what it found
and left out) and ``keep`` (pick, from captured chat messages, the entries to write on ``flush``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..compose.contexts import check_id
from .checks import check_limit
from .results import ContextAssembly
from .store import MemoryStore

Kept = tuple[str, str, str | None]  # (content, entry_type, lane) to write on flush


def _message_text(message: Any) -> tuple[str, str] | None:
    """``(role, text)`` of a chat message dict, or ``None`` for one with no text (e.g. tool calls)."""
    if not isinstance(message, Mapping):
        raise TypeError(f"captured messages must be dicts with 'role' and 'content', got {type(message).__name__}")
    role = message.get("role")
    content = message.get("content")
    if not isinstance(role, str) or not isinstance(content, str) or not content.strip():
        return None
    return role, content.strip()


@dataclass(frozen=True, slots=True)
class RecentMessages:
    """The last ``max_messages`` user and assistant messages of the namespace, oldest first."""

    id: str
    max_messages: int
    roles: tuple[str, ...] = ("user", "assistant")
    title: str = "Recent messages"

    def render(self, store: MemoryStore, namespace: str, query: str | None) -> str:
        return self.render_with_detail(store, namespace, query)[0]

    def render_with_detail(self, store: MemoryStore, namespace: str, query: str | None) -> tuple[str, str]:
        """The block's text, and a phrase for the inspector on what it read."""
        recent = store.recent(namespace, limit=self.max_messages, entry_types=["log"], lane=self.lane)
        if not recent:
            return "", f"{self.id}: no messages yet"
        lines = [f"## {self.title}"] + [f"- {e.content}" for e in reversed(recent)]
        shown = "the last message" if len(recent) == 1 else f"the last {len(recent)} messages"
        return "\n".join(lines), f"{self.id}: {shown} (at most {self.max_messages})"

    @property
    def lane(self) -> str:
        return f"messages:{self.id}"

    def keep(self, messages: Sequence[Any]) -> list[Kept]:
        out: list[Kept] = []
        for message in messages:
            parsed = _message_text(message)
            if parsed and parsed[0] in self.roles:
                out.append((f"{parsed[0]}: {parsed[1]}", "log", self.lane))
        return out


def recent_messages(id: str, max_messages: int = 8, *, roles: Sequence[str] = ("user", "assistant")) -> RecentMessages:
    """A block showing the namespace's last ``max_messages`` captured messages."""
    check_id("recent_messages block", id)
    if isinstance(max_messages, bool) or not isinstance(max_messages, int) or max_messages <= 0:
        raise ValueError(f"recent_messages({id!r}): max_messages must be a positive int, got {max_messages!r}")
    return RecentMessages(id=id, max_messages=max_messages, roles=tuple(roles))


Embed = Callable[[str], Sequence[float]]


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


@dataclass(frozen=True, slots=True)
class Facts:
    """Durable facts of the namespace relevant to the query, assembled with ``get_context``.

    With ``embed`` (a function from text to a vector), the lexically matched facts are re-ranked by
    cosine similarity to the query instead of bm25. ``extract`` picks facts out of captured messages.
    """

    id: str
    embed: Embed | None = None
    max_tokens: int = 600
    limit: int = 20
    extract: Callable[[Sequence[Any]], Sequence[str]] | None = None
    title: str = "Facts"

    def render(self, store: MemoryStore, namespace: str, query: str | None) -> str:
        return self.render_with_detail(store, namespace, query)[0]

    def render_with_detail(self, store: MemoryStore, namespace: str, query: str | None) -> tuple[str, str]:
        """The block's text, and a phrase for the inspector on what it found and left out."""
        if self.embed is not None:
            return self._render_embedded(store, namespace, query)
        assembly = store.get_context(
            namespace, query, max_token_budget=self.max_tokens, entry_types=["fact"], include_working_memory=False
        )
        return assembly.context_block, f"{self.id}: {describe_assembly(assembly, 'facts', self.max_tokens)}"

    def _render_embedded(self, store: MemoryStore, namespace: str, query: str | None) -> tuple[str, str]:
        embed = self.embed
        assert embed is not None
        found = store.recall(namespace, query or "", limit=self.limit * 3)
        matched = [e for e in found if e.entry_type == "fact"]
        found = matched or store.recent(namespace, limit=self.limit, entry_types=["fact"])
        if not found:
            return "", f"{self.id}: no facts stored yet"
        if query:
            target = list(embed(query))
            found = sorted(found, key=lambda e: -_cosine(target, list(embed(e.content))))
        lines = [f"## {self.title}"]
        used = store.counter.count(lines[0])
        for e in found[: self.limit]:
            line = "- " + e.content
            cost = store.counter.count("\n" + line)
            if self.max_tokens and used + cost > self.max_tokens:
                break
            lines.append(line)
            used += cost
        shown, offered = len(lines) - 1, min(len(found), self.limit)
        how = "matching facts re-ranked by embedding similarity" if matched else "newest facts (no query word matched)"
        detail = f"{self.id}: {shown} of {len(found)} {how} shown"
        if shown < offered:
            detail += f"; the {self.max_tokens}-token budget left out {offered - shown}"
        return ("\n".join(lines) if shown else ""), detail

    def keep(self, messages: Sequence[Any]) -> list[Kept]:
        if self.extract is None:
            return []
        out: list[Kept] = []
        for fact in self.extract(messages):
            if not isinstance(fact, str):
                raise TypeError(f"facts({self.id!r}): extract must return strings, got {type(fact).__name__}")
            if fact.strip():
                out.append((fact.strip(), "fact", None))
        return out


def describe_assembly(assembly: ContextAssembly, noun: str, budget: int) -> str:
    """What one ``get_context`` call found and left out, as a phrase for the inspector."""
    considered, dropped = assembly.evidence_candidates_considered, assembly.evidence_dropped_by_budget
    reason = assembly.empty_reason
    if reason == "no_evidence":
        return f"no {noun} stored yet"
    if reason == "recency_fallback":
        found = f"no query word matched; the {considered} newest {noun} instead"
    else:
        found = f"{considered} matching {noun}"
    if reason == "budget_exhausted":
        return f"{found}, none fits the {budget}-token budget"
    if dropped:
        return f"{found}, {considered - dropped} shown, {dropped} left out by the {budget}-token budget"
    return f"{found}, all shown"


def facts(
    id: str,
    embed: Embed | None = None,
    *,
    max_tokens: int = 600,
    limit: int = 20,
    extract: Callable[[Sequence[Any]], Sequence[str]] | None = None,
) -> Facts:
    """A block showing the namespace's facts that match the memory's query, within ``max_tokens``."""
    check_id("facts block", id)
    if embed is not None and not callable(embed):
        raise TypeError(f"facts({id!r}): embed must be a function from text to a vector, got {type(embed).__name__}")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 0:
        raise TypeError(f"facts({id!r}): max_tokens must be an int >= 0 (0 means no limit), got {max_tokens!r}")
    try:
        check_limit(limit)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"facts({id!r}): {exc}") from None
    if extract is not None and not callable(extract):
        raise TypeError(f"facts({id!r}): extract must be a function from messages to fact strings")
    return Facts(id=id, embed=embed, max_tokens=max_tokens, limit=limit, extract=extract)


Block = RecentMessages | Facts
