"""The argument checks of the memory store, written once and used by every public method.

A wrong type raises ``TypeError``, a value out of range ``ValueError``; each message names the
argument, says what is allowed and shows what was given. Values are checked before they are written,
so nothing is stored that a later read could not return (a timestamp in milliseconds, for one, would
make every read of its session fail).
"""

from __future__ import annotations

import math
import numbers
from typing import Any

# 9999-12-31T23:59:59Z: the last second a datetime (and so Evidence.created_at) can show.
MAX_CREATED_AT = 253_402_300_799
MAX_LIMIT = 2**63 - 1  # SQLite's LIMIT is a signed 64-bit integer


def _given(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def check_text(name: str, value: Any) -> str:
    """A required, non-empty string argument (``session_id``, ``entry_id``)."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a non-empty string, got {type(value).__name__} {_given(value)}")
    if not value:
        raise ValueError(f"{name} must be a non-empty string, got ''")
    return value


def check_session(session_id: Any) -> str:
    """A session id: a non-empty string."""
    return check_text("session_id", session_id)


def check_query(query: Any) -> str | None:
    """A query: a string, or ``None`` for no query."""
    if query is not None and not isinstance(query, str):
        raise TypeError(f"query must be a string or None, got {type(query).__name__} {_given(query)}")
    return query


def check_limit(limit: Any, name: str = "limit") -> int:
    """How many entries to return: a positive int."""
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise TypeError(f"{name} must be a positive int, got {type(limit).__name__} {_given(limit)}")
    if not 0 < limit <= MAX_LIMIT:
        raise ValueError(f"{name} must be a positive int (1 to {MAX_LIMIT}), got {limit!r}")
    return limit


def check_lane(lane: Any) -> str | None:
    """A lane: a string, or ``None`` for every lane."""
    if lane is not None and not isinstance(lane, str):
        raise TypeError(f"lane must be a string or None, got {type(lane).__name__} {_given(lane)}")
    return lane


def check_content(content: Any) -> str:
    """An entry's text: a string with something besides whitespace."""
    if not isinstance(content, str):
        raise TypeError(f"memory entry content must be a non-empty string, got {type(content).__name__} {_given(content)}")
    if not content.strip():
        raise ValueError(f"memory entry content must be a non-empty string, got {_given(content)}")
    return content


def check_entry_type(entry_type: Any) -> str:
    """An entry type: any non-empty string (unknown types are stored under ``other``)."""
    if not isinstance(entry_type, str):
        raise TypeError(f"entry_type must be a non-empty string, got {type(entry_type).__name__} {_given(entry_type)}")
    if not entry_type.strip():
        raise ValueError(f"entry_type must be a non-empty string, got {_given(entry_type)}")
    return entry_type


def _real(name: str, value: Any, allowed: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be {allowed}, got {type(value).__name__} {_given(value)}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    return number


def check_importance(importance: Any) -> float:
    """How much an entry matters: a number from 0.0 to 1.0."""
    allowed = "a number from 0.0 to 1.0"
    number = _real("importance", importance, allowed)
    if not 0.0 <= number <= 1.0:
        raise ValueError(f"importance must be {allowed}, got {importance!r}")
    return number


def check_created_at(created_at: Any) -> float:
    """When an entry was made: seconds since 1970-01-01 UTC, from 0 up to the end of year 9999."""
    allowed = f"seconds since 1970-01-01 UTC, a finite number from 0 to {MAX_CREATED_AT} (the end of year 9999)"
    number = _real("created_at", created_at, allowed)
    if 0 <= number <= MAX_CREATED_AT:
        return number
    hint = ""
    if MAX_CREATED_AT < number <= MAX_CREATED_AT * 1000:
        hint = "; it looks like milliseconds: divide by 1000"
    raise ValueError(f"created_at must be {allowed}, got {created_at!r}{hint}")
