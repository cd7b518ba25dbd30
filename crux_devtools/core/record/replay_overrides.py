"""What a replay of a recorded step changes (``replay.py``): standard library only, so the inspector's
web and TUI processes build and carry overrides without loading the planner."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..plan.budget import ModelCapacityProfile


@dataclass(frozen=True, slots=True)
class Overrides:
    """What a replay changes; empty, the step is planned exactly as recorded.

    ``max``/``optimize_at``: the input budget, merged over the recorded one; ``model``: a capacity
    profile's name, with ``profile`` the profile itself; ``rungs``: ``(contributor, rung)`` pairs to
    force; ``drop``: contexts to leave out.
    """

    max: int | None = None
    optimize_at: int | None = None
    model: str | None = None
    profile: ModelCapacityProfile | None = None
    rungs: tuple[tuple[str, str], ...] = ()
    drop: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return self.max is None and self.optimize_at is None and self.model is None and not self.rungs and not self.drop

    def to_dict(self) -> dict[str, Any]:
        return {"max": self.max, "optimize_at": self.optimize_at, "model": self.model, "rungs": dict(self.rungs), "drop": list(self.drop)}


__all__ = ["Overrides"]
