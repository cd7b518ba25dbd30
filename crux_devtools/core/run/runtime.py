"""Running: agents, the tool loop, steps and their receipts.

``generate`` resolves the prompt once per run (each callback runs once), then, before every
provider call, plans the request exactly once (see ``planner.py``); if planning raises, nothing is
dispatched. Tool calls are executed and fed back until the model answers with text or ``max_steps``
is reached.

Failure policy (decided here): ``generate`` returns only with the model's text; every failure
raises, and the exception carries the run so far as ``result`` (a ``GenerateResult`` with
``text=None`` and every step made, the failing one last) and ``steps``. While runs are recorded,
the failed run is recorded first, with its error.

- Before any step (a wrong argument: ``TypeError``; an input that does not fit:
  ``InputValidationError``; a callback: ``CallbackError``): nothing was sent; ``steps`` is empty.
- Planning (``REQUEST_TOO_LARGE``, ``REPRESENTATION_UNAVAILABLE``): ``RequestCompositionError``
  before dispatch, on the first step or a later one. A summary model that fails leaves the summary
  rung unprepared (a warning on the receipt) and the planner picks another authorised rung.
- A model error, a malformed answer, an unknown tool name, malformed tool arguments or a tool that
  raises: ``RunError`` (``stop_reason="error"``; ``__cause__`` is the original exception); the
  step records ``error`` and nothing of that step is written to a store (tool results are
  offloaded only once every tool of the step succeeded). A tool declared with
  ``on_error="tell_model"`` is the exception: its failure is sent to the model as its result.
- ``max_steps`` passed without a text answer: ``RunError`` with ``stop_reason="max_steps"``.

Epochs: a ``PlanningSession`` (``requests.py``; one per ``generate`` call unless passed in) keeps,
per model and effective input budget, the lowest rung each contributor was sent at; a new model or
budget starts a new epoch and replans from the canonical sources. Offload handles are scoped to the
namespace ``<prompt id>/<session id>``.

Stores: the ``summary_store``/``offload_store`` passed, else the session's. Without either, the
run's own ``PlanningSession`` makes fresh in-memory stores: the summaries it prepares and the
values it offloads (readable through ``read_offload`` during the run) go when the call returns,
and no later call in the process sees them. Pass a store or a session to keep them.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from pydantic import ValidationError

from ..record import recording
from ..plan.agents import Agent
from ..plan.budget import model_name_of
from ..compose.callbacks import drive_async, run_sync
from ..errors import CruxError, ErrorInfo, ModelError, RequestCompositionError, RunError
from ..plan.ladders import Offloaded, OutputPolicy
from .models import ModelRequest
from ..contract import acall, is_model
from ..plan.offload_store import OffloadReceipt, OffloadStore, canonical_text, make_handle, reference_text
from ..plan.planner import Gathered, Plan, Planner, PlanOptions, gather
from ..plan.preparing import prepare_missing
from ..plan.receipts import Receipt
from ..plan.requests import PlanningSession, Setup, check_active_tools, check_messages, check_session, composition_error, new_request_id, sent_request, setup, stores_of
from ..compose.results import _ToDict
from ..plan.summaries import SummaryStore
from ..tools import Tool

StopReason = Literal["text", "max_steps", "error"]


@dataclass(frozen=True, slots=True)
class ToolResult(_ToDict):
    """One executed tool call: ``output`` is what the application gets, ``model_output`` what the model saw."""

    name: str
    output: Any
    model_output: str
    call_id: str = ""
    error: ErrorInfo | None = None  # the tool failed and, as it asks (on_error="tell_model"), the model was told


@dataclass(frozen=True, slots=True)
class Step(_ToDict):
    """One provider call: its receipt, the literal request sent, the answer, and the tools it led to.

    ``sent`` is the ``ModelRequest`` dispatched, exactly as the model received it; ``usage`` is the
    provider-reported ``{"input_tokens", "output_tokens"}`` (``None`` when it reported none);
    ``latency_ms`` is the provider call's wall time, ``started_ms`` when that call began (milliseconds
    after the run started) and ``tool_ms`` the wall time of the tool calls it led to (``None`` when
    it led to none, or for a step recorded before these were kept); ``error`` says why the run
    stopped here.
    ``stream`` is set when the answer was streamed: ``{"first_token_ms", "chunks"}`` (time to the
    first piece of text or tool call, and how many pieces arrived); ``to_dict`` leaves it out otherwise.
    """

    index: int
    request: Receipt
    sent: ModelRequest
    response_text: str | None
    tool_calls: list[Any]
    tool_results: list[ToolResult]
    offloads: list[OffloadReceipt]
    usage: dict[str, int] | None = None
    latency_ms: float | None = None
    error: ErrorInfo | None = None
    started_ms: float | None = None
    tool_ms: float | None = None
    stream: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        data = _ToDict.to_dict(self)
        if data.get("stream") is None:
            del data["stream"]
        return data


def sum_usage(steps: Sequence[Step]) -> dict[str, int] | None:
    """The provider-reported usage of every step added up, or ``None`` when no step reported any."""
    reported = [s.usage for s in steps if s.usage]
    if not reported:
        return None
    return {key: sum(u.get(key, 0) for u in reported) for key in ("input_tokens", "output_tokens")}


@dataclass(frozen=True, slots=True)
class GenerateResult(_ToDict):
    """The outcome of a run: the final text and every step.

    ``generate`` returns one only when the model answered with text; a failed run's partial result
    (``text=None``, ``stop_reason`` ``"error"`` or ``"max_steps"``, ``error``) is the ``result`` of
    the exception it raised.
    """

    text: str | None
    steps: list[Step]
    stop_reason: StopReason = "text"
    error: ErrorInfo | None = None

    @property
    def usage(self) -> dict[str, int] | None:
        """The provider-reported usage summed over the steps (``None`` if none was reported)."""
        return sum_usage(self.steps)


async def _plan_step(gathered: Gathered, options: PlanOptions, summary_store: SummaryStore) -> tuple[Plan, list[str]]:
    """Plan one request; first prepare the summaries it lacks and its ladders say to prepare."""
    plan = Planner(gathered, options).plan()
    if not plan.missing_summaries:
        return plan, []
    for contributor in plan.missing_summaries:
        if contributor.shape.summary is not None and contributor.shape.summary.on_miss == "fail":
            raise RequestCompositionError(
                "REPRESENTATION_UNAVAILABLE",
                f"the summary of {contributor.id!r} is needed but not prepared and on_miss='fail'; prepare it or use on_miss='prepare'",
            )
    done = await prepare_missing(plan, summary_store, options.counter, allow_models=True)
    warnings = [f"summary of {d.contributor!r} could not be prepared: {d.detail}" for d in done if d.status == "failed"]
    return Planner(gathered, options).plan(), warnings


def _dump(value: Any) -> str:
    return canonical_text(value)


def _check_response(response: Any, offered: dict[str, Tool]) -> ErrorInfo | None:
    """What is wrong with a model response, or ``None``."""
    calls = getattr(response, "tool_calls", None)
    text = getattr(response, "text", None)
    if calls is None or not isinstance(calls, list) or (text is not None and not isinstance(text, str)):
        return ErrorInfo("MalformedResponse", f"model returned a malformed response ({type(response).__name__}); expected text and a list of tool calls")
    if not calls and text is None:
        return ErrorInfo("MalformedResponse", "model returned neither text nor tool calls")
    for call in calls:
        name = getattr(call, "name", None)
        if not isinstance(name, str) or not isinstance(getattr(call, "arguments", None), dict):
            return ErrorInfo("MalformedResponse", f"model returned a malformed tool call {call!r:.80}; expected a name and a dict of arguments")
        if name not in offered:
            return ErrorInfo("UnknownTool", f"model asked for unknown tool {name!r}; offered tools: {', '.join(sorted(offered)) or 'none'}")
    return None


def _usage_of(response: Any) -> dict[str, int] | None:
    usage = getattr(response, "usage", None)
    return dict(usage) if isinstance(usage, dict) else None


@dataclass(frozen=True, slots=True, kw_only=True)
class RunOptions:
    """Every knob of one ``generate``/``agenerate`` call, as the caller passed it (``None``: the default).

    Built once per call (``RunOptions.of(locals())``) and handed on: nothing after the public entry
    points spells the keyword list out again. Each field is the keyword of the same name, documented
    on ``agenerate``; a test checks that both signatures and these fields agree.
    """

    input: Any = None
    model: Any = None
    input_budget: Any = None
    max_tokens: int | None = None
    messages: Sequence[dict[str, Any]] | None = None
    active_tools: Sequence[str] | None = None
    counter: Any = None
    summary_store: SummaryStore | None = None
    offload_store: OffloadStore | None = None
    session: PlanningSession | None = None
    max_steps: int | None = None
    token_budget: int | None = None
    capacity_resolver: Any = None
    on_text: Callable[[str], Any] | None = None

    @classmethod
    def of(cls, call: Mapping[str, Any]) -> RunOptions:
        """The options of a call whose keywords are ``call`` (its ``locals()``), each field by its name."""
        return cls(**{name: call[name] for name in RUN_OPTION_NAMES})


RUN_OPTION_NAMES: tuple[str, ...] = tuple(f.name for f in fields(RunOptions))


@dataclass(frozen=True, slots=True)
class _Run:
    """What holds for every step of one run: the setup, the stores, the gathered text."""

    setup: Setup
    session: PlanningSession
    summary_store: SummaryStore
    offload_store: OffloadStore
    namespace: str
    history: list[dict[str, Any]]
    active_tools: list[str] | None
    gathered: Gathered
    model_name: str | None
    max_steps: int
    capture: recording.RunCapture | None
    clock: float = field(default_factory=time.perf_counter)  # when the run started: steps' ``started_ms`` count from here
    on_text: Callable[[str], Any] | None = None


@dataclass(frozen=True, slots=True)
class _Progress:
    """A run between two steps: the steps made, this run's assistant and tool messages, and whether
    an offload made the ``read_offload`` tool required."""

    steps: tuple[Step, ...] = ()
    conversation: tuple[dict[str, Any], ...] = ()
    support_required: bool = False


@dataclass(frozen=True, slots=True)
class _Planned:
    """One step's request, planned and receipted, before the model is called."""

    index: int
    plan: Plan
    receipt: Receipt
    request: ModelRequest
    offloads: list[OffloadReceipt]

    def step(self, text: str | None, usage: dict[str, int] | None, latency: float | None, error: ErrorInfo | None = None,
             calls: Sequence[Any] = (), results: Sequence[ToolResult] = (), offloads: Sequence[OffloadReceipt] = (),
             *, started_ms: float | None = None, tool_ms: float | None = None, stream: dict[str, Any] | None = None) -> Step:
        """The step this request became, with the model's answer (and the tools it led to)."""
        return Step(self.index, self.receipt, self.request, text, list(calls), list(results), [*self.offloads, *offloads], usage, latency, error,
                    started_ms, tool_ms, stream)


class _Streamed:
    """A step's answer as it streams: the pieces so far, and when the first came."""

    __slots__ = ("parts", "first_token_ms", "started")

    def __init__(self, started: float) -> None:
        self.parts: list[str] = []
        self.first_token_ms: float | None = None
        self.started = started

    def timing(self) -> dict[str, Any]:
        return {"first_token_ms": self.first_token_ms, "chunks": len(self.parts)}

    def text(self) -> str | None:
        return "".join(self.parts) or None


async def _stream_answer(run: _Run, planned: _Planned, streamed: _Streamed) -> Any:
    """Ask the model through its ``astream``: each piece of text goes to ``on_text`` (and to the
    run's live view while it is recorded) as it arrives; returns the ``ModelResponse`` it ends with."""
    on_text = run.on_text
    assert on_text is not None
    live = run.capture.live_step(planned.index) if run.capture is not None else None
    response = None
    async for piece in run.setup.model.astream(planned.request):
        if isinstance(piece, str):
            if not piece:
                continue
            if streamed.first_token_ms is None:
                streamed.first_token_ms = _elapsed_ms(streamed.started)
            streamed.parts.append(piece)
            if live is not None:
                live.add(piece)
            shown = on_text(piece)
            if inspect.isawaitable(shown):
                await shown
        else:
            response = piece
    if response is None:
        raise ModelError(
            f"model {run.model_name!r}: astream ended without its ModelResponse; an adapter's astream must end by yielding the whole answer",
            kind="malformed", model=run.model_name,
        )
    return response


async def agenerate(
    target: Any,
    *,
    input: Any = None,
    model: Any = None,
    input_budget: Any = None,
    max_tokens: int | None = None,
    messages: Sequence[dict[str, Any]] | None = None,
    active_tools: Sequence[str] | None = None,
    counter: Any = None,
    summary_store: SummaryStore | None = None,
    offload_store: OffloadStore | None = None,
    session: PlanningSession | None = None,
    max_steps: int | None = None,
    token_budget: int | None = None,
    capacity_resolver: Any = None,
    on_text: Callable[[str], Any] | None = None,
) -> GenerateResult:
    """Run the tool loop for a ``Prompt`` (with ``model=``) or an ``Agent``; see the module docstring.

    The keywords (each ``None`` for its default): ``input``, the prompt's input; ``model``, the
    adapter to call (else the agent's, else the prompt's); ``input_budget``, an ``InputBudget`` or
    dict, merged over the agent's; ``max_tokens``, the answer's length, reserved and sent with every
    request; ``messages``, the conversation so far (dicts with a ``role``); ``active_tools``, the
    names of the tools offered (else all); ``counter``, a ``TokenCounter`` (else the model's own
    count, else tiktoken); ``summary_store``, ``offload_store``, ``session``, see below;
    ``max_steps``, the most provider calls (else the agent's, else 8); ``token_budget``, the system
    text's budget (else the prompt's); ``capacity_resolver``, ``name -> ModelCapacityProfile`` for a
    model known by name only; ``on_text``, called with each piece of an answer's text as it arrives
    (awaited when it returns an awaitable): every step is then streamed through the model's
    ``astream``, and records its time to first token (a model without ``astream`` is called as
    usual, and ``on_text`` gets each answer's whole text at once).

    Stores: ``summary_store``/``offload_store`` when given, else those of ``session``; with
    neither, this run's own fresh in-memory stores (nothing it prepares or offloads outlives the
    call, so it never changes what a later ``preview`` answers).

    Returns only with the model's text; every failure raises, carrying the run so far as the
    exception's ``result`` (see the module docstring). While runs are recorded (``record_runs``),
    the run is written as one record, whatever its outcome, before this returns or raises.
    """
    return await generate_with(target, RunOptions.of(locals()))


def generate(
    target: Any,
    *,
    input: Any = None,
    model: Any = None,
    input_budget: Any = None,
    max_tokens: int | None = None,
    messages: Sequence[dict[str, Any]] | None = None,
    active_tools: Sequence[str] | None = None,
    counter: Any = None,
    summary_store: SummaryStore | None = None,
    offload_store: OffloadStore | None = None,
    session: PlanningSession | None = None,
    max_steps: int | None = None,
    token_budget: int | None = None,
    capacity_resolver: Any = None,
    on_text: Callable[[str], Any] | None = None,
) -> GenerateResult:
    """The sync form of ``agenerate``; works outside a running event loop."""
    return run_sync(generate_with(target, RunOptions.of(locals())))


async def generate_with(target: Any, options: RunOptions) -> GenerateResult:
    """``agenerate`` with its options already built: one run, recorded whatever its outcome."""
    capture = recording.begin(target, options.input)
    try:
        result = await _loop(target, options, capture)
    except BaseException as exc:
        if isinstance(exc, CruxError) and exc.result is None:  # failed before any step
            exc.result = GenerateResult(None, [], "error", ErrorInfo.from_exception(exc))
        if capture is not None:
            capture.finish(None, exc)
        raise
    if capture is not None:
        capture.finish(result)
    return result


async def _loop(target: Any, options: RunOptions, capture: recording.RunCapture | None) -> GenerateResult:
    """Step until the model answers with text; at ``max_steps`` the run fails."""
    current = await _start(target, options, capture)
    progress = _Progress()
    for index in range(current.max_steps):
        outcome = await _step(current, progress, index)
        if isinstance(outcome, GenerateResult):
            return outcome
        progress = outcome
    error = ErrorInfo("MaxSteps", f"stopped after max_steps={current.max_steps} without a text answer")
    raise _failed(list(progress.steps), error, stop_reason="max_steps")


async def _start(target: Any, options: RunOptions, capture: recording.RunCapture | None) -> _Run:
    """Check the call and gather the prompt's text once (each callback runs once per run)."""
    clock = time.perf_counter()
    o = options
    s = setup(target, o.model, o.input_budget, o.max_tokens, o.counter, o.capacity_resolver, o.token_budget)
    if s.model is None:
        raise TypeError(f"generate({s.prompt.id!r}): no model; pass model=... or use an agent with a model")
    if not is_model(s.model):
        raise TypeError(
            f"generate({s.prompt.id!r}): the model {s.model!r} is something to plan against, not a model to call; "
            "pass model= an adapter such as OpenAICompatibleModel(...) or ScriptedModel([...])"
        )
    max_steps = o.max_steps if o.max_steps is not None else target.max_steps if isinstance(target, Agent) else 8
    session = check_session(o.session) or PlanningSession()
    summary_store, offload_store = stores_of(session, o.summary_store, o.offload_store)
    history, active = check_messages(o.messages), check_active_tools(o.active_tools)
    validated = s.prompt.validate_input(o.input)
    if capture is not None:
        capture.planned(s.model, validated)
    gathered = (await drive_async(gather(s.prompt, validated))).apply_budget(s.token_budget, s.counter)
    return _Run(
        s, session, summary_store, offload_store, session.namespace(s.prompt), history, active, gathered,
        model_name_of(s.model), max_steps, capture, clock, _check_on_text(o.on_text),
    )


def _check_on_text(on_text: Any) -> Callable[[str], Any] | None:
    if on_text is not None and not callable(on_text):
        raise TypeError(f"on_text must be a function of each piece of text (such as print), got {type(on_text).__name__}")
    return on_text  # type: ignore[no-any-return]


async def _step(run: _Run, progress: _Progress, index: int) -> _Progress | GenerateResult:
    """One step: plan the request, call the model, run the tools it asks for, record the step.

    Returns the run's progress to go on from, or its result when the model answered with text;
    raises (the run so far as the error's ``result``) when the step failed.
    """
    planned = await _plan_request(run, progress, index)
    started = time.perf_counter()
    at = round((started - run.clock) * 1000, 3)
    streamed = _Streamed(started) if run.on_text is not None and callable(getattr(run.setup.model, "astream", None)) else None
    try:
        response = await (_stream_answer(run, planned, streamed) if streamed is not None else acall(run.setup.model, planned.request))
    except Exception as exc:  # noqa: BLE001 - any adapter fault ends the run with a clear step error
        error = ErrorInfo.from_exception(exc, f"model {run.model_name!r} failed: {type(exc).__name__}: {exc}")
        so_far = streamed.text() if streamed is not None else None  # a stream cut mid-way: what arrived
        timing = streamed.timing() if streamed is not None else None
        raise _failed([*progress.steps, planned.step(so_far, None, _elapsed_ms(started), error, started_ms=at, stream=timing)], error, exc) from exc
    latency, usage = _elapsed_ms(started), _usage_of(response)
    timing = streamed.timing() if streamed is not None else None
    if streamed is None and run.on_text is not None and isinstance(getattr(response, "text", None), str) and response.text:
        shown = run.on_text(response.text)  # a model that cannot stream: its whole text, as one piece
        if inspect.isawaitable(shown):
            await shown
    offered = {t.name: t for t in planned.plan.tools}
    problem = _check_response(response, offered)
    if problem is not None:
        text = getattr(response, "text", None)
        raise _failed([*progress.steps, planned.step(text if isinstance(text, str) else None, usage, latency, problem, started_ms=at, stream=timing)], problem)
    if not response.tool_calls:
        return GenerateResult(response.text, [*progress.steps, planned.step(response.text, usage, latency, started_ms=at, stream=timing)], "text")
    tools_started = time.perf_counter()
    results, pending, tool_error, cause = await _run_tools(response.tool_calls, offered, run.namespace, run.setup.counter)
    calls = list(response.tool_calls)
    if tool_error is not None:
        raise _failed([*progress.steps, planned.step(response.text, usage, latency, tool_error, calls, results, started_ms=at,
                                                     tool_ms=_elapsed_ms(tools_started), stream=timing)], tool_error, cause)
    offloads = [run.offload_store.put(run.namespace, key, value) for key, value in pending]  # only now that every tool succeeded
    step = planned.step(response.text, usage, latency, None, calls, results, offloads, started_ms=at, tool_ms=_elapsed_ms(tools_started), stream=timing)
    told = [{"role": "tool", "tool_call_id": call.id, "content": result.model_output} for call, result in zip(calls, results, strict=True)]
    return _Progress((*progress.steps, step), (*progress.conversation, response.to_message(), *told), progress.support_required or bool(pending))


async def _plan_request(run: _Run, progress: _Progress, index: int) -> _Planned:
    """Plan step ``index`` (raising ``RequestCompositionError`` when nothing fits), write its
    offloads and receipt, and record the plan in the session's epoch."""
    s, session = run.setup, run.session
    session.enter((run.model_name, s.limits.max_input_tokens, s.limits.optimize_at))
    planning = PlanOptions(
        model=s.model, limits=s.limits, counter=s.counter, measurement=s.measurement, messages=run.history,
        turn=list(progress.conversation), active_tools=run.active_tools, summary_store=run.summary_store,
        offload_store=run.offload_store, namespace=run.namespace, ceilings=dict(session.ceilings), epoch=session.epoch,
        support_required=progress.support_required, cache=s.cache,
    )
    request_id = new_request_id()
    try:
        plan, prep_warnings = await _plan_step(run.gathered, planning, run.summary_store)
        if not plan.fits:
            raise composition_error(plan, request_id)
    except RequestCompositionError as exc:
        exc.request_id = exc.request_id or request_id
        exc.result = GenerateResult(None, list(progress.steps), "error", ErrorInfo.from_exception(exc))
        raise
    offloads = [run.offload_store.put(run.namespace, key, text) for _cid, key, text in plan.offloads]
    receipt = _receipt(run, plan, request_id, prep_warnings)
    session.record(plan, request_id)
    if run.capture is not None:
        run.capture.plan_made(index, plan, s)
    return _Planned(index, plan, receipt, sent_request(plan, s), offloads)


def _receipt(run: _Run, plan: Plan, request_id: str, prep_warnings: list[str]) -> Receipt:
    """The receipt of a planned request (before ``session.record`` moves the epoch's last request on)."""
    s, session, gathered = run.setup, run.session, run.gathered
    return Receipt(
        id=request_id, model=run.model_name, input_tokens=plan.input_tokens, max_input_tokens=s.limits.max_input_tokens,
        optimize_at=s.limits.optimize_at, measurement=s.measurement, adaptations=plan.adaptations,
        warnings=prep_warnings + plan.warnings + ([gathered.budget_warning] if gathered.budget_warning else []),
        epoch=session.epoch, previous_request_id=session.last_request_id,
        candidates=plan.candidates, contributions=plan.contributions, tools=[t.name for t in plan.tools], tier=plan.tier or "max",
        token_budget=s.token_budget, dropped=list(gathered.dropped), tool_tokens=plan.tool_tokens, cache=plan.cache,
    )


def _failed(steps: list[Step], error: ErrorInfo, cause: BaseException | None = None, stop_reason: StopReason = "error") -> RunError:
    """The exception a run that failed at its last step raises: the run so far is its ``result``."""
    exc = RunError(error, GenerateResult(None, steps, stop_reason, error))
    exc.__cause__ = cause
    return exc


def _elapsed_ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)


async def _run_tools(
    calls: list[Any], offered: dict[str, Tool], namespace: str, counter: Any,
) -> tuple[list[ToolResult], list[tuple[str, Any]], ErrorInfo | None, BaseException | None]:
    """Execute one step's tool calls: the results, the values to offload, and the failure (with its
    exception) that ends the run, if any. A tool with ``on_error="tell_model"`` never ends it."""
    results: list[ToolResult] = []
    pending: list[tuple[str, Any]] = []
    for call in calls:
        t = offered[call.name]
        failure: ErrorInfo | None = None
        cause: BaseException | None = None
        try:
            params = t.parameters.model_validate(call.arguments)
        except ValidationError as exc:
            failure, cause = ErrorInfo("InvalidToolArguments", f"model called {t.name!r} with invalid arguments: {exc.error_count()} error(s): " + "; ".join(
                f"{'.'.join(map(str, e['loc'])) or '<root>'}: {e['msg']}" for e in exc.errors()
            )), exc
        else:
            try:
                value = t.execute(params)
                if inspect.isawaitable(value):
                    value = await value
            except Exception as exc:  # noqa: BLE001 - user tool code: reported on the step
                failure, cause = ErrorInfo.from_exception(exc, f"tool {t.name!r} raised {type(exc).__name__}: {exc}"), exc
        if failure is not None:
            if t.on_error != "tell_model":
                return results, [], failure, cause
            results.append(ToolResult(t.name, None, f"error: {failure.message}", call.id, failure))
            continue
        forced = isinstance(value, Offloaded)
        if forced:
            value = value.value
        policy = t.output if isinstance(t.output, OutputPolicy) else None
        text = _dump(value)
        if forced or (policy is not None and (policy.above_tokens is None or counter.count(text) > policy.above_tokens)):
            key = f"tool:{t.name}:{call.id}"
            model_output = reference_text(f"the result of {t.name}", make_handle(namespace, key), value, counter)
            pending.append((key, value))
        else:
            model_output = text
        results.append(ToolResult(t.name, value, model_output, call.id))
    return results, pending, None, None


async def run_tools(
    calls: list[Any], offered: dict[str, Tool], namespace: str, counter: Any,
) -> tuple[list[ToolResult], list[tuple[str, Any]], ErrorInfo | None, BaseException | None]:
    """Run one step's tool calls as the tool loop does: validate each call's arguments, execute the
    tool (awaited when async), and apply its output policy (a result above the policy's threshold, or
    returned as ``Offloaded``, becomes a reference to offloaded data in ``namespace``).

    Returns ``(results, pending, error, cause)``: the results of the calls that ran, the ``(key,
    value)`` pairs to offload once every call succeeded, the failure that stopped the step and the
    exception behind it (both ``None`` when none did; a tool with ``on_error="tell_model"`` never
    stops it). Used by the loop and by anything that runs on after it (forking a recorded run).
    """
    return await _run_tools(calls, offered, namespace, counter)


__all__ = ["GenerateResult", "RunOptions", "Step", "ToolResult", "agenerate", "generate", "generate_with", "run_tools"]
