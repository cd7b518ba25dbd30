"""The report contract of ``api.py``'s docstring, as types: what the worker produces, the session
holds and both front ends read.

A report stays plain JSON data at runtime (it crosses the worker boundary and is stored in the
history file), so these are ``TypedDict``s: mypy checks every reader against them, and
``tests/inspector/test_report_contract.py`` validates real reports against them (extra keys forbidden), so the
types cannot drift from what is produced. Errors are built by ``errors.LoadError`` (one
constructor per kind of fault) and reach a report as ``LoadError.to_dict()``.

Two kinds of error, each in one place:

- ``LoadErrorDict``: a fault in user code or in the worker (an exception, a timeout, a crash, a bad
  config): ``report["errors"]``, ``ExampleReport["error"]``, a failed run's ``error``.
- ``PlanErrorDict``: the planner refused the request (``RequestCompositionError.to_dict()``, a
  ``code`` such as ``REQUEST_TOO_LARGE``): ``ExampleReport["preview_error"]`` only. Any other
  exception raised while planning is a fault of user code, so it is the example's ``error``.

Values that the core defines (``Inspection.to_dict()``, ``RequestPreview.to_dict()``) are
``dict[str, Any]`` here: their shape is the core's, checked in ``wire.py``.

No pydantic here: the session's process imports this module and must stay light.
"""

from __future__ import annotations

from typing import Any, Literal

from typing_extensions import NotRequired, TypedDict  # pydantic validates typing_extensions TypedDicts on 3.11

from ..statuses import StatusKey

Status = StatusKey  # the states and their words: statuses.py


class LoadErrorDict(TypedDict):
    """A fault in user code or in the worker; ``file`` is relative to the project."""

    file: str | None
    line: int | None
    type: str
    message: str
    traceback: str


class DiagnosticDict(TypedDict):
    id: str
    code: str
    contributor: str | None
    tokens: int | None
    message: str


class PlanErrorDict(TypedDict):
    """The planner's refusal: ``RequestCompositionError.to_dict()``."""

    code: str
    message: str
    diagnostics: list[DiagnosticDict]
    request_id: str | None


SummaryStateName = Literal["prepared", "prepared-here", "generate-prepares", "not-prepared"]


class SummaryState(TypedDict):
    contributor: str
    strategy: str
    needs_model: bool
    model: str | None
    prepared: bool
    # "prepared": in the project's store; "prepared-here": extractive, prepared by the inspector for
    # this view (no model) as generate prepares it; "generate-prepares": needs a model, and generate
    # prepares it before sending (the request shown is the fallback sent if that fails);
    # "not-prepared": generate would not prepare it (on_miss "fail" or "skip", or not needed).
    state: NotRequired[SummaryStateName]
    note: NotRequired[str | None]  # one sentence saying so, for every view


class ExampleReport(TypedDict):
    name: str
    input: dict[str, Any]
    error: LoadErrorDict | None  # validation, callback or planner-callback failure of this example
    inspection: dict[str, Any] | None  # Inspection.to_dict()
    preview: dict[str, Any] | None  # RequestPreview.to_dict()
    preview_error: PlanErrorDict | None  # the planner refused the request
    truncated: bool
    status: Status
    summaries: list[SummaryState]


class ContextEntry(TypedDict):
    id: str
    kind: str
    owner: str | None
    conditional: bool
    priority: int
    tools: list[str]
    ladder: str | None
    file: str | None
    line: int | None


class PlanModel(TypedDict):
    name: str | None
    source: Literal["prompt", "agent", "project", "none"]
    label: str
    profile: str | None
    hint: str | None


class PromptReport(TypedDict):
    id: str
    kind: Literal["prompt", "agent"]
    module: str
    file: str
    line: int | None
    input_schema: dict[str, Any]
    contexts: list[ContextEntry]
    tools: list[str]
    default_budget: int | None
    status: Status
    total_tokens: int
    has_model: bool
    model_kind: Literal["scripted", "real"] | None
    plan_model: PlanModel
    examples: list[ExampleReport]
    note: str | None
    stale: NotRequired[bool]  # set by the session on every prompt it holds (``is_stale`` reads it)


class Report(TypedDict):
    version: int
    project: str
    generated_at: str
    duration_ms: float
    stale: bool
    errors: list[LoadErrorDict]
    prompts: list[PromptReport]
    hash: str
    notice: str | None
    modules_found: bool
    load: Literal["full", "incremental"]
    reevaluated: list[str]
    verified: bool  # a fresh load of every module, with no change since it started, gave what is shown
    disagreements: int  # prompts (and the error list, as one) that this report's verification corrected
    imported_note: NotRequired[str | None]  # which files the worker imports and why (discovery.imported_note)


class PreparedSummary(TypedDict):
    contributor: str
    strategy: str
    tokens: int | None


class SkippedSummary(TypedDict):
    contributor: str
    reason: str
    needs_model: bool
    model: str | None


class PrepareResult(TypedDict):
    """What ``ProjectSession.prepare_summaries`` returns."""

    prepared: list[PreparedSummary]
    skipped: list[SkippedSummary]
    error: LoadErrorDict | None


__all__ = [
    "ContextEntry",
    "DiagnosticDict",
    "ExampleReport",
    "LoadErrorDict",
    "PlanErrorDict",
    "PlanModel",
    "PrepareResult",
    "PromptReport",
    "Report",
    "Status",
    "SkippedSummary",
    "PreparedSummary",
    "SummaryState",
]
