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
    "SummaryStore",
    "summarize",
    "CallbackError",
    "Conditional",
    "Context",
    "CruxError",
    "Diagnostic",
    "Drop",
    "Exclusion",
    "Inspection",
    "Match",
    "ModelError",
    "ModelRequest",
    "ModelResponse",
    "OpenAICompatibleModel",
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
]

if TYPE_CHECKING:
    from .core import ContextAssembly as ContextAssembly
    from .core import Evidence as Evidence
    from .core import Memory as Memory
    from .core import MemoryStore as MemoryStore
    from .core import MemoryStoreError as MemoryStoreError
    from .core import SectionSummary as SectionSummary
    from .core import Skill as Skill
    from .core import facts as facts
    from .core import memory as memory
    from .core import recent_messages as recent_messages
    from .core import skill as skill
    from .core import CONSERVATIVE_MODEL_CAPACITY as CONSERVATIVE_MODEL_CAPACITY
    from .core import InputBudget as InputBudget
    from .core import ModelCapacityProfile as ModelCapacityProfile
    from .core import merge_input_budget as merge_input_budget
    from .core import resolve_model_capacity_profile as resolve_model_capacity_profile
    from .core import droppable as droppable
    from .core import offload as offload
    from .core import offloadable as offloadable
    from .core import prefer as prefer
    from .core import summarizable as summarizable
    from .core import OffloadReceipt as OffloadReceipt
    from .core import OffloadStore as OffloadStore
    from .core import apreview as apreview
    from .core import preview as preview
    from .core import Adaptation as Adaptation
    from .core import Candidate as Candidate
    from .core import Contribution as Contribution
    from .core import Receipt as Receipt
    from .core import RequestInspection as RequestInspection
    from .core import RequestPreview as RequestPreview
    from .core import inspect_request as inspect_request
    from .core import Agent as Agent
    from .core import GenerateResult as GenerateResult
    from .core import PlanningSession as PlanningSession
    from .core import Step as Step
    from .core import ToolResult as ToolResult
    from .core import agenerate as agenerate
    from .core import agent as agent
    from .core import generate as generate
    from .core import SummaryStore as SummaryStore
    from .core import summarize as summarize
    from .core import CallbackError as CallbackError
    from .core import Conditional as Conditional
    from .core import Context as Context
    from .core import CruxError as CruxError
    from .core import Diagnostic as Diagnostic
    from .core import Drop as Drop
    from .core import Exclusion as Exclusion
    from .core import Inspection as Inspection
    from .core import Match as Match
    from .core import ModelError as ModelError
    from .core import ModelRequest as ModelRequest
    from .core import ModelResponse as ModelResponse
    from .core import OpenAICompatibleModel as OpenAICompatibleModel
    from .core import Part as Part
    from .core import Prompt as Prompt
    from .core import RequestCompositionError as RequestCompositionError
    from .core import Resolved as Resolved
    from .core import ScriptedModel as ScriptedModel
    from .core import TiktokenCounter as TiktokenCounter
    from .core import TokenCounter as TokenCounter
    from .core import Tool as Tool
    from .core import ToolCall as ToolCall
    from .core import context as context
    from .core import default_counter as default_counter
    from .core import match as match
    from .core import prompt as prompt
    from .core import tool as tool
    from .core import tool_call as tool_call
    from .core import when as when


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
