"""The one Rich rendering of an error in the TUI: a load error, an example's, a run's or a step's.

An error is the ``{file, line, type, message, traceback}`` shape every layer reports (a recorded
run may hold a plain string instead). The Errors tab draws each as a block (a rule naming where and
what, the message, the traceback); the run views as a line with its traceback under it. User text is
always a ``rich.text.Text`` (never parsed as markup).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import RenderableType
from rich.padding import Padding
from rich.rule import Rule
from rich.text import Text

from ..inspector.errors import further_fields


def _kind(error: Any) -> str:
    return str(error.get("type") or error.get("code") or "Error") if isinstance(error, Mapping) else "Error"


def where(error: Any) -> str:
    """``prompts.py:12``, ``prompts.py``, or ``?`` when the error has no file."""
    if not isinstance(error, Mapping) or not error.get("file"):
        return "?"
    return str(error["file"]) + (f":{error['line']}" if error.get("line") else "")


def error_line(error: Any, *, site: bool = False) -> Text:
    """``KeyError: 'x'`` from an ``{type, message}`` error (or whatever else was recorded); with
    ``site``, after ``tools.py:7: `` when the error says where (a run's error, as ``run`` prints it)."""
    if isinstance(error, Mapping):
        at = f"{where(error)}: " if site and error.get("file") else ""
        return Text.assemble((at, "bold"), (f"{_kind(error)}: ", "bold red"), (str(error.get("message") or ""), "red"))
    return Text(str(error), style="red")


def render_error(error: Any, *, block: bool = True, indent: int = 0, site: bool = False) -> list[RenderableType]:
    """An error's renderables: as a ``block`` (a red rule ``file:line  Type``, then the message in
    bold), or as one ``error_line``; then its traceback, dim, indented by ``indent``."""
    if block:
        items: list[RenderableType] = [
            Rule(Text(f"{where(error)}  {_kind(error)}", style="bold red"), align="left", style="red"),
            Text(str(error.get("message") or "") if isinstance(error, Mapping) else str(error), style="bold"),
        ]
    else:
        items = [error_line(error, site=site)]
    items.extend(Text.assemble((f"{label}: ", "dim"), text) for label, text in further_fields(error))
    trace = error.get("traceback") if isinstance(error, Mapping) else None
    if trace:
        text = Text(str(trace).rstrip(), style="dim")
        items.append(Padding(text, (0, 0, 0, indent)) if indent else text)
    return items
