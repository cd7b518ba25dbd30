"""The limits panel: the numbers a plan was made against, as the rows every front end shows.

``LIMITS`` is the one list of the panel's fields, in display order, each with its label and a hint
in words; ``limit_rows`` turns a plan (``RequestPreview.to_dict()``, the report's ``preview``) into
``(label, value, hint)`` rows with the values already written out. The web page's Planning card and
the TUI's Planning tab render these rows and nothing else, so both show the same fields, in the same
order, with the same values. A field the plan does not carry shows as ``"—"``, never as ``None``.

A new field is one line here (and, if the core does not produce it yet, in ``RequestPreview``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .sent import CAPACITY_SOURCES

MISSING = "—"


@dataclass(frozen=True, slots=True)
class LimitRow:
    """One line of the limits panel. ``key`` is the preview field it shows (a stable hook for tests
    and CSS); ``value`` is written out (thousands separators, words for codes)."""

    key: str
    label: str
    value: str
    hint: str


def _number(preview: Mapping[str, Any], _plan_model: Mapping[str, Any], key: str) -> str:
    value = preview.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        return MISSING if value is None else str(value)
    return f"{value:,}"


def _text(preview: Mapping[str, Any], _plan_model: Mapping[str, Any], key: str) -> str:
    value = preview.get(key)
    return MISSING if value is None or value == "" else str(value)


def _capacity(preview: Mapping[str, Any], plan_model: Mapping[str, Any], key: str) -> str:
    profile = plan_model.get("profile")
    if profile:  # a [tool.crux-devtools.models.NAME] table gave the capacity: name the line
        return f"{profile}"
    source = preview.get(key)
    return MISSING if not source else CAPACITY_SOURCES.get(str(source), str(source))


# (preview key, label, how to write the value, hint): the panel, top to bottom.
LIMITS: tuple[tuple[str, str, Callable[[Mapping[str, Any], Mapping[str, Any], str], str], str], ...] = (
    ("context_window", "context window", _number, "the model's whole context window"),
    ("output_reserve", "output reserve", _number, "kept free for the answer (max_tokens or the profile's)"),
    ("safety_margin", "safety margin", _number, "kept for counting error: 0/5/10% of the window by confidence"),
    ("overhead", "overhead", _number, "the provider's own tokens per request"),
    ("max_input_tokens", "max input", _number, "the hard limit: a request over it is never sent"),
    ("optimize_at", "optimize_at", _number, "the planner adapts rungs to stay under it when it can"),
    ("input_tokens", "input", _number, "this request's input tokens (over the limit: the cheapest's)"),
    ("tier", "fits under", _text, "the limit the chosen rungs fit: optimize_at, else max"),
    ("measurement", "counting", _text, "exact: the model's own tokenizer; estimated: cl100k_base"),
    ("counting_confidence", "confidence", _text, "the profile's counting confidence (it sets the margin)"),
    ("capacity_source", "capacity from", _capacity, "where the window and the reserve came from"),
)


def limit_rows(preview: Mapping[str, Any], plan_model: Mapping[str, Any] | None = None) -> list[LimitRow]:
    """The limits panel of one plan, in ``LIMITS`` order. ``plan_model`` is the prompt report's
    ``plan_model`` (it names the pyproject.toml line a capacity came from)."""
    model = plan_model if isinstance(plan_model, dict) else {}
    return [LimitRow(key, label, write(preview, model, key), hint) for key, label, write, hint in LIMITS]
