"""The TUI's widgets: one per pane, and the two that own the state (``PromptBrowser`` on the left,
``PromptDetail`` on the right). Each takes data through attributes and posts messages up.

The panes of tabs the first frame does not show (``PlanningView``, ``ToolsView``) are imported on
first use (``__getattr__``): the TUI imports them when their tab is first shown."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .contributors import ContributorsTable
from .errors import ErrorsView
from .prompt_browser import PromptBrowser
from .prompt_detail import PromptDetail
from .prompt_tree import PromptTree
from .runs import RunsPanel
from .status_line import StatusLine
from .system_text import SystemTextView

if TYPE_CHECKING:
    from .planning import PlanningView as PlanningView
    from .tools import ToolsView as ToolsView

_LAZY = {"PlanningView": "planning", "ToolsView": "tools"}  # name -> its module, imported on first use

__all__ = [
    "ContributorsTable",
    "ErrorsView",
    "PlanningView",
    "PromptBrowser",
    "PromptDetail",
    "PromptTree",
    "RunsPanel",
    "StatusLine",
    "SystemTextView",
    "ToolsView",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
