"""Every value that crosses the worker boundary, as one typed definition each.

A report, a preview, an inspection, a run summary and every worker answer are plain JSON data at
run time: they are made in the worker (by the core's ``to_dict()`` methods and the inspector's
``evaluate.py``), sent as JSON lines, held by the session and read by the web page, the TUI and the
CLI. Each shape is defined here once, as a ``TypedDict``:

- the core's ``to_dict()`` methods are annotated to return these types, so mypy checks the producer;
- ``inspector/transport/wire.py`` derives the check of each worker message from these types (``check``
  walks the annotations), so a message missing a field is refused at the boundary, naming the op,
  the path of the field and what was expected; requests to the worker (``PingRequest`` ...) are
  checked the same way, on both sides. Each op module (``inspector/worker/ops/``) names its
  ``Request`` and ``Answer`` among them: that table is where the check finds them;
- the readers index what a type says is always there (``d["field"]``) and use ``.get`` only for
  ``NotRequired`` keys.

A key marked ``NotRequired`` may be absent; a key typed ``X | None`` is always there and may be null.

It sits below every layer and imports nothing beyond the standard library and ``typing_extensions``
(pydantic, which tests validate real reports with, accepts only its ``TypedDict`` on Python 3.11):
the server process imports it without loading the core.
"""

from __future__ import annotations

from typing import Any, Literal, Union

from typing_extensions import NotRequired, TypedDict

from .statuses import StatusKey

Status = StatusKey  # the states and their words: statuses.py
PartStatus = Literal["active", "excluded", "dropped"]  # a part of the system text (core/compose/results.py)
ExpectationState = Literal["held", "failed", "invalid", "unplanned"]  # an expectation's verdict (core/plan/expectations.py)
ModelSource = Literal["prompt", "agent", "project", "none"]  # where a plan's model came from (inspector/worker/planning.py)


# -- errors ----------------------------------------------------------------------------------------
class LoadErrorDict(TypedDict):
    """A fault in user code or in the worker; ``file`` is relative to the project."""

    file: str | None
    line: int | None
    type: str
    message: str
    traceback: str


class DiagnosticDict(TypedDict):
    """``Diagnostic.to_dict()``: one finding behind a composition error (ids and counts only)."""

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


class ErrorInfoDict(TypedDict):
    """``ErrorInfo.to_dict()``: why a run or a step stopped."""

    type: str
    message: str
    traceback: str | None


# -- the resolver: Inspection.to_dict() ------------------------------------------------------------
class PartDict(TypedDict):
    """One block of the system text (``Part``)."""

    source: str
    kind: str
    text: str
    tokens: int
    status: PartStatus
    reason: str | None
    priority: int | None
    effective_priority: int | None
    owner: str | None
    detail: str | None
    tools: list[str]


class ExclusionDict(TypedDict):
    id: str
    reason: str
    detail: str


class DropDict(TypedDict):
    id: str
    priority: int
    tokens: int
    reason: Literal["budget", "parent-dropped"]


class InspectionDict(TypedDict):
    """Everything the resolver decided for one input (``Inspection``)."""

    prompt_id: str
    system: str
    prompt: str | None
    parts: list[PartDict]
    excluded_contexts: list[ExclusionDict]
    dropped_contexts: list[DropDict]
    tools: list[str]
    system_tokens: int
    prompt_tokens: int
    total_tokens: int
    token_budget: int | None
    fits: bool
    tool_sources: dict[str, str]
    unmatched: list[str]


# -- the planner: RequestPreview.to_dict(), Receipt.to_dict() ---------------------------------------
class AdaptationDict(TypedDict):
    """One contributor sent at a rung other than ``full``."""

    contributor: str
    representation: str
    full_tokens: int
    selected_tokens: int
    variant: str | None


class CandidateDict(TypedDict):
    """One rung of one ladder contributor as the planner considered it."""

    contributor: str
    representation: str
    available: bool
    selected: bool
    input_tokens: int | None
    rejection_reason: str | None
    variant: str | None
    tokens: int | None
    detail: str | None


class ContributionDict(TypedDict):
    """What one part of the request costs; ``span`` is ``[start, end]`` in the sent system text."""

    contributor: str
    kind: str
    representation: str
    tokens: int
    tools: list[str]
    span: list[int] | None
    variant: str | None
    handle: str | None


class ToolSchemaDict(TypedDict):
    """``Tool.to_dict()``: a tool as it is offered to a model."""

    name: str
    description: str
    parameters: dict[str, Any]


class CacheBreakpointDict(TypedDict):
    """One planned prompt-cache breakpoint: after the tools, or ``offset`` characters into the system text."""

    after: Literal["tools", "system"]
    offset: int
    tokens: int  # tokens of the request prefix up to the breakpoint (tools, then system)
    ttl: Literal["5m", "1h"]


class CachePlanDict(TypedDict):
    """``ModelRequest.cache``: where the breakpoints go and the stable key of the static prefix."""

    breakpoints: list[CacheBreakpointDict]
    key: str


class SentRequestDict(TypedDict):
    """``ModelRequest.to_dict()``: the literal request; messages are OpenAI-format chat messages."""

    system: str
    messages: list[dict[str, Any]]
    tools: list[ToolSchemaDict]
    max_tokens: int | None
    cache: NotRequired[CachePlanDict]  # only when the model's profile says cache = "auto"


class PreviewDict(TypedDict):
    """One request planned without calling a model (``RequestPreview``); ``sent`` is None over the limit."""

    status: Literal["fits", "over-limit"]
    model: str | None
    input_tokens: int
    max_input_tokens: int
    optimize_at: int
    adaptations: list[AdaptationDict]
    candidates: list[CandidateDict]
    tools: list[str]
    warnings: list[str]
    measurement: str
    context_window: int
    output_reserve: int
    safety_margin: int
    overhead: int
    counting_confidence: str
    contributions: list[ContributionDict]
    breakdown: list[ContributionDict]
    tier: str | None
    error_code: str | None
    diagnostics: list[DiagnosticDict]
    sent: SentRequestDict | None
    token_budget: int | None
    dropped: list[DropDict]
    tool_tokens: dict[str, int]
    capacity_source: str


class ReceiptDict(TypedDict):
    """The planning record of one provider call (``Receipt``, a recorded step's ``request``)."""

    id: str
    model: str | None
    input_tokens: int
    max_input_tokens: int
    optimize_at: int
    measurement: str
    adaptations: list[AdaptationDict]
    warnings: list[str]
    epoch: int
    previous_request_id: str | None
    candidates: list[CandidateDict]
    contributions: list[ContributionDict]
    tools: list[str]
    tier: str
    token_budget: int | None
    dropped: list[DropDict]
    tool_tokens: dict[str, int]
    cache: NotRequired[CachePlanDict]  # only when the model's profile says cache = "auto"


# -- the report: what the worker builds per prompt and example ------------------------------------
SummaryStateName = Literal["prepared", "prepared-here", "generate-prepares", "not-prepared", "cannot-fit"]


class SummaryState(TypedDict):
    contributor: str
    strategy: str
    needs_model: bool
    model: str | None
    prepared: bool
    # "prepared": in the project's store; "prepared-here": extractive, prepared by the inspector for
    # this view (no model) as generate prepares it; "generate-prepares": needs a model, and generate
    # prepares it before sending (the request shown is the fallback sent if that fails);
    # "not-prepared": generate would not prepare it (on_miss "fail" or "skip", or not needed);
    # "cannot-fit": not prepared, and preparing it cannot make the request fit (REQUEST_TOO_LARGE:
    # even a summary of no tokens leaves it over max), so no view suggests preparing it.
    state: NotRequired[SummaryStateName]
    note: NotRequired[str | None]  # one sentence saying so, for every view


class ExpectationResultDict(TypedDict):
    """``ExpectationResult.to_dict()``: one expectation of an example, evaluated against its plan.

    ``state``: ``held``, ``failed`` (``held`` says what held instead, ``reason`` the planner's why),
    ``invalid`` (it names a context, contributor, rung or tool the prompt does not have) or
    ``unplanned`` (the example did not plan). ``file`` and ``line``: where it was written."""

    expect: str
    kind: str
    file: str | None
    line: int | None
    state: ExpectationState
    held: str | None
    reason: str | None


class ExampleReport(TypedDict):
    name: str
    input: dict[str, Any]
    error: LoadErrorDict | None  # validation, callback or planner-callback failure of this example
    inspection: InspectionDict | None
    preview: PreviewDict | None
    preview_error: PlanErrorDict | None  # the planner refused the request
    truncated: bool
    status: Status
    summaries: list[SummaryState]
    expectations: NotRequired[list[ExpectationResultDict]]  # only on an example written with example(..., expect=...)


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
    fields: NotRequired[list[str]]  # the input fields the context declares (its input model), sorted


class PlanModel(TypedDict):
    name: str | None
    source: ModelSource
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


# -- summaries prepared on request (the ``prepare`` op) -------------------------------------------
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
    """The ``prepare`` op's answer, and what ``ProjectSession.prepare_summaries`` returns."""

    prepared: list[PreparedSummary]
    skipped: list[SkippedSummary]
    error: LoadErrorDict | None


# -- runs as the worker sends them (``run``, ``replay_send``, ``replay_continue``) ----------------
class RunSummary(TypedDict):
    """A run as the store keeps it (``RunRecorder``), or one that never started (``api.failed_run``).

    Steps are ``Step.to_dict()`` as stored (texts capped); the run view reads them by the step's type.
    """

    id: str | None
    target: str
    kind: str | None
    file: str | None
    line: int | None
    origin: str
    started_at: str | float | None
    duration_ms: float | None
    status: str
    error: ErrorInfoDict | LoadErrorDict | None
    model: str | None
    input: Any
    text: str | None
    usage: dict[str, int] | None
    steps: list[dict[str, Any]]
    plan_inputs: NotRequired[dict[str, Any] | None]
    recorded: NotRequired[bool]  # a run of the inspector: whether the store has it
    record_error: NotRequired[str]  # why it was not recorded
    parent: NotRequired[str | None]  # a replayed run: the run it was forked from, at ``fork_step``
    fork_step: NotRequired[int]


class ConfirmRequest(TypedDict):
    """A Run of a real model not yet confirmed: nothing was sent (``run_confirm.confirmation_request``)."""

    needs_confirmation: Literal[True]
    target: str
    kind: str
    model: str | None
    model_kind: Literal["real"]
    confirm: str
    input_tokens: int | None  # the first request's size, to price the question at ``model`` (None: not planned)


class ReplayConfirm(TypedDict):
    """A replay to a real model not yet confirmed (or asked about): ``{"confirm": ConfirmRequest}``, the
    ``model`` a send would call and the ``confirm`` token it takes."""

    confirm: dict[str, Any]


class ReplayRefusal(TypedDict):
    """A replay that cannot be done as asked, in a sentence (``no_plan_inputs``: a step recorded
    before plan inputs were kept, which only today's source can plan)."""

    error: str
    no_plan_inputs: NotRequired[bool]


class ReplayDocument(TypedDict):
    """The ``replay_step`` op's answer: a step planned again from its recording or today's source (``replaying.replay_document``)."""

    run: str
    step: int
    source: str
    overrides: dict[str, Any]
    identical: bool
    recorded: dict[str, Any]
    replayed: dict[str, Any]
    changes: list[dict[str, Any]]
    cache_prefix: Any


# -- worker answers, one per op --------------------------------------------------------------------
class PingResult(TypedDict):
    pid: int


class WrittenResult(TypedDict):
    written: list[str]


class PrimeResult(TypedDict):
    modules: int
    texts: int
    separated: int
    files: int


class LoadResult(TypedDict):
    """The ``load`` op's answer. With progress events, ``prompts`` is empty: each report came as an event."""

    prompts: list[PromptReport]
    errors: list[LoadErrorDict]
    order: list[str]
    # Hints for the next spare worker (libraries to pre-import, texts to count ahead): the loader
    # ignores a malformed one, so a worker broken by user code still shows its prompts.
    preload: Any
    counted: Any
    watched: dict[str, list[str]]
    imported: list[str]
    written: list[str]


class UpdateResult(TypedDict):
    """The ``update`` op's answer when it updated the project in place."""

    prompts: list[PromptReport]
    errors: list[LoadErrorDict]
    order: list[str]
    refs: dict[str, str]
    reevaluated: list[str]
    reimported: list[str]
    watched: dict[str, list[str]]
    imported: list[str]
    written: list[str]


class UpdateRefused(TypedDict):
    """The ``update`` op's answer when only a full load is right (it changed nothing)."""

    full: str


# Aliases of the answers of several shapes (each op module names its ``Answer``: ``inspector/worker/ops/``).
UpdateAnswer = Union[UpdateRefused, UpdateResult]
RunAnswer = Union[ConfirmRequest, RunSummary]
ReplayStepAnswer = Union[ReplayRefusal, ReplayDocument]
ReplayContinueAnswer = Union[ReplayRefusal, ReplayConfirm, RunSummary]
ReplaySendAnswer = Union[ReplayConfirm, RunSummary]


# -- worker requests, one per op (the ``id`` and ``op`` keys of the line are the transport's) -------
class PingRequest(TypedDict):
    """Nothing: the worker answers its pid."""


class WrittenRequest(TypedDict):
    """Nothing: the worker answers the project files its user code wrote."""


class PrimeRequest(TypedDict):
    """A spare worker readied for the next load of ``root``: libraries to import, texts to count
    (``separated``: ``[text, separator]`` pairs), project files to compile."""

    root: str
    modules: list[str]
    texts: list[str]
    separated: NotRequired[list[list[str]]]
    files: NotRequired[list[str]]


class LoadRequest(TypedDict):
    """Import the project's modules (``ModuleRef.to_dict()``) and evaluate every target."""

    root: str
    modules: list[dict[str, Any]]
    progress: NotRequired[bool]  # stream progress events and each report (``wire.py``)
    models: NotRequired[dict[str, Any] | None]  # the project's model profiles (pyproject.toml)
    skip_modules: NotRequired[list[str]]
    skip_targets: NotRequired[list[str]]


class UpdateRequest(TypedDict):
    """Re-import what changed ``files`` affect, in the worker that holds the project."""

    files: list[str]
    retry: NotRequired[list[str]]
    known: NotRequired[list[str]]
    protect: NotRequired[list[str]]
    progress: NotRequired[bool]


class EvaluateRequest(TypedDict):
    """One example (or a custom ``input``) of a target evaluated and planned again."""

    prompt_id: str
    example: NotRequired[str | None]
    input: NotRequired[dict[str, Any] | None]
    token_budget: NotRequired[int | None]
    input_budget: NotRequired[int | None]
    messages: NotRequired[dict[str, Any] | None]  # plan as at a later step of a run (``step_messages``)
    model: NotRequired[str | None]  # plan against this capacity profile instead of the target's


class RunRequest(TypedDict):
    """A target run (recorded with origin ``inspector``); a real model only with its ``confirm`` token."""

    prompt_id: str
    example: NotRequired[str | None]
    input: NotRequired[dict[str, Any] | None]
    confirm: NotRequired[str | bool | None]


class PrepareRequest(TypedDict):
    """An example's missing summaries prepared into the project's summary store."""

    prompt_id: str
    example: NotRequired[str | None]
    input: NotRequired[dict[str, Any] | None]
    contributor: NotRequired[str | None]
    allow_models: NotRequired[bool]
    token_budget: NotRequired[int | None]


class ReplayStepRequest(TypedDict):
    """A recorded step planned again with ``overrides`` (``Overrides.to_dict()``, which checks its own
    values in ``Overrides.from_dict``), from its recording or today's source (``where``: each
    context's ``[file, line]``)."""

    prompt_id: str
    run: str
    step: int
    overrides: dict[str, Any]
    source: NotRequired[Literal["recorded", "current"]]
    where: NotRequired[dict[str, Any]]


class ReplayContinueRequest(TypedDict):
    """The agent forked at a recorded step (planned with ``overrides``) and run on."""

    prompt_id: str
    run: str
    step: int
    overrides: dict[str, Any]
    live_tools: NotRequired[bool]
    confirmed: NotRequired[str | bool | None]


class ReplaySendRequest(TypedDict):
    """A replayed request (``send_request``) sent to the target's model; ``ask`` alone: only the question."""

    prompt_id: str
    sent: NotRequired[SentRequestDict | None]
    run: NotRequired[str]
    step: NotRequired[int]
    input: NotRequired[Any]
    receipt: NotRequired[dict[str, Any]]
    confirmed: NotRequired[str | bool | None]
    ask: NotRequired[bool]


class Answered(TypedDict):
    """A worker's answer to one request: ``ok`` with the op's result, else the error that stopped it."""

    id: int
    ok: bool
    result: NotRequired[Any]
    error: NotRequired[LoadErrorDict]
    duration_ms: float


# -- progress events of a load or update (see ``inspector/transport/wire.py``) -------------------------------
class ImportEvent(TypedDict):
    event: Literal["import"]
    module: str


class ImportedEvent(TypedDict):
    event: Literal["imported"]
    module: str
    file: str | None
    error: LoadErrorDict | None


class TargetEvent(TypedDict):
    event: Literal["target"]
    target: str
    kind: str
    module: str
    file: str | None
    line: int | None


class ExampleEvent(TypedDict):
    event: Literal["example"]
    target: str
    example: str


class ReportEvent(TypedDict):
    event: Literal["report"]
    target: str
    prompt: PromptReport | None
    error: LoadErrorDict | None


class ExitEvent(TypedDict):
    event: Literal["exit"]
    code: int
    file: str | None
    line: int | None


EVENTS: dict[str, Any] = {
    "import": ImportEvent,
    "imported": ImportedEvent,
    "target": TargetEvent,
    "example": ExampleEvent,
    "report": ReportEvent,
    "exit": ExitEvent,
}
