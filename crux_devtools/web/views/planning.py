"""View-models for the planning layer (``RequestPreview.to_dict()``) and agent runs (``Step.to_dict()``).

The rung and rejection-reason words and their order come from ``core.plan.rungs``; the limits panel's
rows from ``inspector.limits`` (the TUI renders the same rows). A plan is a ``PreviewDict`` the
worker boundary checked (``inspector/transport/wire.py``), so its fields are indexed. A run is read from the
runs store, where runs recorded by older versions may lack newer fields: its steps are read with
``.get`` so a missing key hides one line, never the page.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ...core.plan.rungs import description, label, rung_rank
from ...inspector.features.shown.limits import LimitRow, limit_rows
from ...inspector.report_types import ExampleReport, PlanErrorDict, PlanModel, PreviewDict, SummaryState
from ...shapes import AdaptationDict, CandidateDict


@dataclass(frozen=True, slots=True)
class SummaryAction:
    """How an unprepared summary can be prepared from the page: ``needs_model`` asks for a second,
    explicit action, since a hierarchical summary calls the model."""

    contributor: str
    strategy: str
    needs_model: bool
    model: str | None


@dataclass(frozen=True, slots=True)
class CandidateRow:
    representation: str
    available: bool
    selected: bool
    input_tokens: int | None  # None: not measured (an unprepared summary): shown as "not prepared"
    rejection_reason: str | None
    variant: str | None = None
    tokens: int | None = None
    detail: str | None = None
    prepare: SummaryAction | None = None

    @property
    def label(self) -> str:
        return label(self.representation)

    @property
    def description(self) -> str:
        return description(self.representation)

    @property
    def reason_label(self) -> str:
        return label(self.rejection_reason)

    @property
    def reason_title(self) -> str:
        """The planner's own detail when it gave one, else what the reason means."""
        return self.detail or description(self.rejection_reason)


@dataclass(frozen=True, slots=True)
class ProfileView:
    """Which model the plan was made for and how it was chosen (``PromptReport["plan_model"]``);
    the numbers of its capacity profile are rows of the limits panel."""

    name: str | None
    label: str
    hint: str | None


@dataclass(frozen=True, slots=True)
class ContributorPlan:
    contributor: str
    rows: list[CandidateRow]


@dataclass
class PlanningView:
    available: bool
    reason: str = ""
    status: str | None = None
    limits: list[LimitRow] = field(default_factory=list)
    contributors: list[ContributorPlan] = field(default_factory=list)
    adaptations: list[AdaptationDict] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    error: PlanErrorDict | None = None
    profile: ProfileView | None = None


def profile_view(plan_model: PlanModel | None, preview: PreviewDict) -> ProfileView | None:
    if plan_model is None:
        return None
    return ProfileView(name=plan_model["name"] or preview["model"], label=plan_model["label"], hint=plan_model["hint"])


def planning_view(example_report: ExampleReport | None, plan_model: PlanModel | None = None) -> PlanningView:
    if example_report is None:
        return PlanningView(available=False, reason="planning not available")
    preview = example_report["preview"]
    error = example_report["preview_error"]
    if preview is None:
        return PlanningView(available=False, reason="planning not available", error=error)
    return PlanningView(
        available=True,
        status=preview["status"],
        limits=limit_rows(preview, plan_model),
        contributors=candidate_groups(preview["candidates"], example_report["summaries"]),
        adaptations=list(preview["adaptations"]),
        warnings=list(preview["warnings"]),
        error=error,
        profile=profile_view(plan_model, preview),
    )


def candidate_groups(candidates: list[CandidateDict], summaries: list[SummaryState]) -> list[ContributorPlan]:
    """The planner's candidates by contributor, rungs in ladder order; an unprepared summary rung
    carries the action that prepares it."""
    by_contributor = {s["contributor"]: s for s in summaries}
    groups: dict[str, list[CandidateRow]] = {}
    for c in candidates:
        contributor, rung = c["contributor"], c["representation"]
        state = by_contributor.get(contributor) if rung == "summary" and c["rejection_reason"] == "unprepared" else None
        if state is not None and state.get("state") == "cannot-fit":
            state = None  # preparing it cannot make the request fit: nothing to offer
        action = SummaryAction(contributor, state["strategy"], state["needs_model"], state["model"]) if state is not None else None
        groups.setdefault(contributor, []).append(
            CandidateRow(
                representation=rung, available=c["available"], selected=c["selected"], input_tokens=c["input_tokens"],
                rejection_reason=c["rejection_reason"], variant=c["variant"], tokens=c["tokens"], detail=c["detail"], prepare=action,
            )
        )
    return [ContributorPlan(name, sorted(rows, key=lambda r: rung_rank(r.representation))) for name, rows in groups.items()]


@dataclass(frozen=True, slots=True)
class ToolCallView:
    name: str
    arguments: str
    output: str | None
    model_output: str | None


@dataclass(frozen=True, slots=True)
class StepView:
    index: int
    receipt: dict[str, Any]
    response_text: str | None
    calls: list[ToolCallView]
    offloads: list[dict[str, Any]]
    adaptations: list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class RunView:
    text: str | None
    error: Any
    steps: list[StepView]


def pretty(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def shown_to_model(result: dict[str, Any]) -> str | None:
    """What the model saw, when it differs from the canonical output (an offload preview, a cut)."""
    if "model_output" not in result:
        return None
    seen = result["model_output"]
    if isinstance(seen, str) and not isinstance(result.get("output"), str):
        try:
            if json.loads(seen) == result.get("output"):
                return None
        except json.JSONDecodeError:
            pass
    return None if seen == result.get("output") else pretty(seen)


def run_view(result: dict[str, Any]) -> RunView:
    steps: list[StepView] = []
    for i, step in enumerate(result.get("steps") or []):
        if not isinstance(step, dict):
            continue
        calls_raw = [c for c in step.get("tool_calls") or [] if isinstance(c, dict)]
        results = [r for r in step.get("tool_results") or [] if isinstance(r, dict)]
        by_id = {r.get("call_id"): r for r in results if r.get("call_id")}
        calls = []
        for j, call in enumerate(calls_raw):
            res = by_id.get(call.get("id")) or (results[j] if j < len(results) else {})
            calls.append(
                ToolCallView(
                    name=str(call.get("name", res.get("name", "?"))),
                    arguments=pretty(call.get("arguments", {})),
                    output=pretty(res["output"]) if "output" in res else None,
                    model_output=shown_to_model(res),
                )
            )
        request = step.get("request")
        receipt: dict[str, Any] = request if isinstance(request, dict) else {}
        steps.append(
            StepView(
                index=int(step.get("index", i)),
                receipt=receipt,
                response_text=step.get("response_text"),
                calls=calls,
                offloads=[o for o in step.get("offloads") or [] if isinstance(o, dict)],
                adaptations=[a for a in receipt.get("adaptations") or [] if isinstance(a, dict)],
            )
        )
    return RunView(text=result.get("text"), error=result.get("error"), steps=steps)
