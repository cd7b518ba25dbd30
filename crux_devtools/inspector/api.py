"""The contract between the inspector engine and its two front ends (web page and TUI).

The engine (``session.py``) implements ``ProjectSession``; the web app (``crux_devtools/web``) and
the TUI (``crux_devtools/tui``) are thin adapters that only read reports and call these methods.
Front-end tests may use any object with the same methods (a fake session).

A *report* is plain JSON-serialisable data (``dict``) produced by the worker process:

    {
      "version": int,                 # increments on each new report held by the session
      "project": str,                 # absolute project folder
      "generated_at": str,            # ISO 8601 UTC
      "duration_ms": float,           # worker evaluation time
      "stale": bool,                  # True: the latest load failed; this is the last good report
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
      "status": "fits" | "over" | "error",
      "total_tokens": int,            # of the first example
      "has_model": bool,              # agents with a model can be run
      "examples": [ExampleReport, ...],
    }

    ExampleReport = {
      "name": str, "input": dict,
      "error": LoadError | None,      # validation or callback failure for this example
      "inspection": dict | None,      # Inspection.to_dict()
      "preview": dict | None,         # RequestPreview.to_dict() (planning layer), if available
      "preview_error": dict | None,   # RequestCompositionError.to_dict() or LoadError
    }

Events reach subscribers as ``SessionEvent`` values, on the session's event loop.

Additive keys (engine, issue 5); front ends may ignore them:
    report["notice"]: str | None       # set when no prompt was found: says so and how to add one
    report["modules_found"]: bool      # discovery found at least one module
    PromptReport["note"]: str | None   # e.g. "has required inputs and no examples; add examples=..."
    PromptReport["contexts"][i]["ladder"]: str | None   # ladder type wrapping the context, if any
    PromptReport["contexts"][i]["file"], ["line"]: str | None, int | None
                                                       # where a module-level context is assigned;
                                                       # None for one defined inline in a use=[...]
    ExampleReport["truncated"]: bool   # a text over 200 KB was cut (token counts are of the full text)

What is sent (issue 12); the web page, the TUI and ``inspect`` read the same keys:
    ExampleReport["status"]: "fits" | "over" | "error"
        # the example's one status, from the plan when there is one: "over" when the plan is
        # over-limit (nothing would be sent) or when the system text is over the prompt's
        # token_budget even after every drop; "error" when the example or its planning failed.
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
    PromptReport["total_tokens"]: the first example's planned input tokens (preview.input_tokens);
        the inspection's total only when that example has no plan at all.
    PromptReport["status"]: "error" if any example failed, else the first example's status.
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

An example named "empty" is the ``{}`` input used when a prompt has no examples and allows it.
``evaluate``/``run`` never raise for user faults: the failure is in ``error`` (a LoadError).
``ProjectSession(root, *, timeout=10.0, debounce=0.05, watch=True, history=True, prewarm=True,
fork=True)`` also works as ``async with ProjectSession(...) as session:``; ``await session.settled()``
waits until no evaluation is running or pending (tests, benchmarks). Create and use a session on one
event loop.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Protocol

EventKind = Literal["loading", "report", "error"]


@dataclass(frozen=True, slots=True)
class SessionEvent:
    """Something changed in the session. ``summary`` is one human sentence for a notification."""

    kind: EventKind
    version: int
    summary: str
    changed_files: list[str] = field(default_factory=list)
    changed_prompts: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def find_prompt(report: dict[str, Any] | None, prompt_id: str | None) -> dict[str, Any] | None:
    """The ``PromptReport`` with this id in ``report``, or ``None``: the one lookup both front ends use."""
    if not report or prompt_id is None:
        return None
    return next((p for p in report.get("prompts", []) if p.get("id") == prompt_id), None)


def has_ladders(prompt: dict[str, Any]) -> bool:
    """Whether the planner found ladder rungs to choose from in any example of ``prompt``."""
    return any((ex.get("preview") or {}).get("candidates") for ex in prompt.get("examples") or [])


def default_budget_target(prompt: dict[str, Any]) -> str:
    """What a budget control limits by default: ``"request"`` (the planner picks ladder rungs) for
    agents and prompts with ladders, else ``"system"`` (the resolver drops whole contexts)."""
    return "request" if prompt.get("kind") == "agent" or has_ladders(prompt) else "system"


class SessionLike(Protocol):
    """What a front end may rely on."""

    root: Any  # pathlib.Path of the project

    @property
    def report(self) -> dict[str, Any] | None:
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
    ) -> dict[str, Any]:
        """One example (or a custom input) of one prompt, re-evaluated in the worker with a budget.

        Returns an ``ExampleReport``. ``input`` takes precedence over ``example``.
        """
        ...

    async def run(self, prompt_id: str, *, example: str | None = None, input: dict[str, Any] | None = None) -> dict[str, Any]:
        """Run an agent in the worker; returns ``{"text", "steps": [Step.to_dict()...], "error"}``."""
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
    ) -> dict[str, Any]:
        """Prepare an example's missing summaries in the project's summary store, then reload.

        Returns ``{"prepared": [...], "skipped": [...], "error": LoadError | None}`` (see above).
        """
        ...

    def previous_system(self, prompt_id: str, example: str) -> str | None:
        """The system text of this prompt and example in the previous distinct report, if any."""
        ...
