"""The core resolver library. Never imports the inspector, the web app or the TUI."""

from __future__ import annotations

from .contexts import Conditional, Context, Match, context, match, when
from .errors import CallbackError, CruxError, Diagnostic, RequestCompositionError
from .models import ModelError, ModelRequest, ModelResponse, OpenAICompatibleModel, ScriptedModel, ToolCall, tool_call
from .prompts import Prompt, prompt
from .results import Drop, Exclusion, Inspection, Part, Resolved
from .tokens import TiktokenCounter, TokenCounter, default_counter
from .tools import Tool, tool

__all__ = [
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
