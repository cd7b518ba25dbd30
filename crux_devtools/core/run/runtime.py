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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import ValidationError

from ..record import recording
from ..plan.agents import Agent
from ..plan.budget import model_name_of
from ..compose.callbacks import drive_async, run_sync
from ..errors import CruxError, ErrorInfo, RequestCompositionError, RunError
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
    ``latency_ms`` is the provider call's wall time; ``error`` says why the run stopped here.
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
) -> GenerateResult:
    """Run the tool loop for a ``Prompt`` (with ``model=``) or an ``Agent``; see the module docstring.

    Stores: ``summary_store``/``offload_store`` when given, else those of ``session``; with
    neither, this run's own fresh in-memory stores (nothing it prepares or offloads outlives the
    call, so it never changes what a later ``preview`` answers).

    Returns only with the model's text; every failure raises, carrying the run so far as the
    exception's ``result`` (see the module docstring). While runs are recorded (``record_runs``),
    the run is written as one record, whatever its outcome, before this returns or raises.
    """
    args: dict[str, Any] = dict(
        input=input, model=model, input_budget=input_budget, max_tokens=max_tokens, messages=messages, active_tools=active_tools,
        counter=counter, summary_store=summary_store, offload_store=offload_store, session=session, max_steps=max_steps,
        token_budget=token_budget, capacity_resolver=capacity_resolver,
    )
    capture = recording.begin(target, input)
    try:
        result = await _agenerate(target, capture=capture, **args)
    except BaseException as exc:
        if isinstance(exc, CruxError) and exc.result is None:  # failed before any step
            exc.result = GenerateResult(None, [], "error", ErrorInfo.from_exception(exc))
        if capture is not None:
            capture.finish(None, exc)
        raise
    if capture is not None:
        capture.finish(result)
    return result


def _failed(steps: list[Step], error: ErrorInfo, cause: BaseException | None = None, stop_reason: StopReason = "error") -> RunError:
    """The exception a run that failed at its last step raises: the run so far is its ``result``."""
    exc = RunError(error, GenerateResult(None, steps, stop_reason, error))
    exc.__cause__ = cause
    return exc


async def _agenerate(
    target: Any,
    *,
    capture: recording.RunCapture | None = None,
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
) -> GenerateResult:
    s: Setup = setup(target, model, input_budget, max_tokens, counter, capacity_resolver, token_budget)
    if s.model is None:
        raise TypeError(f"generate({s.prompt.id!r}): no model; pass model=... or use an agent with a model")
    if not is_model(s.model):
        raise TypeError(
            f"generate({s.prompt.id!r}): the model {s.model!r} is something to plan against, not a model to call; "
            "pass model= an adapter such as OpenAICompatibleModel(...) or ScriptedModel([...])"
        )
    if max_steps is None:
        max_steps = target.max_steps if isinstance(target, Agent) else 8
    session = check_session(session) or PlanningSession()
    summary_store, offload_store = stores_of(session, summary_store, offload_store)
    namespace = session.namespace(s.prompt)
    history = check_messages(messages)
    conversation: list[dict[str, Any]] = []  # this run's assistant and tool messages
    active = check_active_tools(active_tools)
    validated = s.prompt.validate_input(input)
    if capture is not None:
        capture.planned(s.model, validated)
    gathered = (await drive_async(gather(s.prompt, validated))).apply_budget(s.token_budget, s.counter)
    model_name = model_name_of(s.model)
    steps: list[Step] = []
    support_required = False
    for index in range(max_steps):
        session.enter((model_name, s.limits.max_input_tokens, s.limits.optimize_at))
        options = PlanOptions(
            model=s.model, limits=s.limits, counter=s.counter, measurement=s.measurement, messages=history, turn=list(conversation),
            active_tools=active, summary_store=summary_store, offload_store=offload_store, namespace=namespace,
            ceilings=dict(session.ceilings), epoch=session.epoch, support_required=support_required,
        )
        request_id = new_request_id()
        try:
            plan, prep_warnings = await _plan_step(gathered, options, summary_store)
            if not plan.fits:
                raise composition_error(plan, request_id)
        except RequestCompositionError as exc:
            exc.request_id = exc.request_id or request_id
            exc.result = GenerateResult(None, steps, "error", ErrorInfo.from_exception(exc))
            raise
        offloads = [offload_store.put(namespace, key, text) for _cid, key, text in plan.offloads]
        receipt = Receipt(
            id=request_id, model=model_name, input_tokens=plan.input_tokens, max_input_tokens=s.limits.max_input_tokens,
            optimize_at=s.limits.optimize_at, measurement=s.measurement, adaptations=plan.adaptations,
            warnings=prep_warnings + plan.warnings + ([gathered.budget_warning] if gathered.budget_warning else []),
            epoch=session.epoch, previous_request_id=session.last_request_id,
            candidates=plan.candidates, contributions=plan.contributions, tools=[t.name for t in plan.tools], tier=plan.tier or "max",
            token_budget=s.token_budget, dropped=list(gathered.dropped), tool_tokens=plan.tool_tokens,
        )
        session.record(plan, request_id)
        if capture is not None:
            capture.plan_made(index, plan, s)
        request = sent_request(plan, s)
        started = time.perf_counter()
        try:
            response = await acall(s.model, request)
        except Exception as exc:  # noqa: BLE001 - any adapter fault ends the run with a clear step error
            error = ErrorInfo.from_exception(exc, f"model {model_name!r} failed: {type(exc).__name__}: {exc}")
            steps.append(Step(index, receipt, request, None, [], [], offloads, None, _elapsed_ms(started), error))
            raise _failed(steps, error, exc) from exc
        latency, usage = _elapsed_ms(started), _usage_of(response)
        offered = {t.name: t for t in plan.tools}
        problem = _check_response(response, offered)
        if problem is not None:
            text = getattr(response, "text", None)
            steps.append(Step(index, receipt, request, text if isinstance(text, str) else None, [], [], offloads, usage, latency, problem))
            raise _failed(steps, problem)
        if not response.tool_calls:
            steps.append(Step(index, receipt, request, response.text, [], [], offloads, usage, latency))
            return GenerateResult(response.text, steps, "text")
        results, pending, tool_error, cause = await _run_tools(response.tool_calls, offered, namespace, s.counter)
        if tool_error is not None:
            steps.append(Step(index, receipt, request, response.text, list(response.tool_calls), results, offloads, usage, latency, tool_error))
            raise _failed(steps, tool_error, cause)
        for key, value in pending:  # only now that every tool of the step succeeded
            offloads.append(offload_store.put(namespace, key, value))
            support_required = True
        steps.append(Step(index, receipt, request, response.text, list(response.tool_calls), results, offloads, usage, latency))
        conversation.append(response.to_message())
        for call, result in zip(response.tool_calls, results, strict=True):
            conversation.append({"role": "tool", "tool_call_id": call.id, "content": result.model_output})
    raise _failed(steps, ErrorInfo("MaxSteps", f"stopped after max_steps={max_steps} without a text answer"), stop_reason="max_steps")


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
) -> GenerateResult:
    """The sync form of ``agenerate``; works outside a running event loop."""
    return run_sync(
        agenerate(
            target, input=input, model=model, input_budget=input_budget, max_tokens=max_tokens, messages=messages,
            active_tools=active_tools, counter=counter, summary_store=summary_store, offload_store=offload_store,
            session=session, max_steps=max_steps, token_budget=token_budget, capacity_resolver=capacity_resolver,
        )
    )


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


__all__ = ["GenerateResult", "Step", "ToolResult", "agenerate", "generate", "run_tools"]
