"""Where the prompt-cache breakpoints go: the placement a profile with ``cache = "auto"`` asks for.

Providers cache the longest request prefix that matches an earlier request at a breakpoint, in the
order tools, system, messages. The planner knows which block of the system text is *static by
construction* (a literal string, in the request whatever the input: the prompt's own text or a
context that no ``when``/``match`` decides) and which one is computed from the input (a callback, a
ladder, memory, a conditional context). ``place_breakpoints`` turns that into at most four
breakpoints, each only where its prefix reaches the model's minimum:

1. ``"tools"``: after the last tool schema (the tools alone reach the minimum);
2. ``"system"`` at the end of the static prefix (the same in every request of this prompt);
3. ``"system"`` at the end of the system text (the per-input prefix: the same for one input).

They depend only on the request's own blocks, so a request planned again is placed the same way
(stable from request to request: a breakpoint that moved would read nothing). The plan is a plain
value, ``{"breakpoints": [{"after", "offset", "tokens", "ttl"}], "key"}``, carried by
``ModelRequest.cache`` and the receipt and lowered by the adapters (``contract.messages_body``:
system text blocks with ``cache_control``; ``to_openai``: ``prompt_cache_key``, and the system text as
text parts marked with the profile's ``breakpoint_field`` when it names one). Without a policy
nothing is planned and the request is what it always was. Anything that keeps a breakpoint out is a
warning in plain words, never a request a provider would refuse.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..tokens import TokenCounter

CacheTTL = Literal["5m", "1h"]
CACHE_TTLS: tuple[str, ...] = ("5m", "1h")
MAX_BREAKPOINTS = 4
# The explicit breakpoint fields a chat-completions body can carry on a text content part (OpenAI's
# GPT-5.6 family: ``"prompt_cache_breakpoint": {"mode": "explicit"}``); a profile names the one its model takes.
BREAKPOINT_FIELDS: tuple[str, ...] = ("prompt_cache_breakpoint",)


@dataclass(frozen=True, slots=True)
class CachePolicy:
    """How a model's requests are cached: ``cache = "auto"`` on a ``[tool.crux-devtools.models.NAME]``
    profile. ``min_tokens``: the provider's minimum cacheable prefix (None: unknown, never guessed);
    ``ttl``: the lifetime asked for; ``breakpoints``: whether the provider takes explicit breakpoints
    (False: only the ``prompt_cache_key`` is sent); ``breakpoint_field``: the explicit breakpoint
    field the model takes in a chat-completions body (one of ``BREAKPOINT_FIELDS``; None: the body
    carries only ``prompt_cache_key``)."""

    mode: Literal["auto"] = "auto"
    min_tokens: int | None = None
    ttl: CacheTTL = "5m"
    breakpoints: bool = True
    breakpoint_field: str | None = None

    def __post_init__(self) -> None:
        if self.mode != "auto":
            raise ValueError(f'CachePolicy.mode must be "auto", got {self.mode!r}')
        if self.min_tokens is not None and (isinstance(self.min_tokens, bool) or not isinstance(self.min_tokens, int) or self.min_tokens < 1):
            raise TypeError(f"CachePolicy.min_tokens must be a positive int or None, got {self.min_tokens!r}")
        if self.ttl not in CACHE_TTLS:
            raise ValueError(f"CachePolicy.ttl must be one of {', '.join(CACHE_TTLS)}, got {self.ttl!r}")
        if self.breakpoint_field is not None and self.breakpoint_field not in BREAKPOINT_FIELDS:
            raise ValueError(f"CachePolicy.breakpoint_field must be one of {', '.join(BREAKPOINT_FIELDS)} or None, got {self.breakpoint_field!r}")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"mode": self.mode, "min_tokens": self.min_tokens, "ttl": self.ttl, "breakpoints": self.breakpoints}
        if self.breakpoint_field is not None:  # only when named: a policy without it is what it always was
            out["breakpoint_field"] = self.breakpoint_field
        return out


@dataclass(frozen=True, slots=True)
class SystemBlock:
    """One block of the sent system text: its span in the text and whether it is static by construction."""

    id: str
    start: int
    end: int
    static: bool


@dataclass(frozen=True, slots=True)
class Boundary:
    """A place a breakpoint could go: after the tools, or ``offset`` characters into the system text."""

    after: Literal["tools", "system"]
    offset: int
    tokens: int  # tokens of the request prefix up to here, in cache order
    label: str  # what ends here, for the warnings


def cache_key(tools: Sequence[dict[str, Any]], static_prefix: str) -> str:
    """A stable name of the static prefix (the tools and the static system text): ``crux-`` and 24 hex digits."""
    digest = hashlib.sha256(json.dumps(list(tools), ensure_ascii=False, sort_keys=True).encode("utf-8"))
    digest.update(b"\x00" + static_prefix.encode("utf-8"))
    return "crux-" + digest.hexdigest()[:24]


def static_prefix_end(system: str, blocks: Sequence[SystemBlock]) -> int:
    """Characters of ``system`` before the first block that is not static (the separator before it
    included, so the two parts joined are the system text exactly); all of it when every block is."""
    for block in blocks:
        if not block.static:
            return block.start
    return len(system) if blocks else 0


def boundaries(system: str, blocks: Sequence[SystemBlock], tool_tokens: int, counter: TokenCounter) -> list[Boundary]:
    """The candidate boundaries of one request in cache order: the tools, the end of the static
    prefix, the end of the system text (each once; an empty one left out)."""
    out: list[Boundary] = []
    if tool_tokens:
        out.append(Boundary("tools", 0, tool_tokens, "the tools"))
    static_end = static_prefix_end(system, blocks)
    if static_end:
        out.append(Boundary("system", static_end, tool_tokens + counter.count(system[:static_end]), "the static prefix"))
    if system and len(system) > static_end:
        out.append(Boundary("system", len(system), tool_tokens + counter.count(system), "the per-input prefix"))
    return out


def choose(candidates: Sequence[Boundary], policy: CachePolicy) -> tuple[list[Boundary], list[str]]:
    """The boundaries that get a breakpoint, and why any other does not (one sentence each)."""
    warnings: list[str] = []
    minimum = policy.min_tokens
    if minimum is None:
        warnings.append("cache: this model's minimum cacheable prefix is unknown (set cache_min_tokens on its profile); "
                        "breakpoints are placed without checking it")
        kept = list(candidates)
    else:
        kept = []
        for boundary in candidates:
            if boundary.tokens >= minimum:
                kept.append(boundary)
            elif boundary.label == "the static prefix":
                warnings.append(f"not cached: static prefix {boundary.tokens:,} tokens, under this model's {minimum:,} minimum")
        if not kept and candidates and not any(w.startswith("not cached") for w in warnings):
            longest = candidates[-1]
            warnings.append(f"not cached: {longest.label} {longest.tokens:,} tokens, under this model's {minimum:,} minimum")
    if len(kept) > MAX_BREAKPOINTS:
        # A read at a later breakpoint covers every earlier one: keep the longest prefixes.
        left = kept[: len(kept) - MAX_BREAKPOINTS]
        kept = kept[len(kept) - MAX_BREAKPOINTS :]
        warnings.append(f"cache: {len(left) + MAX_BREAKPOINTS} places for a breakpoint, at most {MAX_BREAKPOINTS} are allowed; "
                        f"left out the shortest: {', '.join(b.label for b in left)}")
    return kept, warnings


def place_breakpoints(
    system: str, blocks: Sequence[SystemBlock], tools: Sequence[dict[str, Any]], tool_tokens: int,
    policy: CachePolicy, counter: TokenCounter,
) -> tuple[dict[str, Any], list[str]]:
    """The cache plan of one request (``ModelRequest.cache``) and the warnings that explain it."""
    key = cache_key(tools, system[: static_prefix_end(system, blocks)])
    candidates = boundaries(system, blocks, tool_tokens, counter)
    kept, warnings = choose(candidates, policy)
    if not policy.breakpoints:
        if kept:
            warnings.append("cache: this model takes no breakpoints; only prompt_cache_key is sent")
        kept = []
    breakpoints = [{"after": b.after, "offset": b.offset, "tokens": b.tokens, "ttl": policy.ttl} for b in kept]
    plan: dict[str, Any] = {"breakpoints": breakpoints, "key": key}
    if policy.breakpoint_field is not None and policy.breakpoints:
        plan["breakpoint_field"] = policy.breakpoint_field  # to_openai marks the system breakpoints with it
    return plan, warnings


__all__ = ["BREAKPOINT_FIELDS", "CACHE_TTLS", "MAX_BREAKPOINTS", "Boundary", "CachePolicy", "SystemBlock", "boundaries", "cache_key", "choose", "place_breakpoints", "static_prefix_end"]
