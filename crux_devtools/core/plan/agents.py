"""Agents: a prompt bound to a model, with a default input budget, output length and step limit.

An ``Agent`` is plain data: ``preview`` plans it and ``generate`` runs it (``requests.setup`` reads
its fields). This module imports neither the planner nor the runtime.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from .budget import InputBudget, check_max_tokens, coerce_input_budget
from ..compose.contexts import check_id
from ..compose.prompts import Prompt
from ..compose.sites import definition_site


@dataclass(frozen=True, slots=True, eq=False)
class Agent:
    """A prompt bound to a model, with default budget, output length and step limit."""

    id: str
    prompt: Prompt
    model: Any
    input_budget: InputBudget | None = None
    max_tokens: int | None = None
    max_steps: int = 8
    defined_at: tuple[str, int] | None = field(default=None, repr=False)  # (file, line) of the agent(...) call

    @property
    def examples(self) -> dict[str, dict[str, Any]] | None:
        return self.prompt.examples

    @property
    def input_model(self) -> type[BaseModel]:
        return self.prompt.input_model

    def __repr__(self) -> str:
        return f"<Agent {self.id!r} prompt={self.prompt.id!r}>"


def agent(id: str, *, prompt: Prompt, model: Any, input_budget: Any = None, max_tokens: int | None = None, max_steps: int = 8) -> Agent:
    """Bind ``prompt`` to ``model``. ``input_budget`` is an ``InputBudget`` or a dict."""
    check_id("agent", id)
    if not isinstance(prompt, Prompt):
        raise TypeError(f"agent {id!r}: prompt must be created with prompt(...), got {type(prompt).__name__}")
    if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1:
        raise TypeError(f"agent {id!r}: max_steps must be a positive int, got {max_steps!r}")
    return Agent(
        id=id, prompt=prompt, model=model, input_budget=coerce_input_budget(input_budget), max_tokens=check_max_tokens(max_tokens),
        max_steps=max_steps, defined_at=definition_site(),
    )


__all__ = ["Agent", "agent"]
