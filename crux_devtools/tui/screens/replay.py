"""Replay of one recorded step in the TUI: the recorded request beside the current replay and pinned variants.

``+``/``-`` raise or lower the max input budget (by a tenth of the step's recorded max), ``0`` goes
back to the recorded budget, ``v`` pins the current replay as a variant (three at most: the oldest
goes), ``c`` clears the pinned ones. Each replay runs in the session's worker (the planner never runs
in the TUI's process).
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from ..replay_render import render_variants, variant_label

MAX_PINNED = 3


class ReplayScreen(Screen[None]):
    """``run``: the whole recorded run; ``index``: the step replayed; ``session``: the ProjectSession."""

    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("plus,equals_sign", "budget(1)", "Budget +", key_display="+"),
        Binding("minus", "budget(-1)", "Budget -", key_display="-"),
        Binding("0", "budget(0)", "As recorded"),
        Binding("v", "pin", "Pin as variant"),
        Binding("c", "clear", "Clear variants"),
    ]

    def __init__(self, run: dict[str, Any], index: int, session: Any) -> None:
        super().__init__()
        self.run, self.index, self.session = run, index, session
        step: dict[str, Any] = next((s for s in run.get("steps") or [] if s.get("index") == index), {})
        self.step: dict[str, Any] = step
        recorded_max = (step.get("request") or {}).get("max_input_tokens")
        self.recorded_max: int | None = recorded_max if isinstance(recorded_max, int) else None
        self.max: int | None = None
        self.current: tuple[str, dict[str, Any] | None, str | None] = ("as recorded", None, None)
        self.pinned: list[tuple[str, dict[str, Any] | None, str | None]] = []

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with VerticalScroll(id="replay-body"):
            yield Static(Text(""), id="replay-head")
            yield Static(Text(""), id="replay-variants")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = f"replay of run {self.run.get('id', '?')} step {self.index}"
        self.replay()

    def overrides(self) -> dict[str, Any]:
        return {"max": self.max, "optimize_at": None, "model": None, "rungs": {}, "drop": []}

    def show(self) -> None:
        head = Text()
        head.append(f"Replay of step {self.index}", style="bold")
        head.append(f"  (recorded max {self.recorded_max:,})" if self.recorded_max else "")
        head.append("   + / - budget · 0 as recorded · v pin as variant · c clear", style="dim")
        self.query_one("#replay-head", Static).update(head)
        self.query_one("#replay-variants", Static).update(render_variants(self.step, [(f"now: {self.current[0]}", self.current[1], self.current[2]), *self.pinned]))

    @work(exclusive=True, exit_on_error=False)
    async def replay(self) -> None:
        overrides = self.overrides()
        label = variant_label(overrides)
        self.current = (label, None, None)
        self.show()
        answer = await self.session.replay_step(self.run, self.index, overrides)
        if not answer.get("ok"):
            error = answer.get("error") or {}
            self.current = (label, None, f"{error.get('type')}: {error.get('message')}")
        elif "error" in answer["result"]:
            self.current = (label, None, str(answer["result"]["error"]))
        else:
            self.current = (label, answer["result"], None)
        self.show()

    def action_budget(self, direction: int) -> None:
        if direction == 0 or self.recorded_max is None:
            self.max = None
        else:
            step = max(1, self.recorded_max // 10)
            self.max = max(1, (self.max or self.recorded_max) + direction * step)
        self.replay()

    def action_pin(self) -> None:
        if self.current[1] is not None or self.current[2] is not None:
            self.pinned = [*self.pinned, self.current][-MAX_PINNED:]
            self.show()

    def action_clear(self) -> None:
        self.pinned = []
        self.show()

    def action_back(self) -> None:
        self.dismiss(None)


__all__ = ["ReplayScreen"]
