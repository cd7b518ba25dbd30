"""An example input that carries expectations (``example(...)`` of ``plan/expectations.py`` builds it).

It lives with the compose stage because ``prompt(examples=...)`` reads it; what the expectations
mean is the plan stage's business, so here ``expect`` is carried, not read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Example:
    """An example input with expectations (``prompt(examples={"name": example({...}, expect=...)})``)."""

    input: dict[str, Any]
    expect: Any
