"""Tools: functions a model may call, declared on prompts and contexts."""

from __future__ import annotations

import json
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from pydantic import BaseModel

from crux_devtools.shapes import ToolSchemaDict

from .errors import invalid_composition


# Weak keys: a module imported again (a save in the inspector) drops its old models and so their schemas.
_schemas: weakref.WeakKeyDictionary[type[BaseModel], str] = weakref.WeakKeyDictionary()


def _cached_schema(model: type[BaseModel]) -> str:
    schema = _schemas.get(model)
    if schema is None:
        schema = _schemas[model] = json.dumps(model.model_json_schema())
    return schema


def parameters_schema(model: type[BaseModel]) -> dict[str, Any]:
    """A parameters model's JSON schema, built once per model (the planner counts it per request);
    each call gets its own copy."""
    return json.loads(_cached_schema(model))


OnToolError = Literal["raise", "tell_model"]
ON_TOOL_ERROR: tuple[OnToolError, ...] = get_args(OnToolError)


@dataclass(frozen=True, slots=True, eq=False)
class Tool:
    """A callable capability offered to the model. ``execute`` takes the validated ``parameters``.

    ``on_error``: ``"raise"`` (the default) ends the run with ``RunError`` when ``execute`` raises
    or the model's arguments do not validate; ``"tell_model"`` sends the model the error as the
    tool's result instead (``ToolResult.error`` records it) and the run goes on.
    """

    name: str
    description: str
    parameters: type[BaseModel]
    execute: Callable[[Any], Any]
    output: Any = None
    on_error: OnToolError = "raise"

    def json_schema(self) -> dict[str, Any]:
        """The function schema a provider is sent (OpenAI ``tools`` shape)."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": parameters_schema(self.parameters),
            },
        }

    def to_dict(self) -> ToolSchemaDict:
        return {"name": self.name, "description": self.description, "parameters": parameters_schema(self.parameters)}


def tool(
    name: str,
    *,
    description: str,
    parameters: type[BaseModel],
    execute: Callable[[Any], Any],
    output: Any = None,
    on_error: OnToolError = "raise",
) -> Tool:
    """Declare a tool. ``parameters`` is a pydantic model; ``execute`` may be sync or async.

    ``on_error="tell_model"`` feeds a failure of this tool (an exception, invalid arguments) back to
    the model as its result; by default it ends the run (``generate`` raises ``RunError``).
    """
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"tool name must be a non-empty string, got {name!r}")
    if not isinstance(description, str):
        raise TypeError(f"tool {name!r}: description must be a string, got {type(description).__name__}")
    if not (isinstance(parameters, type) and issubclass(parameters, BaseModel)):
        raise TypeError(f"tool {name!r}: parameters must be a pydantic BaseModel subclass, got {parameters!r}")
    if not callable(execute):
        raise TypeError(f"tool {name!r}: execute must be callable, got {type(execute).__name__}")
    if output is not None:
        _check_output_policy(name, output)
    if on_error not in ON_TOOL_ERROR:
        raise ValueError(f"tool {name!r}: on_error must be one of {', '.join(map(repr, ON_TOOL_ERROR))}, got {on_error!r}")
    return Tool(name=name, description=description, parameters=parameters, execute=execute, output=output, on_error=on_error)


def _check_output_policy(name: str, output: Any) -> None:
    # The planning layer defines the output policy type; checked by duck typing to keep tools.py small.
    if not getattr(output, "is_output_policy", False):
        raise invalid_composition(
            f"tool {name!r}: output must be a tool output policy such as offloadable(above_tokens=N), got {output!r}"
        )


def normalize_tools(owner: str, tools: Iterable[Tool] | Mapping[str, Tool] | None) -> tuple[Tool, ...]:
    """Accept a list of tools or a ``{name: tool}`` mapping; reject duplicates and non-tools."""
    if not tools:
        return ()
    items = list(tools.values()) if isinstance(tools, Mapping) else list(tools)
    seen: dict[str, Tool] = {}
    for t in items:
        if not isinstance(t, Tool):
            raise TypeError(f"{owner!r}: tools must be created with tool(...), got {type(t).__name__}")
        if t.name in seen and seen[t.name] is not t:
            raise invalid_composition(f"{owner!r} declares two different tools named {t.name!r}; rename one", contributor=owner)
        seen[t.name] = t
    return tuple(seen.values())
