"""What the worker plans every preview against: the project's model profiles and its summary store.

``[tool.crux-devtools] default_model`` and ``[tool.crux-devtools.models.NAME]`` are read and checked
in the server (``discovery.read_model_config``) and reach the worker as plain data in the ``load``
message. Prepared summaries live in ``DIR/.crux/summaries.sqlite3``: every preview reads it, and
``prepare`` writes it. Runs only in the worker.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...core.plan.budget import ModelCapacityProfile, capacity_and_source, model_name_of
from ...core.plan.cache_plan import CachePolicy
from ...core.plan.summaries import LayeredSummaryStore, SummaryStore
from .imports import Target
from ...shapes import ModelSource
from ..report_types import PlanModel


SUMMARY_FILE = "summaries.sqlite3"

_LABELS: dict[ModelSource, str] = {
    "agent": "the agent's model",
    "prompt": "the prompt's own model (prompt(..., model=...))",
    "project": "project default from pyproject.toml (default_model)",
    "none": "conservative 8k default: no model is named",
}
NAME_A_MODEL = (
    'Name the model it is used with: prompt(..., model="NAME"), or default_model = "NAME" under '
    "[tool.crux-devtools] in pyproject.toml, with a [tool.crux-devtools.models.NAME] table giving its "
    "context_window, default_output_reserve and counting_confidence."
)


def summary_store_path(root: Path) -> Path:
    return root / ".crux" / SUMMARY_FILE


@dataclass(slots=True)
class PlanningDefaults:
    """The project-level planning settings of one loaded project."""

    default_model: str | None = None
    default_model_line: int | None = None
    profiles: dict[str, ModelCapacityProfile] = field(default_factory=dict)
    profile_lines: dict[str, int | None] = field(default_factory=dict)
    # Previews read only this store: the project's file, or an empty private one until a summary is
    # prepared (never the store of a run in the worker: each run has its own).
    summary_store: SummaryStore = field(default_factory=SummaryStore)
    store_is_file: bool = False

    @classmethod
    def load(cls, root: Path, config: dict[str, Any] | None) -> PlanningDefaults:
        """From ``read_model_config``'s data (already checked); opens the summary store if it exists
        (a project nobody prepared a summary for gets no ``.crux`` folder from this)."""
        config = config or {}
        profiles: dict[str, ModelCapacityProfile] = {}
        lines: dict[str, int | None] = {}
        for name, p in (config.get("models") or {}).items():
            profiles[name] = ModelCapacityProfile(p["context_window"], p["default_output_reserve"], p["counting_confidence"], cache_policy(p))
            lines[name] = p.get("line")
        path = summary_store_path(root)
        defaults = cls(config.get("default_model"), config.get("default_model_line"), profiles, lines)
        if path.is_file():
            defaults.summary_store, defaults.store_is_file = SummaryStore(path), True
        return defaults

    def writable_store(self, root: Path) -> SummaryStore:
        """The project's summary store, created (with ``.crux/.gitignore``) when it is first written."""
        if not self.store_is_file:
            from ..session.history import state_dir

            state_dir(root)
            self.summary_store, self.store_is_file = SummaryStore(summary_store_path(root)), True
        return self.summary_store

    def resolve(self, name: str) -> ModelCapacityProfile | None:
        """The ``capacity_resolver`` of every preview: a profile named in pyproject.toml, or None."""
        return self.profiles.get(name)

    def planned_model(self, target: Target) -> tuple[ModelSource, Any]:
        """Where the model a target is planned against comes from, and the model."""
        agent_model = getattr(target.obj, "model", None) if target.kind == "agent" else None
        if agent_model is not None:
            return "agent", agent_model
        if target.prompt.model is not None:
            return "prompt", target.prompt.model
        if self.default_model is not None:
            return "project", self.default_model
        return "none", None

    def preview_kwargs(self, target: Target) -> dict[str, Any]:
        """``model=`` (only when the target names none), ``capacity_resolver=`` and ``summary_store=``
        (the project's store, under a fresh layer for the summaries this preview prepares)."""
        source, model = self.planned_model(target)
        # The summaries a preview prepares itself, as generate would before sending (extractive, no
        # model), go to a fresh in-memory layer: never to the project's file, never seen by another
        # preview (a ladder with on_miss="fail" must not find a summary another one prepared).
        store = LayeredSummaryStore(SummaryStore(), self.summary_store)
        kwargs: dict[str, Any] = {"capacity_resolver": self.resolve, "summary_store": store}
        if source == "project":
            kwargs["model"] = model
        return kwargs

    def plan_model(self, target: Target) -> PlanModel:
        """``PromptReport["plan_model"]``: which model, from where, and which profile gave its capacity."""
        source, model = self.planned_model(target)
        name = model_name_of(model)
        try:
            _profile, capacity = capacity_and_source(model, self.resolve)
        except TypeError:
            capacity = "conservative"  # the preview reports the fault itself
        profile = None
        if capacity == "resolver" and name in self.profiles:
            line = self.profile_lines.get(name)
            profile = f"pyproject.toml:{line}" if line else "pyproject.toml"
        label = _LABELS[source]
        if source == "project" and self.default_model_line:
            label += f" at pyproject.toml:{self.default_model_line}"
        hint = None
        if source == "none":
            hint = NAME_A_MODEL
        elif capacity == "conservative" and name is not None:
            hint = (
                f"No capacity profile for {name!r}, so the conservative 8k profile applies: add "
                f"[tool.crux-devtools.models.{name}] with context_window = N to pyproject.toml, or give the model a capacity."
            )
        if model is not None and name is None and isinstance(model, ModelCapacityProfile):
            label += ": a ModelCapacityProfile"
        return {"name": name, "source": source, "label": label, "profile": profile, "hint": hint}


def cache_policy(profile: dict[str, Any]) -> CachePolicy | None:
    """The cache placement a checked pyproject profile asks for (``cache = "auto"``), else None."""
    if profile.get("cache") != "auto":
        return None
    return CachePolicy("auto", profile.get("cache_min_tokens"), profile.get("cache_ttl", "5m"), profile.get("cache_breakpoints", True),
                       profile.get("cache_breakpoint_field"))
