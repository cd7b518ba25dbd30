"""The TUI's widgets: one per pane, and the two that own the state (``PromptBrowser`` on the left,
``PromptDetail`` on the right). Each takes data through attributes and posts messages up."""

from __future__ import annotations

from .contributors import ContributorsTable
from .errors import ErrorsView
from .planning import PlanningView
from .prompt_browser import PromptBrowser
from .prompt_detail import PromptDetail
from .prompt_tree import PromptTree
from .runs import RunsPanel
from .status_line import StatusLine
from .system_text import SystemTextView
from .tools import ToolsView

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
