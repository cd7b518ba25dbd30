"""The contract between the inspector engine and its two front ends (web page and TUI).

The engine (``session.py``) implements ``ProjectSession``; the web app (``crux_devtools/web``) and
the TUI (``crux_devtools/tui``) are thin adapters that only read reports and call these methods.
Front-end tests may use any object with the same methods (a fake session).

A *report* is plain JSON-serialisable data (``dict``) produced by the worker process. Its typed form
is ``crux_devtools/shapes.py`` (``Report``, ``PromptReport``, ``ExampleReport``, ``PreviewDict``,
``LoadErrorDict``, ...; named in ``report_types.py`` and re-exported here): the front ends annotate
what they read with it, so mypy checks them, the worker boundary checks every message against it
(``wire.py``), and a test validates real reports against it. Every ``LoadError`` is built by
``errors.LoadError`` (one constructor per kind of fault) and stored as its ``to_dict()``.

    {
      "version": int,                 # increments on each new report held by the session
      "project": str,                 # absolute project folder
      "generated_at": str,            # ISO 8601 UTC
      "duration_ms": float,           # worker evaluation time
      "stale": bool,                  # True: some module failed to load; its last good prompts are shown
      "errors": [LoadError, ...],     # load errors of the latest attempt (shown even when stale)
      "prompts": [PromptReport, ...], # in discovery order
      "hash": str,                    # content hash of the report (history key)
    }

    LoadError = {"file": str | None (relative to the project), "line": int | None,
                 "type": str, "message": str, "traceback": str}

    PromptReport = {
      "id": str, "kind": "prompt" | "agent", "module": str, "file": str, "line": int | None,
      "input_schema": dict,           # JSON schema of the merged input model
      "contexts": [ {"id", "kind", "owner", "conditional", "priority", "tools"} ],  # static tree
      "tools": [str],                 # every tool name reachable
      "default_budget": int | None,   # prompt.token_budget (the prompt's default system-text budget),
                                      # or the agent's input_budget.max; else None
      "status": str,                  # a key of crux_devtools/statuses.py, derived from the examples' (see below)
      "total_tokens": int,            # of the first example
      "has_model": bool,              # agents with a model can be run
      "examples": [ExampleReport, ...],
    }

    ExampleReport = {
      "name": str, "input": dict,
      "error": LoadError | None,      # validation or callback failure for this example
      "inspection": dict | None,      # Inspection.to_dict()
      "preview": dict | None,         # RequestPreview.to_dict() (planning layer), if available
      "preview_error": PlanError | None,  # the planner refused: RequestCompositionError.to_dict()
    }                                 # (any other exception while planning is the example's "error")

    PlanError = {"code": str, "message": str, "diagnostics": [{"id", "code", "contributor", "tokens",
                 "message"}], "request_id": str | None}

Events reach subscribers as ``SessionEvent`` values, on the session's event loop.

Additive keys; front ends may ignore them:
    report["notice"]: str | None       # set when no prompt was found: says so and how to add one
    report["modules_found"]: bool      # discovery found at least one module
    PromptReport["note"]: str | None   # e.g. "has required inputs and no examples; add examples=..."
    PromptReport["contexts"][i]["ladder"]: str | None   # ladder type wrapping the context, if any
    PromptReport["contexts"][i]["file"], ["line"]: str | None, int | None
                                                       # where a module-level context is assigned;
                                                       # None for one defined inline in a use=[...]
    ExampleReport["truncated"]: bool   # a text over 200 KB was cut (token counts are of the full text)
    PromptReport["stale"]: bool        # its module failed to load: this is its last good report;
                                       # read it with ``is_stale`` (falls back to the report's flag)
    PromptReport["model_kind"]: "scripted" | "real" | None
                                       # the model a Run calls: a ScriptedModel (offline, free), any
                                       # other adapter ("real": it costs money and runs real tools;
                                       # ask before running), or None (nothing to call: not runnable).
                                       # "has_model" is true exactly when model_kind is not None: an
                                       # agent whose model is an adapter, or a prompt(..., model=adapter).

Runs. ``session.run(...)`` returns a *run*: the JSON a recorded run has
(``id, target, kind, file, line, origin, started_at, duration_ms, status, error, model, input,
text, usage, steps``) with ``origin="inspector"``, recorded in ``<project>/.crux/runs.sqlite3`` like
any run, plus ``"recorded": bool`` (whether it reached the store; ``"record_error"`` says why not).
A failed run has ``status="error"`` and ``error={type, message, traceback}``; a target that cannot be
run, or a worker fault, also comes back in this shape (``id`` None, ``recorded`` False). Each Run
starts from the definitions as loaded: a ``ScriptedModel`` is replayed from its first response.
``session.runs()`` is the project's ``RunStore`` (``crux_devtools.core.record.runstore``), or ``None`` when
the file cannot be opened (a warning is logged once). While anyone is subscribed, the session polls
the store and emits ``SessionEvent(kind="runs", version=<store change token>, summary="1 new run:
<target> (<status>)", runs=[new run ids, oldest first])`` within about 250 ms of any process writing.

What is sent; the web page, the TUI and ``inspect`` read the same keys:
    ExampleReport["status"]: "fits" | "over-optimize-at" | "over-limit" | "over-budget" | "unmatched" | "invalid-input" | "error"
        # the example's one status, decided once in the worker (evaluate.example_status); the
        # states, their words and whether ``check`` fails on them are ``crux_devtools/statuses.py``'s. Every
        # surface reads this value and none decides it again from the plan or the inspection.
    ExampleReport["preview"]: RequestPreview.to_dict(), planned with the SAME token_budget as the
        inspection (a context the inspection shows as dropped is not sent), with these keys:
        ["sent"]: {"system": str, "messages": [dict], "tools": [{"name", "description",
                   "parameters": <JSON schema>}], "max_tokens": int | None} | None
                   # the literal request; None when over-limit. Texts over 200 KB are cut as in the
                   # inspection (then ExampleReport["truncated"] is True); token counts stay exact.
        ["input_tokens"]: tokens of exactly ``sent`` (system + messages + tool schemas)
        ["contributions"][i]: {"contributor", "kind", "representation", "tokens", "tools",
                   "span": [start, end] | None,   # this part's characters in sent["system"]
                   "variant": str | None,          # the prefer alternative's id ("authored")
                   "handle": str | None}           # the offload handle ("offload"); a run gets its own
        ["tool_tokens"]: {tool name: tokens of its schema}
        ["dropped"]: [{"id", "priority", "tokens", "reason"}]   # dropped by token_budget: not sent
        ["token_budget"]: int | None; ["max_input_tokens"], ["optimize_at"]: the request's limits
        ["capacity_source"]: "model" | "profile" | "resolver" | "conservative"
        ["candidates"][i]["input_tokens"] and ["tokens"] are None for an unprepared summary:
                   front ends say "not prepared", never "None tokens".
    ExampleReport["summaries"]: [SummaryState]   # one per summarizable contributor of the example
        SummaryState = {"contributor": str, "strategy": str (e.g. "extractive:0.3"),
                        "needs_model": bool,      # hierarchical: preparing calls the model
                        "model": str | None, "prepared": bool}
    PromptReport["total_tokens"]: the first example's planned input tokens (preview.input_tokens; for
        an over-limit plan, what the cheapest candidate needs); the inspection's total only when
        that example has no plan at all.
    PromptReport["status"]: the worst of its examples' statuses (``statuses.SEVERITY``); "not-checked"
        when it has required inputs and no examples (nothing could be resolved; ``note`` says so).
    report["imported_note"]: str | None   # which files the worker imports (runs) on every save, and why
    PromptReport["plan_model"]: PlanModel, the model every example of this target is planned against:
        {"name": str | None,
         "source": "prompt" | "agent" | "project" | "none",
                   # prompt(..., model=...) / the agent's model / default_model in pyproject.toml /
                   # no model named (the conservative 8k profile)
         "label": str,            # those in words, e.g. "project default from pyproject.toml"
         "profile": str | None,   # "pyproject.toml:LINE" when a [tool.crux-devtools.models.NAME] table
                                  # gave the capacity, else None
         "hint": str | None}      # how to name a model, when none is named
        The window, reserve, margin and confidence it gave are in each example's preview.
A project may name models in its pyproject.toml (read in the server, passed to the worker):
    [tool.crux-devtools]
    default_model = "NAME"                      # planned against when a prompt names no model
    [tool.crux-devtools.models.NAME]            # a capacity profile per model name
    context_window = 128000
    default_output_reserve = 4096
    counting_confidence = "estimated"           # exact | estimated | conservative
Prepared summaries live in ``DIR/.crux/summaries.sqlite3``; every preview of the worker reads it.
``ProjectSession.prepare_summaries(prompt_id, *, example=None, input=None, contributor=None,
allow_models=False, token_budget=None)`` prepares the missing summaries of one example there
(extractive ones only, unless ``allow_models``: a hierarchical summary calls its model), then
reloads the project; it returns ``{"prepared": [{"contributor", "strategy", "tokens"}],
"skipped": [{"contributor", "reason", "needs_model", "model"}], "error": LoadError | None}``
(``needs_model``: hierarchical, not prepared without ``allow_models``).

Incremental evaluation and what is watched:
    report["load"]: "full" | "incremental"
        # "full": every module imported in a fresh worker (the first load, ``reload()`` with no files,
        # a change to pyproject.toml, a module added, removed or renamed, a changed library outside
        # the project, a module that hung or ended a worker, or an update that failed);
        # "incremental": the held worker re-imported the changed modules and those importing them.
    report["reevaluated"]: [str]     # ids of the prompts and agents this load evaluated (all of them
                                     # for a full load); the others keep their previous report
    SessionEvent.load, SessionEvent.reevaluated: the same, on "report" and "error" events
    report["verified"]: bool         # a fresh load of the whole project, with no change since it
                                     # started, gave this report (False: a verification is to come)
    report["disagreements"]: int     # prompts (and the error list, as one) that verification corrected
    SessionEvent.verification: "" | "agreed" | "corrected"   # a verification's event
Verification: once no change came for ``verify_after`` seconds (0.3 by default), a report that is not
verified, or any change under the project that no module read, leads to a fresh load of the whole
project in the spare worker; it replaces the report where they differ (each difference is logged and
counted in ``session.disagreements``) and its worker becomes the held one. ``settled()`` waits for it.
A save counts only when the file can change a report (``session.is_watched(relative path)``):
``pyproject.toml``, a Python file, or a file user code read (or a folder it listed) in the worker,
never one matching ``[tool.crux-devtools] watch_ignore = ["glob", ...]`` (a bad value is a
ConfigError at ``pyproject.toml:LINE``). Writes under ``.crux/``, logs and SQLite files never count.
A Python file that no module imports changes nothing (no event, ``session.evaluations`` unchanged).

An example named "empty" is the ``{}`` input used when a prompt has no examples and allows it.
``evaluate``/``run`` never raise for user faults: the failure is in ``error`` (a LoadError).
``ProjectSession(root, *, timeout=10.0, debounce=0.05, watch=True, history=True, prewarm=True,
fork=True, verify_after=0.3)`` also works as ``async with ProjectSession(...) as session:``;
``await session.settled()`` waits until no evaluation or verification is running or pending (tests,
benchmarks). Create and use a session on one
event loop.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Protocol

from .report_types import ExampleReport, LoadErrorDict, PlanErrorDict, PrepareResult, PromptReport, Report

EventKind = Literal["loading", "report", "error", "runs", "run"]


@dataclass(frozen=True, slots=True)
class SessionEvent:
    """Something changed in the session. ``summary`` is one human sentence for a notification."""

    kind: EventKind
    version: int
    summary: str
    changed_files: list[str] = field(default_factory=list)
    changed_prompts: list[str] = field(default_factory=list)
    runs: list[str] = field(default_factory=list)  # kind "runs": the ids of the new runs, oldest first; "run": the runs being recorded (a step streaming)
    load: str = ""  # kinds "report" and "error": "incremental" or "full" (see "Incremental evaluation")
    reevaluated: list[str] = field(default_factory=list)  # kinds "report" and "error": the prompts evaluated
    verification: Literal["", "agreed", "corrected"] = ""  # a verification's event: it agreed (only the mark changed) or corrected the report

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def failed_run(target: str, error: LoadErrorDict, *, input: Any = None, kind: str | None = None) -> dict[str, Any]:
    """A run that never started (not runnable, worker fault), in the shape of a recorded run."""
    return {
        "id": None, "target": target, "kind": kind, "file": error["file"], "line": error["line"], "origin": "inspector",
        "started_at": None, "duration_ms": None, "status": "error", "error": error, "model": None, "input": input,
        "text": None, "usage": None, "steps": [], "recorded": False,
    }


def find_prompt(report: Report | None, prompt_id: str | None) -> PromptReport | None:
    """The ``PromptReport`` with this id in ``report``, or ``None``: the one lookup both front ends use."""
    if report is None or prompt_id is None:
        return None
    return next((p for p in report["prompts"] if p["id"] == prompt_id), None)


def is_stale(report: Report | None, prompt: PromptReport | None) -> bool:
    """Whether ``prompt`` is shown from an earlier load because its module failed to load now.

    Staleness is per module (``PromptReport["stale"]``); a report without it is stale as a whole.
    """
    if prompt is not None and "stale" in prompt:
        return prompt["stale"]
    return report is not None and report["stale"]


def has_ladders(prompt: PromptReport) -> bool:
    """Whether the planner found ladder rungs to choose from in any example of ``prompt``."""
    return any(ex["preview"] is not None and ex["preview"]["candidates"] for ex in prompt["examples"])


def default_budget_target(prompt: PromptReport) -> str:
    """What a budget control limits by default: ``"request"`` (the planner picks ladder rungs) for
    agents and prompts with ladders, else ``"system"`` (the resolver drops whole contexts)."""
    return "request" if prompt["kind"] == "agent" or has_ladders(prompt) else "system"


class SessionLike(Protocol):
    """What a front end may rely on."""

    root: Any  # pathlib.Path of the project
    history_warning: str | None  # why history is off (a damaged or read-only .crux), for the UIs to show

    @property
    def report(self) -> Report | None:
        """The latest report (the last good one, ``stale`` set, when the latest load failed)."""
        ...

    def subscribe(self, callback: Callable[[SessionEvent], Any]) -> Callable[[], None]:
        """Call ``callback(event)`` on every change; returns a function that unsubscribes."""
        ...

    async def start(self) -> None:
        """Load the project once (the first report), then watch files until ``stop``."""
        ...

    async def stop(self) -> None: ...

    async def reload(self) -> None:
        """Re-evaluate the project now."""
        ...

    async def evaluate(
        self,
        prompt_id: str,
        *,
        example: str | None = None,
        input: dict[str, Any] | None = None,
        token_budget: int | None = None,
        input_budget: int | None = None,
    ) -> ExampleReport:
        """One example (or a custom input) of one prompt, re-evaluated in the worker with a budget.

        Returns an ``ExampleReport``. ``input`` takes precedence over ``example``.
        """
        ...

    async def run(
        self, prompt_id: str, *, example: str | None = None, input: dict[str, Any] | None = None, confirm: str | bool | None = None
    ) -> dict[str, Any]:
        """Run an agent (or a prompt with a model adapter) in the worker; returns the whole run
        (see "Runs" above): ``text``, ``steps`` ([Step.to_dict()...]), ``status``, ``error``, ...
        A real model runs only with ``confirm`` (its token, or ``True``): else the answer is a
        confirmation request and nothing ran (``run_confirm.asks_confirmation``)."""
        ...

    def runs(self) -> Any:
        """The project's ``RunStore`` (recorded runs), or ``None`` when it cannot be opened."""
        ...

    async def prepare_summaries(
        self,
        prompt_id: str,
        *,
        example: str | None = None,
        input: dict[str, Any] | None = None,
        contributor: str | None = None,
        allow_models: bool = False,
        token_budget: int | None = None,
    ) -> PrepareResult:
        """Prepare an example's missing summaries in the project's summary store, then reload.

        Returns ``{"prepared": [...], "skipped": [...], "error": LoadError | None}`` (see above).
        """
        ...

    def previous_system(self, prompt_id: str, example: str) -> str | None:
        """The system text of this prompt and example in the previous distinct report, if any."""
        ...


__all__ = [
    "EventKind", "ExampleReport", "LoadErrorDict", "PlanErrorDict", "PrepareResult", "PromptReport", "Report",
    "SessionEvent", "SessionLike", "default_budget_target", "failed_run", "find_prompt", "has_ladders", "is_stale",
]
