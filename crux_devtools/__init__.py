"""crux_devtools: compose prompts from reusable contexts, and see exactly what a model is sent.

Everything public is importable from here. Importing this package loads no UI library, and no library
code either until a public name is first used: the inspector's session process (web, TUI, CLI) imports
``crux_devtools.inspector`` without paying for pydantic, tiktoken and the core (about 0.3 s).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

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

if TYPE_CHECKING:
    # Type checkers see the real names; at run time ``__getattr__`` loads them on first use.
    # The literal ``__all__`` above is the public surface; tests/inspector/test_session.py keeps it equal to core's.
    from .core import *  # noqa: F403


def __getattr__(name: str) -> Any:
    """Load the core on first use of a public name (PEP 562), then cache every public name here."""
    if name not in _PUBLIC:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import core

    for public in __all__:
        globals()[public] = getattr(core, public)
    return globals()[name]


def __dir__() -> list[str]:
    return sorted(set(globals()) | _PUBLIC)


_PUBLIC = frozenset(__all__)
