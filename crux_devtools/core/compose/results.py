"""Frozen results of resolving a prompt. The devtools only read these; they never re-derive them."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel

from crux_devtools.shapes import DropDict, ExclusionDict, InspectionDict, PartDict, PartStatus

from ..tools import Tool

ExclusionReason = Literal["when", "when-wrapper", "match", "parent-excluded"]
DropReason = Literal["budget", "parent-dropped"]


_SCALARS = (str, int, float, bool, type(None))


def to_plain(value: Any) -> Any:
    """Turn results, models and containers into JSON-serialisable data."""
    kind = type(value)
    if kind in _SCALARS:  # the common case first: most leaves are plain values
        return value
    if kind is list or kind is tuple:
        return [to_plain(v) for v in value]
    if kind is dict:
        return {str(k): to_plain(v) for k, v in value.items()}
    if hasattr(value, "to_dict") and not isinstance(value, type):
        return value.to_dict()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_plain(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return repr(value)


class _ToDict:
    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        return {f.name: to_plain(getattr(self, f.name)) for f in dataclasses.fields(self)}  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class Part:
    """One block of the system text: the prompt's own text, or one context.

    ``tokens`` is what the part costs in the system text (its text plus the separator that follows
    it, when another block follows); for an excluded part it is 0. ``priority`` is the declared
    priority; ``effective_priority`` is ``min(own, owner's)``, the one budget dropping uses.
    """

    source: str
    kind: str
    text: str
    tokens: int
    status: PartStatus
    reason: str | None
    priority: int | None
    effective_priority: int | None = None
    owner: str | None = None
    detail: str | None = None
    tools: tuple[str, ...] = ()

    def to_dict(self) -> PartDict:
        return {
            "source": self.source, "kind": self.kind, "text": self.text, "tokens": self.tokens, "status": self.status,
            "reason": self.reason, "priority": self.priority, "effective_priority": self.effective_priority,
            "owner": self.owner, "detail": self.detail, "tools": list(self.tools),
        }


@dataclass(frozen=True, slots=True)
class Exclusion:
    """A context that did not take part, and why (``detail`` is a sentence for people)."""

    id: str
    reason: ExclusionReason
    detail: str

    def to_dict(self) -> ExclusionDict:
        return {"id": self.id, "reason": self.reason, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class Drop:
    """A context that was resolved but dropped to fit the token budget."""

    id: str
    priority: int
    tokens: int
    reason: DropReason

    def to_dict(self) -> DropDict:
        return {"id": self.id, "priority": self.priority, "tokens": self.tokens, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class Resolved(_ToDict):
    """What a prompt resolves to: the system text, the user prompt, the tools offered, the input."""

    system: str
    prompt: str | None
    tools: dict[str, Tool]
    input: BaseModel


@dataclass(frozen=True, slots=True)
class Inspection:
    """Everything the resolver decided for one input, for people and tools to read."""

    prompt_id: str
    system: str
    prompt: str | None
    parts: list[Part]
    excluded_contexts: list[Exclusion]
    dropped_contexts: list[Drop]
    tools: list[str]
    system_tokens: int
    prompt_tokens: int
    total_tokens: int
    token_budget: int | None
    fits: bool
    tool_sources: dict[str, str] = field(default_factory=dict)
    # One sentence per match(...) whose key selected no case: nothing of it is sent, which is
    # legal but rarely meant (``crux-devtools check`` fails on it).
    unmatched: list[str] = field(default_factory=list)

    def to_dict(self) -> InspectionDict:
        return {
            "prompt_id": self.prompt_id, "system": self.system, "prompt": self.prompt,
            "parts": [p.to_dict() for p in self.parts],
            "excluded_contexts": [e.to_dict() for e in self.excluded_contexts],
            "dropped_contexts": [d.to_dict() for d in self.dropped_contexts],
            "tools": list(self.tools), "system_tokens": self.system_tokens, "prompt_tokens": self.prompt_tokens,
            "total_tokens": self.total_tokens, "token_budget": self.token_budget, "fits": self.fits,
            "tool_sources": dict(self.tool_sources), "unmatched": list(self.unmatched),
        }
