"""Read-only helpers over the session's report dicts (no Textual here, so they are easy to test).

The TUI never re-derives what the core decided: these functions only find and format values.
"""

from __future__ import annotations

from collections.abc import Sequence

import math
from dataclasses import dataclass

from ..core.plan.rungs import RUNG_TERMS

# Re-exported: the TUI reads reports through this module.
from ..inspector.api import default_budget_target as default_budget_target
from ..inspector.api import find_prompt as find_prompt
from ..inspector.api import is_stale as is_stale
from ..inspector.report_types import ExampleReport, PromptReport

# The one colour of each rung in the TUI (Request and Planning tabs, the run detail), from the rung
# vocabulary (``RungTerm.tui_colour``). A rung this version does not know is shown in the default colour.
RUNG_STYLE = {term.name: term.tui_colour for term in RUNG_TERMS.values()}

# The TUI's colour of each status tone (``crux_devtools/statuses.py`` names the states and their words).
TONE_STYLE = {"fits": "green", "over": "bold red", "error": "bold red", "unchecked": "yellow", "stale": "yellow"}

BUDGET_STEP = 0.10  # one ``+``/``-`` press moves the budget by 10% of the current total


@dataclass(frozen=True, slots=True)
class SourceLocation:
    """Where a part is defined: a file (relative to the project, as reported) and a line."""

    file: str
    line: int | None
    label: str
    exact: bool  # False: the part's own location is unknown, this is its prompt's

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


def example_names(prompt: PromptReport) -> list[str]:
    return [e["name"] for e in prompt["examples"]]


def find_example(prompt: PromptReport, name: str | None) -> ExampleReport | None:
    """The named example, or the first one when ``name`` is unknown (examples come and go on reload)."""
    examples = prompt["examples"]
    return next((e for e in examples if e["name"] == name), examples[0] if examples else None)


def next_example(prompt: PromptReport, current: str | None) -> str | None:
    names = example_names(prompt)
    if not names:
        return None
    if current not in names:
        return names[0]
    return names[(names.index(current) + 1) % len(names)]


def budget_base(example: ExampleReport | None, budget: int | None, target: str = "system", prompt: PromptReport | None = None) -> int:
    """What a budget step is measured from: the budget in force; else, for the system text, its
    tokens, and for the request, the default input budget (or the planned request's limit)."""
    if budget is not None:
        return budget
    if target == "request":
        preview = example["preview"] if example is not None else None
        planned = (preview["max_input_tokens"] or preview["input_tokens"]) if preview is not None else None
        default = (prompt["default_budget"] if prompt is not None else None) or planned
        return int(default or 0)
    inspection = example["inspection"] if example is not None else None
    if inspection is None:
        return 0
    return int(inspection["system_tokens"] or inspection["total_tokens"])


def step_budget(
    example: ExampleReport | None, budget: int | None, direction: int, target: str = "system", prompt: PromptReport | None = None
) -> int | None:
    """Raise (``direction=1``) or lower (``-1``) the budget by ``BUDGET_STEP`` of the current base."""
    base = budget_base(example, budget, target, prompt)
    if base <= 0:
        return budget
    step = max(1, math.ceil(base * BUDGET_STEP))
    return max(1, base + direction * step)


def status_style(key: str) -> tuple[str, str, str]:
    """``(mark, word, style)`` of a status key (or ``stale``): its glyph and word from the one
    vocabulary, and the TUI colour of its tone."""
    from ..statuses import term

    found = term(key)
    return found.mark, found.word, TONE_STYLE.get(found.tone, "bold red")


def status_badge(key: str) -> tuple[str, str]:
    """``("✓ fits", "bold green")``: a status as the TUI writes it beside a figure, and its style."""
    mark, word, style = status_style(key)
    return f"{mark} {word}", style if style.startswith("bold") else f"bold {style}"


def prompt_status(prompt: PromptReport, stale: bool) -> str:
    """The prompt's status key (``statuses.py``), or ``stale`` (its module failed to load: its last good report).

    ``stale`` is the report's flag, used when the prompt does not say (``PromptReport["stale"]``).
    """
    if prompt.get("stale", stale):
        return "stale"
    return prompt["status"]


def part_statuses(example: ExampleReport | None) -> dict[str, str]:
    """Context id -> ``active`` / ``excluded`` / ``dropped`` for one example's inspection."""
    inspection = example["inspection"] if example is not None else None
    parts = inspection["parts"] if inspection is not None else []
    return {p["source"]: p["status"] for p in parts if p["source"] != "<prompt>"}


def source_location(prompt: PromptReport, part: str | None) -> SourceLocation | None:
    """Where ``part`` (a context id, or ``None``/``"<prompt>"`` for the prompt) is defined.

    Contexts carry their own ``file``/``line`` when the engine knows them; otherwise the prompt's
    location is returned and marked inexact, so the user still lands in the right file.
    """
    if part and part != "<prompt>":
        for ctx in prompt["contexts"]:
            if ctx["id"] == part and ctx["file"]:
                return SourceLocation(ctx["file"], ctx["line"], f"context {part}", True)
    if not prompt["file"]:
        return None
    label = f"{prompt['kind']} {prompt['id']}"
    exact = not part or part == "<prompt>"
    return SourceLocation(prompt["file"], prompt["line"], label, exact)
