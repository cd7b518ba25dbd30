"""The core resolver library. Never imports the inspector, the web app or the TUI.

Public names load on first use (PEP 562), so a light module of the core (``runstore``, read by the
inspector's session process) can be imported without loading pydantic, tiktoken and the planner.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # What type checkers read (``X as X``: re-exported, for strict checkers too). At run time the table
    # ``_SOURCES`` below is the one source: ``__all__`` and ``__getattr__`` are derived from it, and
    # tests/functional/core/test_runstore.py keeps these imports equal to it.
    from .plan.cache_plan import CachePolicy as CachePolicy
    from .plan.budget import (
        CONSERVATIVE_MODEL_CAPACITY as CONSERVATIVE_MODEL_CAPACITY,
        InputBudget as InputBudget,
        ModelCapacityProfile as ModelCapacityProfile,
        merge_input_budget as merge_input_budget,
        resolve_model_capacity_profile as resolve_model_capacity_profile,
    )
    from .plan.ladders import droppable as droppable, offload as offload, offloadable as offloadable, prefer as prefer, summarizable as summarizable
    from .plan.offload_store import OffloadReceipt as OffloadReceipt, OffloadStore as OffloadStore
    from .plan.requests import PlanningSession as PlanningSession, apreview as apreview, preview as preview
    from .plan.preparing import PreparedSummary as PreparedSummary, aprepare_summaries as aprepare_summaries, prepare_summaries as prepare_summaries
    from .plan.receipts import (
        Adaptation as Adaptation,
        Candidate as Candidate,
        Contribution as Contribution,
        Receipt as Receipt,
        RequestInspection as RequestInspection,
        RequestPreview as RequestPreview,
        inspect_request as inspect_request,
    )
    from .record.recording import RunRecorder as RunRecorder, record_runs as record_runs
    from .record.redaction import redact_values as redact_values
    from .plan.agents import Agent as Agent, agent as agent
    from .compose.examples import Example as Example
    from .plan.expectations import Expect as Expect, ExpectationResult as ExpectationResult, example as example, expect as expect
    from .run.runtime import GenerateResult as GenerateResult, Step as Step, ToolResult as ToolResult, agenerate as agenerate, generate as generate
    from .plan.summaries import SummaryStore as SummaryStore, summarize as summarize
    from .compose.contexts import Conditional as Conditional, Context as Context, Match as Match, context as context, match as match, when as when
    from .memory import (
        ContextAssembly as ContextAssembly,
        Evidence as Evidence,
        Memory as Memory,
        MemoryStore as MemoryStore,
        SectionSummary as SectionSummary,
        facts as facts,
        memory as memory,
        recent_messages as recent_messages,
    )
    from .compose.skills import Skill as Skill, skill as skill
    from .errors import (
        CallbackError as CallbackError,
        CruxError as CruxError,
        DamagedRunError as DamagedRunError,
        Diagnostic as Diagnostic,
        ErrorInfo as ErrorInfo,
        MemoryStoreError as MemoryStoreError,
        ModelError as ModelError,
        OffloadError as OffloadError,
        ReplayError as ReplayError,
        RequestCompositionError as RequestCompositionError,
        RunError as RunError,
        RunStoreError as RunStoreError,
        SummaryError as SummaryError,
    )
    from .run.models import (
        AnthropicModel as AnthropicModel,
        Model as Model,
        ModelRequest as ModelRequest,
        ModelResponse as ModelResponse,
        OpenAICompatibleModel as OpenAICompatibleModel,
        ScriptedModel as ScriptedModel,
        ToolCall as ToolCall,
        tool_call as tool_call,
    )
    from .run.record_call import RecordedCall as RecordedCall, record_call as record_call
    from .record.otel_export import emit_otel as emit_otel
    from .compose.prompts import Prompt as Prompt, prompt as prompt
    from .compose.results import Drop as Drop, Exclusion as Exclusion, Inspection as Inspection, Part as Part, Resolved as Resolved
    from .tokens import TiktokenCounter as TiktokenCounter, TokenCounter as TokenCounter, default_counter as default_counter
    from .tools import Tool as Tool, tool as tool
    from .compose.validation import InputValidationError as InputValidationError


# The one table of public names: the module each lives in. ``__all__`` here and in ``crux_devtools``
# and the lazy loading below are derived from it.
_SOURCES: dict[str, tuple[str, ...]] = {
    "plan.budget": ("CONSERVATIVE_MODEL_CAPACITY", "InputBudget", "ModelCapacityProfile", "merge_input_budget", "resolve_model_capacity_profile",),
    "plan.cache_plan": ("CachePolicy",),
    "plan.ladders": ("droppable", "offload", "offloadable", "prefer", "summarizable",),
    "plan.offload_store": ("OffloadReceipt", "OffloadStore",),
    "plan.requests": ("PlanningSession", "apreview", "preview",),
    "plan.preparing": ("PreparedSummary", "aprepare_summaries", "prepare_summaries",),
    "plan.receipts": ("Adaptation", "Candidate", "Contribution", "Receipt", "RequestInspection", "RequestPreview", "inspect_request",),
    "plan.agents": ("Agent", "agent",),
    "compose.examples": ("Example",),
    "plan.expectations": ("Expect", "ExpectationResult", "example", "expect",),
    "run.runtime": ("GenerateResult", "Step", "ToolResult", "agenerate", "generate",),
    "record.recording": ("RunRecorder", "record_runs",),
    "record.redaction": ("redact_values",),
    "plan.summaries": ("SummaryStore", "summarize",),
    "compose.contexts": ("Conditional", "Context", "Match", "context", "match", "when",),
    "memory": ("ContextAssembly", "Evidence", "Memory", "MemoryStore", "SectionSummary", "facts", "memory", "recent_messages",),
    "compose.skills": ("Skill", "skill",),
    "errors": (
        "CallbackError", "CruxError", "DamagedRunError", "Diagnostic", "ErrorInfo", "MemoryStoreError", "ModelError", "OffloadError",
        "ReplayError", "RequestCompositionError", "RunError", "RunStoreError", "SummaryError",
    ),
    "run.record_call": ("RecordedCall", "record_call",),
    "record.otel_export": ("emit_otel",),
    "run.models": ("AnthropicModel", "Model", "ModelRequest", "ModelResponse", "OpenAICompatibleModel", "ScriptedModel", "ToolCall", "tool_call",),
    "compose.prompts": ("Prompt", "prompt",),
    "compose.results": ("Drop", "Exclusion", "Inspection", "Part", "Resolved",),
    "tokens": ("TiktokenCounter", "TokenCounter", "default_counter",),
    "tools": ("Tool", "tool",),
    "compose.validation": ("InputValidationError",),
}
_MODULE_OF = {name: module for module, names in _SOURCES.items() for name in names}
if not TYPE_CHECKING:  # type checkers read the public names from the imports above
    __all__ = list(_MODULE_OF)


def __getattr__(name: str) -> Any:
    """Load a public name from its module on first use, then cache it here."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_MODULE_OF))


class _Core(types.ModuleType):
    """Keeps public names from being shadowed by submodules: importing the ``memory`` subpackage
    would otherwise bind it over the public ``memory()`` function (the eager imports used to rebind it)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _MODULE_OF and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Core
