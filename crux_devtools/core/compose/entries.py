"""The base class the resolver knows ladders by, kept apart so the resolver does not import planning."""

from __future__ import annotations

from typing import Any


class Ladder:
    """A representation ladder over one canonical source (see ``ladders.py``).

    To ``resolve``/``inspect`` a ladder is its canonical source at full fidelity; only the request
    planner chooses other rungs.
    """

    __slots__ = ()

    def canonical_sources(self) -> tuple[Any, ...]:
        """The contexts whose full text is the ladder's ``"full"`` rung, in use order."""
        raise NotImplementedError

    def check_usable(self, owner: str) -> None:
        """Raise ``INVALID_COMPOSITION`` if this object may not appear in ``use``."""
