"""The cacheable prefix of one request: how many of its tokens a provider's prompt cache can reuse.

Providers cache the longest request prefix that matches an earlier request, in the order tools,
system, messages (``changes.segments``: the same pieces and owners the review's ``cache_prefix``
compares between two revisions). For one request there is no second one to compare with, so the
prefix ends at the first piece whose owner is not static: a context whose text may change with the
input, or the messages (the conversation). Which owners are static is the caller's to say
(``static``); everything else counts as changing.
"""

from __future__ import annotations

from collections.abc import Collection

from .changes import MESSAGES, Counter, RequestSnapshot, segments, tokens_before


def cacheable_prefix_tokens(snapshot: RequestSnapshot, static: Collection[str], counter: Counter | None = None) -> int | None:
    """Tokens of ``snapshot`` before its first piece whose owner is not in ``static`` (``"tools"``,
    ``"prompt"`` and context ids), counted as ``diff`` and ``cache`` count a prefix (the tools at
    the planner's count: ``changes.tokens_before``); None when nothing would be sent."""
    if not snapshot.sent:
        return None
    pieces = segments(snapshot)
    chars = 0
    for owner, text in pieces:
        if owner == MESSAGES or owner not in static:
            break
        chars += len(text)
    return tokens_before(snapshot, pieces, chars, counter) if chars else 0
