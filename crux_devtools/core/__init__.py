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
    # Type checkers see the real names; at run time ``__getattr__`` loads them from ``_SOURCES``.
    from .plan.budget import (
        CONSERVATIVE_MODEL_CAPACITY,
        InputBudget,
        ModelCapacityProfile,
        merge_input_budget,
        resolve_model_capacity_profile,
    )
    from .plan.ladders import droppable, offload, offloadable, prefer, summarizable
    from .plan.offload_store import OffloadReceipt, OffloadStore
    from .plan.requests import PlanningSession, apreview, preview
    from .plan.preparing import PreparedSummary, aprepare_summaries, prepare_summaries
    from .plan.receipts import Adaptation, Candidate, Contribution, Receipt, RequestInspection, RequestPreview, inspect_request
    from .record.recording import RunRecorder, record_runs
    from .record.redaction import redact_values
    from .plan.agents import Agent, agent
    from .run.runtime import GenerateResult, Step, ToolResult, agenerate, generate
    from .plan.summaries import SummaryStore, summarize
    from .compose.contexts import Conditional, Context, Match, context, match, when
    from .memory import ContextAssembly, Evidence, Memory, MemoryStore, SectionSummary, facts, memory, recent_messages
    from .compose.skills import Skill, skill
    from .errors import (
        CallbackError,
        CruxError,
        Diagnostic,
        ErrorInfo,
        MemoryStoreError,
        ModelError,
        OffloadError,
        ReplayError,
        RequestCompositionError,
        RunError,
        RunStoreError,
        SummaryError,
    )
    from .run.models import AnthropicModel, Model, ModelRequest, ModelResponse, OpenAICompatibleModel, ScriptedModel, ToolCall, tool_call
    from .run.record_call import RecordedCall, record_call
    from .record.otel_export import emit_otel
    from .compose.prompts import Prompt, prompt
    from .compose.results import Drop, Exclusion, Inspection, Part, Resolved
    from .tokens import TiktokenCounter, TokenCounter, default_counter
    from .tools import Tool, tool
    from .compose.validation import InputValidationError

__all__ = [
    "ContextAssembly",
    "Evidence",
    "Memory",
    "MemoryStore",
    "MemoryStoreError",
    "SectionSummary",
    "Skill",
    "facts",
    "memory",
    "recent_messages",
    "skill",
    "CONSERVATIVE_MODEL_CAPACITY",
    "InputBudget",
    "ModelCapacityProfile",
    "merge_input_budget",
    "resolve_model_capacity_profile",
    "droppable",
    "offload",
    "offloadable",
    "prefer",
    "summarizable",
    "OffloadReceipt",
    "OffloadStore",
    "apreview",
    "preview",
    "PreparedSummary",
    "aprepare_summaries",
    "prepare_summaries",
    "Adaptation",
    "Candidate",
    "Contribution",
    "Receipt",
    "RequestInspection",
    "RequestPreview",
    "inspect_request",
    "Agent",
    "GenerateResult",
    "PlanningSession",
    "Step",
    "ToolResult",
    "agenerate",
    "agent",
    "generate",
    "RunRecorder",
    "record_runs",
    "RecordedCall",
    "record_call",
    "emit_otel",
    "redact_values",
    "SummaryStore",
    "summarize",
    "CallbackError",
    "Conditional",
    "Context",
    "CruxError",
    "Diagnostic",
    "ErrorInfo",
    "Drop",
    "Exclusion",
    "Inspection",
    "Match",
    "Model",
    "ModelError",
    "ModelRequest",
    "ModelResponse",
    "OpenAICompatibleModel",
    "AnthropicModel",
    "Part",
    "Prompt",
    "RequestCompositionError",
    "Resolved",
    "ScriptedModel",
    "TiktokenCounter",
    "TokenCounter",
    "Tool",
    "ToolCall",
    "context",
    "default_counter",
    "match",
    "prompt",
    "tool",
    "tool_call",
    "when",
    "InputValidationError",
    "OffloadError",
    "ReplayError",
    "RunError",
    "RunStoreError",
    "SummaryError",
]

# Where each public name lives (tests/core/test_runstore.py checks it against the imports above).
_SOURCES: dict[str, tuple[str, ...]] = {
    "plan.budget": ("CONSERVATIVE_MODEL_CAPACITY", "InputBudget", "ModelCapacityProfile", "merge_input_budget", "resolve_model_capacity_profile",),
    "plan.ladders": ("droppable", "offload", "offloadable", "prefer", "summarizable",),
    "plan.offload_store": ("OffloadReceipt", "OffloadStore",),
    "plan.requests": ("PlanningSession", "apreview", "preview",),
    "plan.preparing": ("PreparedSummary", "aprepare_summaries", "prepare_summaries",),
    "plan.receipts": ("Adaptation", "Candidate", "Contribution", "Receipt", "RequestInspection", "RequestPreview", "inspect_request",),
    "plan.agents": ("Agent", "agent",),
    "run.runtime": ("GenerateResult", "Step", "ToolResult", "agenerate", "generate",),
    "record.recording": ("RunRecorder", "record_runs",),
    "record.redaction": ("redact_values",),
    "plan.summaries": ("SummaryStore", "summarize",),
    "compose.contexts": ("Conditional", "Context", "Match", "context", "match", "when",),
    "memory": ("ContextAssembly", "Evidence", "Memory", "MemoryStore", "SectionSummary", "facts", "memory", "recent_messages",),
    "compose.skills": ("Skill", "skill",),
    "errors": (
        "CallbackError", "CruxError", "Diagnostic", "ErrorInfo", "MemoryStoreError", "ModelError", "OffloadError",
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
