"""What the prompt view shows, as frozen values (no Textual here).

``Choice`` is what the user chose for one prompt (its example, budget, what the budget limits, or a
run's input loaded in its place); the app keeps one per prompt, so that going back to a prompt shows
it as it was left. ``Selection`` is the prompt on screen, its choice and the part highlighted in it.
Both change by ``dataclasses.replace``: a new value, never an edit in place.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any


@dataclass(frozen=True, slots=True)
class CustomInput:
    """A recorded run's input shown in the prompt's examples' place (from a run's detail)."""

    input: dict[str, Any]
    label: str  # which run and step it comes from
    messages: Any = None  # the step's messages that go with the input


@dataclass(frozen=True, slots=True)
class Choice:
    """One prompt's example, budget and budget target (``None``: the prompt's own default)."""

    example: str | None = None
    budget: int | None = None
    target: str | None = None  # "system" or "request", once the user switched it with ``b``
    custom: CustomInput | None = None


@dataclass(frozen=True, slots=True)
class Selection:
    """The prompt on screen, what was chosen for it, and the part (a context's id) highlighted."""

    prompt_id: str | None = None
    choice: Choice = Choice()
    part: str | None = None

    @property
    def shows(self) -> tuple[str | None, Choice]:
        """What decides the example on screen (the highlighted part does not)."""
        return self.prompt_id, self.choice

    def with_choice(self, **changes: Any) -> Selection:
        return replace(self, choice=replace(self.choice, **changes))
