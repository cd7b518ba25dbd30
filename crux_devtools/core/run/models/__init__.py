"""Model adapters: what the agent loop sends to a model and what it gets back.

- The contract they satisfy is ``core/contract.py``: ``ModelRequest``, ``ModelResponse``,
  ``ToolCall``/``tool_call`` and the ``Model`` protocol (one required method, ``complete``, and the optional hooks the library calls
  when present). A new provider is one new module that satisfies it (docs/models.md).
- ``scripted``: ``ScriptedModel`` replays fixed answers offline and records every request.
- ``anthropic``: ``AnthropicModel`` speaks Anthropic's Messages API over httpx (tool use, cache usage).
- ``openai``: ``OpenAICompatibleModel`` speaks chat-completions over httpx (OpenAI, vLLM, the
  llama.cpp server, Ollama); ``parse_chat_completion`` and ``parse_usage`` read its answers.

Every fault on the way to or from a model is a ``ModelError`` (defined with the other errors in
``core/errors.py``) whose required ``kind`` is one of ``MODEL_ERROR_KINDS``.
"""

from __future__ import annotations

from ...errors import MODEL_ERROR_KINDS, ModelError, ModelErrorKind
from ...contract import OPTIONAL_HOOKS, Model, ModelRequest, ModelResponse, ToolCall, tool_call
from .anthropic import AnthropicModel, parse_message
from .openai import OpenAICompatibleModel, parse_chat_completion, parse_usage
from .scripted import ScriptedModel, ScriptedResponse

__all__ = [
    "AnthropicModel",
    "MODEL_ERROR_KINDS",
    "OPTIONAL_HOOKS",
    "Model",
    "ModelError",
    "ModelErrorKind",
    "ModelRequest",
    "ModelResponse",
    "OpenAICompatibleModel",
    "ScriptedModel",
    "ScriptedResponse",
    "ToolCall",
    "parse_chat_completion",
    "parse_message",
    "parse_usage",
    "tool_call",
]
