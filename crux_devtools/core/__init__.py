"""The core resolver library. Never imports the inspector, the web app or the TUI."""

from __future__ import annotations

from .budget import (
    CONSERVATIVE_MODEL_CAPACITY,
    InputBudget,
    ModelCapacityProfile,
    merge_input_budget,
    resolve_model_capacity_profile,
)
from .ladders import droppable, offload, offloadable, prefer, summarizable
from .offload_store import OffloadReceipt, OffloadStore
from .planner import apreview, preview
from .preparing import PreparedSummary, aprepare_summaries, prepare_summaries
from .receipts import Adaptation, Candidate, Contribution, Receipt, RequestInspection, RequestPreview, inspect_request
from .runtime import Agent, GenerateResult, PlanningSession, Step, ToolResult, agenerate, agent, generate
from .summaries import SummaryStore, summarize
from .contexts import Conditional, Context, Match, context, match, when
from .memory import ContextAssembly, Evidence, Memory, MemoryStore, MemoryStoreError, SectionSummary, facts, memory, recent_messages
from .skills import Skill, skill
from .errors import CallbackError, CruxError, Diagnostic, ErrorInfo, RequestCompositionError
from .models import ModelError, ModelRequest, ModelResponse, OpenAICompatibleModel, ScriptedModel, ToolCall, tool_call
from .prompts import Prompt, prompt
from .results import Drop, Exclusion, Inspection, Part, Resolved
from .tokens import TiktokenCounter, TokenCounter, default_counter
from .tools import Tool, tool

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
