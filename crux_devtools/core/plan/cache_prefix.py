"""The cacheable prefix of requests: the one computation ``diff``, ``replay`` and ``cache`` share.

Providers cache the longest prefix of a request that matches an earlier request, in the order tools,
system, messages. Given each request as ``(owner, text)`` pieces in that order (``owner``: what
wrote the piece: ``"tools"``, a context id, ``"prompt"``, ``"messages"``), ``shared_prefix`` finds
how many characters every request shares from the start and which owner holds the first character
where they part ways, in each request. Standard library only: the server process reads it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

Pieces = Sequence[tuple[str, str]]


@dataclass(frozen=True, slots=True)
class SharedPrefix:
    """``chars``: characters all the requests share from their start; ``owners``: for each request,
    the owner of its first character past them (None: that request ends there); ``block_chars``: the
    shared characters cut back to the start of the first request's piece that holds the break (a
    provider caches whole blocks between breakpoints, never part of one)."""

    chars: int
    owners: tuple[str | None, ...]
    block_chars: int

    @property
    def equal(self) -> bool:
        return all(owner is None for owner in self.owners)


def owner_at(pieces: Pieces, index: int) -> str | None:
    """The owner of character ``index`` of the joined pieces (None past the end)."""
    position = 0
    for owner, text in pieces:
        position += len(text)
        if index < position:
            return owner
    return None


def piece_start(pieces: Pieces, index: int) -> int:
    """Where the piece holding character ``index`` starts (the end when past it)."""
    position = 0
    for _owner, text in pieces:
        if index < position + len(text):
            return position
        position += len(text)
    return position


def shared_prefix(requests: Sequence[Pieces]) -> SharedPrefix:
    """The prefix every request of ``requests`` shares (see ``SharedPrefix``)."""
    texts = ["".join(text for _, text in pieces) for pieces in requests]
    if not texts:
        return SharedPrefix(0, (), 0)
    limit = min(len(t) for t in texts)
    first = texts[0]
    common = 0
    while common < limit and all(t[common] == first[common] for t in texts[1:]):
        common += 1
    owners = tuple(owner_at(pieces, common) for pieces in requests)
    block = common if all(o is None for o in owners) else piece_start(requests[0], common)
    return SharedPrefix(common, owners, min(block, common))


def prefix_text(pieces: Pieces, chars: int) -> str:
    """The first ``chars`` characters of the joined pieces (what a counter is given)."""
    return "".join(text for _, text in pieces)[:chars]


def prefix_tokens(pieces: Pieces, chars: int, count: Callable[[str], int], tool_tokens: Sequence[int | None] = ()) -> int:
    """Tokens of the first ``chars`` characters of ``pieces``: the one count of a cacheable prefix.

    The leading ``"tools"`` pieces count what the planner counted for each schema
    (``tool_tokens[i]``, the receipt's ``tool_tokens``, the figure ``cache = "auto"`` places by), a
    whole schema or nothing: a tool cut partway caches none of it. A tool without a planner's count,
    and the rest of the prefix (system text, messages) as one text, are given to ``count``."""
    position = 0
    tokens = 0
    index = 0
    for owner, text in pieces:
        if owner != "tools" or position >= chars:
            break
        if position + len(text) > chars:
            return tokens
        known = tool_tokens[index] if index < len(tool_tokens) else None
        tokens += known if known is not None else count(text)
        position += len(text)
        index += 1
    rest = prefix_text(pieces, chars)[position:]
    return tokens + (count(rest) if rest else 0)


__all__ = ["Pieces", "SharedPrefix", "owner_at", "piece_start", "prefix_text", "prefix_tokens", "shared_prefix"]
