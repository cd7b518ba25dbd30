"""Messages the app posts to itself when session events and worker results arrive."""

from __future__ import annotations

from typing import Any

from textual.message import Message

from ..inspector.api import SessionEvent
from ..inspector.report_types import ExampleReport


class SessionChanged(Message):
    """The session published an event. A burst of them collapses into the latest one."""

    def __init__(self, event: SessionEvent | None) -> None:
        super().__init__()
        self.event = event

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


class ExampleEvaluated(Message):
    """``session.evaluate`` returned: ``example`` is the fresh ``ExampleReport`` for this budget
    (``target``: ``"system"`` text or the whole ``"request"``)."""

    def __init__(self, prompt_id: str, example_name: str | None, budget: int | None, example: ExampleReport, target: str = "system") -> None:
        super().__init__()
        self.prompt_id = prompt_id
        self.example_name = example_name
        self.budget = budget
        self.example = example
        self.target = target


class RunFinished(Message):
    """An agent run ended; ``result`` is ``{"text", "steps", "error"}``."""

    def __init__(self, prompt_id: str, result: dict[str, Any]) -> None:
        super().__init__()
        self.prompt_id = prompt_id
        self.result = result


class RunsChanged(Message):
    """A run was written to the project's runs store (by any process): the Runs tab refreshes.

    A burst collapses into the latest one: the refresh reads the store, not the event.
    """

    def __init__(self, event: SessionEvent) -> None:
        super().__init__()
        self.event = event

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, RunsChanged)
