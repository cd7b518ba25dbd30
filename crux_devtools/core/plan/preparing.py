"""Preparing summary artifacts ahead of a request, so ``preview`` can show (and pick) the summary rung.

``preview`` never prepares anything, and ``generate`` prepares a summary only when the plan needs
it. ``prepare_summaries`` is the explicit step between them: it resolves one input exactly as
``preview`` would (same token budget, so a dropped context is not summarised), then writes the
missing summary of each summarizable contributor to a ``SummaryStore``. Extractive summaries need
no model. A hierarchical summary calls its ladder's model, so it is prepared only with
``allow_models=True``; without it the contributor is reported as ``"needs-model"``.

Artifacts are content-addressed (source text + strategy + model), so the summary prepared here is
the one ``generate`` would read or write for the same text: a preview planned against the same
store then sends what ``generate`` would send.

``prepare_missing`` is what ``generate`` does before it sends a request whose plan lacks a summary
its ladder says to prepare (``on_miss="prepare"``). ``preview_as_sent`` plans a request as
``generate`` would send it: it prepares the extractive summaries ``generate`` would prepare (no
model: deterministic and cheap) into the store it is given, and reports the summaries that need a
model as ``"needs-model"``: ``generate`` prepares them with their model before sending, and the
preview is the request sent if that fails.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .budget import model_name_of
from ..compose.callbacks import drive_async, drive_sync, run_sync
from .planner import Contributor, Plan, Planner, gather
from .receipts import RequestPreview
from .requests import PlanningSession, check_session, plan_options, setup, to_preview
from ..compose.results import _ToDict
from .summaries import SummaryError, SummaryStore
from ..tokens import TokenCounter

PreparedStatus = Literal["prepared", "already-prepared", "needs-model", "failed"]


@dataclass(frozen=True, slots=True)
class PreparedSummary(_ToDict):
    """What ``prepare_summaries`` did for one summarizable contributor.

    ``status``: ``"prepared"`` (written now), ``"already-prepared"`` (the store had it),
    ``"needs-model"`` (hierarchical, and ``allow_models`` was not given) or ``"failed"`` (the summary
    model failed; ``detail`` says how). ``tokens`` is the summary's own token count, when there is one.
    """

    contributor: str
    strategy: str
    model: str | None
    status: PreparedStatus
    tokens: int | None = None
    detail: str | None = None


async def aprepare_summaries(
    target: Any,
    *,
    input: Any = None,
    summary_store: SummaryStore | None = None,
    allow_models: bool = False,
    contributors: Sequence[str] | None = None,
    token_budget: int | None = None,
    model: Any = None,
    counter: TokenCounter | None = None,
    capacity_resolver: Any = None,
    session: PlanningSession | None = None,
) -> list[PreparedSummary]:
    """The async form of ``prepare_summaries``."""
    if not isinstance(allow_models, bool):
        raise TypeError(f"allow_models must be True or False, got {allow_models!r}")
    if contributors is not None and (isinstance(contributors, str) or not all(isinstance(c, str) for c in contributors)):
        raise TypeError("contributors must be a list of contributor ids")
    session = check_session(session)
    if summary_store is not None:
        store = summary_store
    elif session is not None:
        store = session.summary_store
    else:
        raise TypeError(
            "prepare_summaries writes summaries to a store, and none was given: pass summary_store=SummaryStore(path) "
            "or session=PlanningSession(), and the same store or session to preview and generate"
        )
    s = setup(target, model, None, None, counter, capacity_resolver, token_budget)
    gathered = (await drive_async(gather(s.prompt, s.prompt.validate_input(input)))).apply_budget(s.token_budget, s.counter)
    planner = Planner(gathered, plan_options(s, None, None, store, None, None, session))
    summarizable = [c for c in planner.contributors if c.shape.summary is not None and c.summary_key is not None]
    if contributors is not None:
        known = {c.id for c in summarizable}
        unknown = [c for c in contributors if c not in known]
        if unknown:
            raise ValueError(
                f"no summarizable contributor named {unknown} in {s.prompt.id!r} for this input; "
                f"summarizable here: {', '.join(sorted(known)) or 'none'}"
            )
        summarizable = [c for c in summarizable if c.id in contributors]
    return [await prepare_one(c, store, s.counter, allow_models=allow_models) for c in summarizable]


async def prepare_one(c: Contributor, store: SummaryStore, counter: TokenCounter, *, allow_models: bool) -> PreparedSummary:
    """Prepare the summary of one summarizable contributor into ``store``, unless it is there."""
    summ = c.shape.summary
    assert summ is not None and c.summary_key is not None
    if not (allow_models and summ.strategy.needs_model) or store.get(c.summary_key) is not None:
        return prepare_without_model(c, store, counter)
    model_name = model_name_of(summ.model)
    try:
        text = await summ.strategy.summarize_with(summ.model, c.full_text)  # type: ignore[union-attr]
    except SummaryError as exc:
        return PreparedSummary(c.id, summ.strategy.key, model_name, "failed", None, str(exc))
    store.put(c.summary_key, summ.strategy, model_name, text)
    return PreparedSummary(c.id, summ.strategy.key, model_name, "prepared", counter.count(text))


def prepare_without_model(c: Contributor, store: SummaryStore, counter: TokenCounter) -> PreparedSummary:
    """``prepare_one`` without calling a model: an extractive summary is prepared, one by a model is
    ``"needs-model"``. Never awaits, so it runs inside or outside an event loop."""
    summ = c.shape.summary
    assert summ is not None and c.summary_key is not None
    strategy, model_name = summ.strategy.key, model_name_of(summ.model)
    existing = store.get(c.summary_key)
    if existing is not None:
        return PreparedSummary(c.id, strategy, model_name, "already-prepared", counter.count(existing.text))
    if summ.strategy.needs_model:
        detail = f"a hierarchical summary calls the model {model_name or '?'!r}; pass allow_models=True to prepare it"
        return PreparedSummary(c.id, strategy, model_name, "needs-model", None, detail)
    text = summ.strategy.summarize_text(c.full_text)  # type: ignore[union-attr]
    store.put(c.summary_key, summ.strategy, model_name, text)
    return PreparedSummary(c.id, strategy, model_name, "prepared", counter.count(text))


def to_prepare(plan: Plan) -> list[Contributor]:
    """The summaries ``plan`` lacks that its ladders say to prepare before sending (``on_miss="prepare"``)."""
    return [c for c in plan.missing_summaries if c.shape.summary is not None and c.shape.summary.on_miss == "prepare"]


async def prepare_missing(plan: Plan, store: SummaryStore, counter: TokenCounter, *, allow_models: bool) -> list[PreparedSummary]:
    """What ``generate`` does before sending ``plan``: prepare each summary of ``to_prepare(plan)``."""
    return [await prepare_one(c, store, counter, allow_models=allow_models) for c in to_prepare(plan)]


def preview_as_sent(
    target: Any,
    *,
    input: Any = None,
    summary_store: SummaryStore,
    model: Any = None,
    input_budget: Any = None,
    token_budget: int | None = None,
    counter: TokenCounter | None = None,
    capacity_resolver: Any = None,
    messages: Mapping[str, Any] | None = None,
) -> tuple[RequestPreview, list[PreparedSummary]]:
    """``preview`` of the request ``generate`` would send first, and the summaries this took.
    ``messages`` (``{"history", "turn", "support_required"}``) plans it as a later step of a run
    sends it: the caller's history, the user prompt, then that run's tool calls and results, with
    ``read_offload`` offered once a result was offloaded.

    Like ``generate``, it prepares the summaries the plan lacks and its ladders say to prepare, but
    only those that need no model (extractive), into ``summary_store``. Returns the preview and one
    ``PreparedSummary`` per summary ``generate`` would prepare: ``"prepared"`` (done here),
    ``"needs-model"`` (``generate`` prepares it with its model before sending; the preview is what it
    sends if that fails), or ``"failed"``. A needs-model summary's "would keep more fidelity"
    warning is left out of the preview's warnings (the ladder authorises the fallback); a missing
    ``on_miss="fail"`` summary's warning says that ``generate`` raises.
    """
    s = setup(target, model, input_budget, None, counter, capacity_resolver, token_budget)
    options = plan_options(s, list((messages or {}).get("history") or []) or None, None, summary_store, None, None)
    if messages:
        options.turn = [dict(m) for m in messages.get("turn") or []]
        options.support_required = bool(messages.get("support_required"))
    gathered = drive_sync(gather(s.prompt, s.prompt.validate_input(input))).apply_budget(s.token_budget, s.counter)
    plan = Planner(gathered, options).plan()
    done: list[PreparedSummary] = []
    if to_prepare(plan):
        done = [prepare_without_model(c, summary_store, s.counter) for c in to_prepare(plan)]
        if any(d.status == "prepared" for d in done):
            plan = Planner(gathered, options).plan()
    still = {c.id for c in to_prepare(plan)}
    done = [d for d in done if d.status == "prepared" or d.contributor in still]
    planned = to_preview(plan, s, gathered)
    pending = {d.contributor for d in done if d.status == "needs-model"}
    strict = [c.id for c in plan.missing_summaries if c.shape.summary is not None and c.shape.summary.on_miss == "fail"]
    if pending or strict:
        warnings = [w for w in planned.warnings if not any(w.startswith(f"{c!r}: a summary would keep more fidelity") for c in (*pending, *strict))]
        warnings += [
            f"{c!r}: generate raises REPRESENTATION_UNAVAILABLE unless the summary store it is given has this summary "
            "(on_miss='fail'); prepare it into that store with prepare_summaries"
            for c in strict
        ]
        planned = dataclasses.replace(planned, warnings=warnings)
    return planned, done


def prepare_summaries(
    target: Any,
    *,
    input: Any = None,
    summary_store: SummaryStore | None = None,
    allow_models: bool = False,
    contributors: Sequence[str] | None = None,
    token_budget: int | None = None,
    model: Any = None,
    counter: TokenCounter | None = None,
    capacity_resolver: Any = None,
    session: PlanningSession | None = None,
) -> list[PreparedSummary]:
    """Prepare the missing summaries of ``target`` (a ``Prompt`` or ``Agent``) for one ``input``.

    Writes to ``summary_store``, else to the store of ``session`` (a ``PlanningSession``); one of
    them is required (there is no process-wide store). Pass the same store or session to ``preview``
    and ``generate``. Only extractive summaries are prepared unless ``allow_models``
    (a hierarchical summary calls its ladder's model). ``contributors`` limits it to those ids;
    ``token_budget`` is the system-text budget, as in ``preview``. Returns one ``PreparedSummary``
    per summarizable contributor, in planning order.
    """
    return run_sync(
        aprepare_summaries(
            target, input=input, summary_store=summary_store, allow_models=allow_models, contributors=contributors,
            token_budget=token_budget, model=model, counter=counter, capacity_resolver=capacity_resolver, session=session,
        )
    )


__all__ = ["PreparedSummary", "aprepare_summaries", "prepare_missing", "prepare_summaries", "preview_as_sent"]
