"""The TUI's messages, each a small dataclass.

The app posts ``SessionChanged`` / ``RunsChanged`` to itself when the session publishes an event;
workers end by posting their result (``ExampleEvaluated``, ``RunFinished``, ``SummariesPrepared``);
widgets post what the user did that another widget must know (``PromptOpened``, ``MarksChanged``).
A widget's own input events stay on the widget (``PromptTree.PromptSelected``, ``RunsPanel.OpenRun``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.message import Message
from textual.widget import Widget

from ..inspector.api import SessionEvent
from ..inspector.report_types import ExampleReport, PrepareResult
from .selection import Selection


@dataclass
class SessionChanged(Message):
    """The session published an event (``None``: it started). A burst collapses into the latest one."""

    event: SessionEvent | None

    def can_replace(self, message: Message) -> bool:
        """Textual asks the queued (older) message whether the next one supersedes it.

        The newer event always carries the latest report, so the older one can go; only a load
        error is kept until another error replaces it, so that it is always announced.
        """
        if not isinstance(message, SessionChanged):
            return False
        if (message.event is not None and message.event.kind == "runs") != (self.event is not None and self.event.kind == "runs"):
            return False  # news of runs never hides a report, nor a report news of runs
        if self.event is None or self.event.kind != "error":
            return True
        return message.event is not None and message.event.kind == "error"


@dataclass
class RunsChanged(Message):
    """A run was written to the project's runs store (by any process): the Runs tab refreshes.

    A burst collapses into the latest one: the refresh reads the store, not the event.
    """

    event: SessionEvent

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, RunsChanged)


@dataclass
class ExampleEvaluated(Message, bubble=False):
    """``session.evaluate`` returned ``example``, the fresh ``ExampleReport`` for ``selection``
    (its budget limits the system text or the whole request, as its choice says)."""

    selection: Selection
    example: ExampleReport
    asked: int  # which showing asked for it (``PromptDetail`` shows only the latest one's answer)


@dataclass
class RunFinished(Message):
    """An agent run ended; ``result`` is what ``session.run`` returned (at least ``{text, steps, error}``)."""

    prompt_id: str
    result: dict[str, Any]


@dataclass
class SummariesPrepared(Message):
    """``session.prepare_summaries`` returned ``{"prepared", "skipped", "error"}``."""

    prompt_id: str
    result: PrepareResult
    allow_models: bool


@dataclass
class PromptOpened(Message):
    """The search chose a prompt (already selected in the tree): the app shows it."""

    prompt_id: str


@dataclass
class MarksChanged(Message):
    """The example a prompt shows changed (another example, budget or input): the tree marks its
    contexts again (active, excluded, dropped)."""

    prompt_id: str


@dataclass
class PaneTitled(Message):
    """A pane's tab title changed (``Runs (12)``): the tab bar labels it."""

    pane: Widget
    title: str
