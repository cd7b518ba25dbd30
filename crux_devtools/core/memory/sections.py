"""Sections of an assembled memory block and how entry types map to them.

Sections fill in a fixed order, distilled knowledge first and raw history last, so that under a
token budget the least trustworthy material is the first to go.
"""

from __future__ import annotations

from collections.abc import Iterable

SECTION_ORDER: tuple[str, ...] = (
    "mental_models",
    "active_rules",
    "lessons",
    "archive_blocks",
    "handoffs",
    "feedback",
    "facts",
    "observations",
    "working_memory",
    "traces",
    "goals",
    "checkpoints",
    "logs",
    "other",
)

SECTION_TITLES: dict[str, str] = {
    "mental_models": "Mental Models",
    "active_rules": "Active Rules",
    "lessons": "Lessons",
    "archive_blocks": "Archive Blocks",
    "handoffs": "Handoffs",
    "feedback": "Feedback",
    "facts": "Facts",
    "observations": "Observations",
    "working_memory": "Current State",
    "traces": "Traces",
    "goals": "Goals",
    "checkpoints": "Checkpoints",
    "logs": "Logs",
    "other": "Other",
}

# Entry type -> section. Any other entry type is stored under "other".
ENTRY_TYPE_SECTIONS: dict[str, str] = {
    "mental_model": "mental_models",
    "rule": "active_rules",
    "lesson": "lessons",
    "archive": "archive_blocks",
    "handoff": "handoffs",
    "feedback": "feedback",
    "fact": "facts",
    "observation": "observations",
    "working_memory": "working_memory",
    "trace": "traces",
    "goal": "goals",
    "checkpoint": "checkpoints",
    "log": "logs",
    "other": "other",
}

SECTION_RANK: dict[str, int] = {name: rank for rank, name in enumerate(SECTION_ORDER)}


def section_for(entry_type: str) -> str:
    """The section an entry of ``entry_type`` is assembled into."""
    return ENTRY_TYPE_SECTIONS.get(entry_type, "other")


def check_sections(sections: Iterable[str] | None) -> tuple[str, ...] | None:
    """Validate section keys; an unknown key raises ``ValueError`` naming the valid ones."""
    if sections is None:
        return None
    if isinstance(sections, str):
        sections = [sections]
    out = []
    for key in sections:
        if key not in SECTION_RANK:
            raise ValueError(f"unknown memory section {key!r}; valid sections: {', '.join(SECTION_ORDER)}")
        out.append(key)
    return tuple(out)


def check_entry_types(entry_types: Iterable[str] | None) -> tuple[str, ...] | None:
    """Validate an ``entry_types`` filter. ``"other"`` selects every entry of a custom type."""
    if entry_types is None:
        return None
    if isinstance(entry_types, str):
        entry_types = [entry_types]
    out = []
    for value in entry_types:
        if value not in ENTRY_TYPE_SECTIONS:
            raise ValueError(
                f"unknown entry type {value!r}; valid entry types: {', '.join(ENTRY_TYPE_SECTIONS)} "
                "(entries of any other type are stored as 'other')"
            )
        out.append(value)
    return tuple(out)


def render_line(content: str) -> str:
    """How one entry appears in an assembled block (continuation lines indented under the bullet)."""
    return "- " + content.strip().replace("\n", "\n  ")
