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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .budget import model_name_of
from .callbacks import drive_async, run_sync
from .planner import Planner, gather
from .requests import PlanningSession, check_session, plan_options, setup
from .results import _ToDict
from .summaries import SummaryError, SummaryStore
from .tokens import TokenCounter

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
    out: list[PreparedSummary] = []
    for c in summarizable:
        summ = c.shape.summary
        assert summ is not None and c.summary_key is not None
        strategy, model_name = summ.strategy.key, model_name_of(summ.model)
        existing = store.get(c.summary_key)
        if existing is not None:
            out.append(PreparedSummary(c.id, strategy, model_name, "already-prepared", s.counter.count(existing.text)))
            continue
        if summ.strategy.needs_model and not allow_models:
            detail = f"a hierarchical summary calls the model {model_name or '?'!r}; pass allow_models=True to prepare it"
            out.append(PreparedSummary(c.id, strategy, model_name, "needs-model", None, detail))
            continue
        try:
            if summ.strategy.needs_model:
                text = await summ.strategy.summarize_with(summ.model, c.full_text)  # type: ignore[union-attr]
            else:
                text = summ.strategy.summarize_text(c.full_text)  # type: ignore[union-attr]
        except SummaryError as exc:
            out.append(PreparedSummary(c.id, strategy, model_name, "failed", None, str(exc)))
            continue
        store.put(c.summary_key, summ.strategy, model_name, text)
        out.append(PreparedSummary(c.id, strategy, model_name, "prepared", s.counter.count(text)))
    return out


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


__all__ = ["PreparedSummary", "aprepare_summaries", "prepare_summaries"]
