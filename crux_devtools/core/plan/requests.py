"""One request, from a target to a plan: setup, the planning session that owns the stores, ``preview``.

``setup`` turns a ``Prompt`` or ``Agent`` and the call's arguments into the prompt, model, merged
budgets, derived limits and token counter of a request. ``preview``/``apreview`` gather the prompt's
text and let the ``Planner`` (``planner.py``) choose the rungs, without calling any model; the runtime
(``runtime.py``) plans every step of ``generate`` through the same functions.

Summaries and offloads: who owns the store. There is no process-wide store. A call reads and writes
the ``summary_store=``/``offload_store=`` it is given; else those of ``session=``, a
``PlanningSession`` the caller holds (it makes two in-memory stores unless given its own); else a
``preview`` or ``generate`` plans against empty stores of its own, dropped when the call returns.
So a ``generate`` that prepares a summary changes what a later ``preview`` answers only when both
were given the same store (or session). ``prepare_summaries`` writes, so it needs one of the two.

Import order: ``planner`` <- ``requests`` <- ``runtime``; ``agents`` is imported by this module and
the runtime, and imports neither.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .agents import Agent
from .cache_plan import CachePolicy
from .budget import CapacitySource, Limits, capacity_and_source, check_max_tokens, coerce_input_budget, derive_limits, merge_input_budget, model_name_of
from ..compose.callbacks import drive_async, drive_sync
from ..errors import RequestCompositionError
from ..contract import ModelRequest
from .offload_store import OffloadStore
from .planner import Gathered, Plan, Planner, PlanOptions, gather
from ..compose.prompts import Prompt, check_token_budget
from .receipts import RequestPreview, breakdown_of
from .summaries import SummaryStore
from ..tokens import TokenCounter, counter_for_model


class _FunctionCounter:
    """Wraps a model's own ``count_tokens(text)`` with a content cache."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.cache: dict[str, int] = {}

    def count(self, text: str) -> int:
        value = self.cache.get(text)
        if value is None:
            value = self.fn(text)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise TypeError(f"model count_tokens() must return an int >= 0, got {value!r}")
            self.cache[text] = value
        return value


def counter_and_measurement(model: Any, counter: TokenCounter | None) -> tuple[TokenCounter, str]:
    """The counter to use and how exact it is: a passed counter or the model's own count is exact."""
    if counter is not None:
        if not callable(getattr(counter, "count", None)):
            raise TypeError(f"counter must have a count(text) -> int method, got {type(counter).__name__}")
        return counter, "exact"
    own = getattr(model, "count_tokens", None)
    if callable(own) and not isinstance(model, str):
        return _FunctionCounter(own), "exact"
    return counter_for_model(model_name_of(model))


def composition_error(plan: Plan, request_id: str | None = None) -> RequestCompositionError:
    """The error ``generate`` raises for a plan that does not fit."""
    return RequestCompositionError(plan.error_code or "REQUEST_TOO_LARGE", plan.warnings[0], diagnostics=plan.diagnostics, request_id=request_id)  # type: ignore[arg-type]


def new_request_id() -> str:
    return "req_" + uuid.uuid4().hex[:16]


class PlanningSession:
    """What the requests of one conversation share: the summary and offload stores, and epoch state.

    Hold one to let ``prepare_summaries``, ``preview`` and ``generate`` see each other's summaries
    and offloads: ``summary_store``/``offload_store`` are the stores given, else fresh in-memory
    ones (pass ``SummaryStore(path)`` to keep summaries across processes). ``generate`` also keeps
    here, per model and effective input budget, the lowest rung each contributor was sent at (the
    epoch), and scopes offload handles to ``<prompt id>/<session id>``; ``preview`` only borrows the
    stores and the namespace, so it shows the handles a ``generate`` with this session sends.
    """

    _ids = itertools.count(1)

    def __init__(self, id: str | None = None, *, summary_store: SummaryStore | None = None, offload_store: OffloadStore | None = None) -> None:
        if summary_store is not None and not isinstance(summary_store, SummaryStore):
            raise TypeError(f"PlanningSession summary_store must be a SummaryStore, got {type(summary_store).__name__}")
        if offload_store is not None and not isinstance(offload_store, OffloadStore):
            raise TypeError(f"PlanningSession offload_store must be an OffloadStore, got {type(offload_store).__name__}")
        self.id = id or f"s{next(self._ids)}-{uuid.uuid4().hex[:8]}"
        self.summary_store = summary_store if summary_store is not None else SummaryStore()
        self.offload_store = offload_store if offload_store is not None else OffloadStore()
        self.epoch = 0
        self.key: tuple[Any, ...] | None = None
        self.ceilings: dict[str, int] = {}
        self.last_request_id: str | None = None

    def namespace(self, prompt: Prompt) -> str:
        """Where this session's offloads of ``prompt`` live (handles are derived from it)."""
        return f"{prompt.id}/{self.id}"

    def enter(self, key: tuple[Any, ...]) -> None:
        """Start a new epoch when the model or effective budget changed."""
        if key != self.key:
            self.key = key
            self.epoch += 1
            self.ceilings = {}

    def record(self, plan: Plan, request_id: str) -> None:
        for contributor, index in zip(plan.contributors, plan.choice, strict=True):
            self.ceilings[contributor.id] = max(self.ceilings.get(contributor.id, 0), index)
        self.last_request_id = request_id


def check_session(session: Any) -> PlanningSession | None:
    if session is not None and not isinstance(session, PlanningSession):
        raise TypeError(f"session must be a PlanningSession, got {type(session).__name__}")
    return session


def stores_of(session: PlanningSession | None, summary_store: SummaryStore | None, offload_store: OffloadStore | None) -> tuple[SummaryStore, OffloadStore]:
    """The stores a call uses: the ones passed, else the session's, else fresh ones for this call only."""
    if summary_store is None:
        summary_store = session.summary_store if session is not None else SummaryStore()
    if offload_store is None:
        offload_store = session.offload_store if session is not None else OffloadStore()
    return summary_store, offload_store


# --- preview -------------------------------------------------------------------------------------


@dataclass(slots=True)
class Setup:
    """Everything a request needs besides gathered text: the target's prompt, model and limits."""

    prompt: Prompt
    model: Any
    limits: Limits
    counter: TokenCounter
    measurement: str
    budget: Any
    max_tokens: int | None = None
    token_budget: int | None = None
    capacity_source: CapacitySource = "conservative"
    cache: CachePolicy | None = None  # the profile's prompt-cache placement (``cache = "auto"``)


def setup(
    target: Any, model: Any, input_budget: Any, max_tokens: Any, counter: TokenCounter | None,
    capacity_resolver: Any = None, token_budget: Any = None,
) -> Setup:
    """Resolve the prompt, model, merged budgets and derived limits of a ``Prompt`` or ``Agent``.

    The model is the call's, else the agent's, else the one the prompt names. The system-text
    ``token_budget`` is the call's, else the prompt's own.
    """
    if isinstance(target, Agent):
        prompt = target.prompt
        model = model if model is not None else target.model
        budget = merge_input_budget(target.input_budget, input_budget)
        max_tokens = max_tokens if max_tokens is not None else target.max_tokens
    elif isinstance(target, Prompt):
        prompt = target
        budget = coerce_input_budget(input_budget)
    else:
        raise TypeError(f"target must be a Prompt or an Agent, got {type(target).__name__}")
    if model is None:
        model = prompt.model
    check_max_tokens(max_tokens)
    system_budget = check_token_budget(token_budget) if token_budget is not None else prompt.token_budget
    profile, source = capacity_and_source(model, capacity_resolver)
    limits = derive_limits(profile, budget, max_tokens)
    used_counter, measurement = counter_and_measurement(model, counter)
    return Setup(prompt, model, limits, used_counter, measurement, budget, max_tokens, system_budget, source, profile.cache)


def check_messages(messages: Any) -> list[dict[str, Any]]:
    if messages is None:
        return []
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise TypeError(f"messages must be a list of dicts with role and content, got {type(messages).__name__}")
    out = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or "role" not in message:
            raise TypeError(f"messages[{index}] must be a dict with a 'role', got {type(message).__name__}")
        out.append(dict(message))
    return out


def check_active_tools(active_tools: Any) -> list[str] | None:
    if active_tools is None:
        return None
    if isinstance(active_tools, str) or not all(isinstance(n, str) for n in active_tools):
        raise TypeError("active_tools must be a list of tool names")
    return list(active_tools)


def sent_request(plan: Plan, s: Setup) -> ModelRequest:
    """The literal request a plan sends (``preview``'s ``sent``; ``generate`` dispatches the same)."""
    return ModelRequest(system=plan.system, messages=plan.messages, tools=plan.tools, max_tokens=s.max_tokens, cache=plan.cache)


def to_preview(plan: Plan, s: Setup, gathered: Gathered) -> RequestPreview:
    limits = s.limits
    warnings = plan.warnings + ([gathered.budget_warning] if gathered.budget_warning else [])
    return RequestPreview(
        status="fits" if plan.fits else "over-limit",
        model=model_name_of(s.model),
        input_tokens=plan.input_tokens,
        max_input_tokens=limits.max_input_tokens,
        optimize_at=limits.optimize_at,
        adaptations=plan.adaptations,
        candidates=plan.candidates,
        tools=[t.name for t in plan.tools],
        warnings=warnings,
        measurement=s.measurement,
        context_window=limits.context_window,
        output_reserve=limits.output_reserve,
        safety_margin=limits.safety_margin,
        overhead=limits.overhead,
        counting_confidence=limits.counting_confidence,
        contributions=plan.contributions,
        breakdown=breakdown_of(plan.contributions),
        tier=plan.tier,
        error_code=plan.error_code,
        diagnostics=plan.diagnostics,
        sent=sent_request(plan, s) if plan.fits else None,
        token_budget=s.token_budget,
        dropped=list(gathered.dropped),
        tool_tokens=plan.tool_tokens,
        capacity_source=s.capacity_source,
    )


def plan_options(
    s: Setup, messages: Any, active_tools: Any, summary_store: SummaryStore | None, offload_store: OffloadStore | None,
    namespace: str | None, session: PlanningSession | None = None,
) -> PlanOptions:
    """The options of a plan outside ``generate``: stores per ``stores_of``, the session's namespace if any."""
    summary_store, offload_store = stores_of(session, summary_store, offload_store)
    return PlanOptions(
        model=s.model, limits=s.limits, counter=s.counter, measurement=s.measurement,
        messages=check_messages(messages), active_tools=check_active_tools(active_tools),
        summary_store=summary_store, offload_store=offload_store,
        namespace=namespace or (session.namespace(s.prompt) if session is not None else s.prompt.id),
        cache=s.cache,
    )


def preview(
    target: Any,
    *,
    input: Any = None,
    model: Any = None,
    input_budget: Any = None,
    max_tokens: int | None = None,
    messages: Sequence[dict[str, Any]] | None = None,
    active_tools: Sequence[str] | None = None,
    counter: TokenCounter | None = None,
    summary_store: SummaryStore | None = None,
    offload_store: OffloadStore | None = None,
    namespace: str | None = None,
    token_budget: int | None = None,
    capacity_resolver: Any = None,
    session: PlanningSession | None = None,
) -> RequestPreview:
    """Plan one request for ``target`` (a ``Prompt`` or ``Agent``) without calling any model.

    Never prepares artifacts or writes to a store. Returns ``status="over-limit"`` (with
    ``error_code`` and ``diagnostics``) when nothing fits, where ``generate`` would raise.
    ``token_budget`` overrides the prompt's system-text budget; ``capacity_resolver(name)`` gives
    the capacity profile of a model known by name only.

    Stores: ``summary_store``/``offload_store`` when given, else those of ``session`` (a
    ``PlanningSession``; its namespace then names the offload handles, as its ``generate`` would),
    else empty stores of this call's own: a summary counts as prepared only if it is in the store
    passed, never because an earlier call in the process prepared it.
    """
    s = setup(target, model, input_budget, max_tokens, counter, capacity_resolver, token_budget)
    options = plan_options(s, messages, active_tools, summary_store, offload_store, namespace, check_session(session))
    gathered = drive_sync(gather(s.prompt, s.prompt.validate_input(input))).apply_budget(s.token_budget, s.counter)
    return to_preview(Planner(gathered, options).plan(), s, gathered)


async def apreview(
    target: Any,
    *,
    input: Any = None,
    model: Any = None,
    input_budget: Any = None,
    max_tokens: int | None = None,
    messages: Sequence[dict[str, Any]] | None = None,
    active_tools: Sequence[str] | None = None,
    counter: TokenCounter | None = None,
    summary_store: SummaryStore | None = None,
    offload_store: OffloadStore | None = None,
    namespace: str | None = None,
    token_budget: int | None = None,
    capacity_resolver: Any = None,
    session: PlanningSession | None = None,
) -> RequestPreview:
    """The async form of ``preview`` (awaits ``async def`` callbacks)."""
    s = setup(target, model, input_budget, max_tokens, counter, capacity_resolver, token_budget)
    options = plan_options(s, messages, active_tools, summary_store, offload_store, namespace, check_session(session))
    gathered = (await drive_async(gather(s.prompt, s.prompt.validate_input(input)))).apply_budget(s.token_budget, s.counter)
    return to_preview(Planner(gathered, options).plan(), s, gathered)
