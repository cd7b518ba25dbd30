"""Replay of one recorded step in the TUI: the recorded request beside the current replay and pinned variants.

``+``/``-`` raise or lower the budget that bound the recorded plan (by a tenth of its recorded value):
``optimize_at`` when the planner settled the step at its ``optimize_at`` tier (below ``max``), else the
max input budget (``binding_budget``); ``m`` switches them to the other one; ``0`` goes back to the
recorded budget, ``t`` switches what the step is planned from (its recording, or today's
source: ``inspector/features/replay/source.replay_variant``, as the CLI's ``replay --source current``), ``v`` pins the current replay as a variant (three at most: the oldest
goes), ``c`` clears the pinned ones, ``o`` edits every override (``screens/overrides.py``: the budget,
the model profile, forced rungs, contexts left out, and any override added to ``Overrides`` later), ``s`` sends the current replay to the run's model and records
the answer as a child run (a model that is not scripted only after a confirmation that shows the
estimated input cost). Each replay and send runs in the session's worker (the planner and the model
adapter never run in the TUI's process).
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Header, Static

from ...core.record.replay_overrides import Overrides
from ...inspector.features.replay.source import current_command, replay_variant
from ...inspector.features.replay.document import send_request, write_child_run
from ...inspector.features.runs.costs import prices_for
from ..replay_render import render_sent, render_variants, variant_label
from ..widgets.footer import KeysFooter
from .confirm_run import ConfirmRun
from .overrides import OverridesScreen

MAX_PINNED = 3


def binding_budget(request: dict[str, Any]) -> tuple[str, int | None]:
    """Which budget decided a recorded step's plan, and its recorded value: ``("optimize_at", 2800)``
    when the planner settled the plan at its ``optimize_at`` tier below ``max`` (moving ``max``
    would then change nothing), else ``("max", 4000)``."""
    top, optimize_at = request.get("max_input_tokens"), request.get("optimize_at")
    top = top if isinstance(top, int) else None
    if request.get("tier") == "optimize_at" and isinstance(optimize_at, int) and (top is None or optimize_at < top):
        return "optimize_at", optimize_at
    return "max", top


class ReplayScreen(Screen[None]):
    """``run``: the whole recorded run; ``index``: the step replayed; ``session``: the ProjectSession."""

    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("plus,equals_sign", "budget(1)", "Raise budget", key_display="+"),
        Binding("minus", "budget(-1)", "Lower budget", key_display="-"),
        Binding("0", "budget(0)", "Budget as recorded"),
        Binding("m", "switch_budget", "Move max / optimize_at"),
        Binding("t", "toggle_source", "Plan from recording / source"),
        Binding("v", "pin", "Pin as variant"),
        Binding("c", "clear", "Clear variants"),
        Binding("s", "send", "Send to the model"),
        Binding("o", "overrides", "Overrides"),
    ]

    def __init__(self, run: dict[str, Any], index: int, session: Any) -> None:
        super().__init__()
        self.run, self.index, self.session = run, index, session
        step: dict[str, Any] = next((s for s in run.get("steps") or [] if s.get("index") == index), {})
        self.step: dict[str, Any] = step
        request = step.get("request") or {}
        recorded_max = request.get("max_input_tokens")
        self.recorded_max: int | None = recorded_max if isinstance(recorded_max, int) else None
        self.binding, self.recorded_binding = binding_budget(request)  # what + and - move, and from where
        self.max: int | None = None
        self.optimize_at: int | None = None
        self.edited = Overrides()  # what ``o`` set (its budget is moved by + and - from then on)
        self.source = "recorded"  # what the step is planned from: "recorded" (its recording) or "current" (today's source)
        self.current: tuple[str, dict[str, Any] | None, str | None] = ("as recorded", None, None)
        self.pinned: list[tuple[str, dict[str, Any] | None, str | None]] = []
        self.sent: Text = Text("")  # what the last send brought back (or why it did not go)

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with VerticalScroll(id="replay-body"):
            yield Static(Text(""), id="replay-head")
            yield Static(Text(""), id="replay-variants")
            yield Static(Text(""), id="replay-sent")
        yield KeysFooter(compact=True, importance=("back", "send"))  # whole entries only; sending stays in sight

    def on_mount(self) -> None:
        self.sub_title = f"replay of run {self.run.get('id', '?')} step {self.index}"
        self.replay()

    def overrides(self) -> Overrides:
        return dataclasses.replace(self.edited, max=self.max, optimize_at=self.optimize_at)

    def show(self) -> None:
        self.query_one("#replay-head", Static).update(self.head())
        self.query_one("#replay-variants", Static).update(render_variants(self.step, [(f"now: {self.current[0]}", self.current[1], self.current[2]), *self.pinned]))
        self.query_one("#replay-sent", Static).update(self.sent)

    def head(self) -> Text:
        """One line: the step, the budget ``+``/``-`` move (and its value now), what it is planned
        from. The keys are the footer's; the line is cut, never wrapped, on a narrow screen."""
        head = Text(no_wrap=True, overflow="ellipsis")
        head.append(f"Replay of step {self.index}", style="bold")
        if self.recorded_binding is not None:
            now = self.optimize_at if self.binding == "optimize_at" else self.max
            head.append(f" · + / - move {self.binding} ", style="dim")
            head.append(f"{now if now is not None else self.recorded_binding:,}", style="bold cyan")
            head.append(f" (recorded {self.recorded_binding:,}" + (f", max {self.recorded_max:,})" if self.binding == "optimize_at" and self.recorded_max else ")"), style="dim")
        head.append(" · plan from: ", style="dim")
        head.append("today's source" if self.source == "current" else "the recording", style="bold cyan")
        return head

    @work(exclusive=True, exit_on_error=False)
    async def replay(self) -> None:
        overrides, source = self.overrides(), self.source
        label = variant_label(overrides.to_dict(), source)
        self.current = (label, None, None)
        self.show()
        replayed = await replay_variant(self.session, self.run, self.index, overrides, source)
        error = replayed.error
        if replayed.no_plan_inputs:
            command = current_command(getattr(self.session, "root", None), str(self.run.get("id")), self.index)
            error = f"{error}; press t to plan it from today's source (or run: {command})"
        self.current = (label, replayed.document, error)
        self.show()

    def action_overrides(self) -> None:
        """Edit every override (``OverridesScreen``); a change replays the step."""

        def edited(overrides: Overrides | None) -> None:
            if overrides is not None and overrides != self.overrides():
                self.edited, self.max, self.optimize_at = overrides, overrides.max, overrides.optimize_at
                self.replay()

        self.app.push_screen(OverridesScreen(self.overrides()), edited)

    def action_toggle_source(self) -> None:
        self.source = "current" if self.source == "recorded" else "recorded"
        self.replay()

    def action_budget(self, direction: int) -> None:
        """Move the budget that bound the recorded plan by a tenth of its recorded value (``0``: as
        recorded); ``optimize_at`` stays at most the recorded ``max``."""
        recorded = self.recorded_binding
        if direction == 0 or recorded is None:
            self.max = self.optimize_at = None
        elif self.binding == "optimize_at":
            value = max(1, (self.optimize_at or recorded) + direction * max(1, recorded // 10))
            self.optimize_at = min(value, self.recorded_max) if self.recorded_max is not None else value
        else:
            self.max = max(1, (self.max or recorded) + direction * max(1, recorded // 10))
            if self.optimize_at is not None and self.optimize_at > self.max:
                self.optimize_at = self.max  # optimize_at is at most max
        self.replay()

    def action_switch_budget(self) -> None:
        """``+``/``-`` move the other budget (``max`` <-> ``optimize_at``) from now on."""
        request = self.step.get("request") or {}
        if self.binding == "optimize_at":
            self.binding, self.recorded_binding = "max", self.recorded_max
        elif isinstance(request.get("optimize_at"), int):
            self.binding, self.recorded_binding = "optimize_at", request["optimize_at"]
        self.show()

    def action_pin(self) -> None:
        if self.current[1] is not None or self.current[2] is not None:
            self.pinned = [*self.pinned, self.current][-MAX_PINNED:]
            self.show()

    def action_clear(self) -> None:
        self.pinned = []
        self.show()

    def action_send(self) -> None:
        document = self.current[1]
        if document is None or document["replayed"]["sent"] is None:
            self.notify("Nothing to send: the current replay has no request (it is still running, failed, or does not fit).", severity="warning")
            return
        self.send(document)

    @work(exclusive=True, group="send", exit_on_error=False)
    async def send(self, document: dict[str, Any]) -> None:
        """Send the replayed request in the worker; a model that is not scripted asks first (``ConfirmSend``)."""
        target, request = str(self.run.get("target")), send_request(document, self.run)
        self.sent = Text(f"sending the replay ({variant_label(document['overrides'], document['source'])}) to the run's model…", style="dim")
        self.show()
        answer = await self.session.replay_send(target, request)
        # Each question is the worker's, about the model it would call then, priced at that model; "yes"
        # sends that model's token, so a save that switched the model meanwhile is asked about again.
        while answer.get("ok") and "confirm" in answer["result"]:
            confirm = answer["result"]["confirm"]
            estimate = prices_for(getattr(self.session, "root", None)).question(confirm)
            if not await self.app.push_screen_wait(ConfirmSend(str(confirm.get("model")), confirm.get("model_kind"), estimate)):
                self.sent = Text("not sent: cancelled", style="yellow")
                self.show()
                return
            answer = await self.session.replay_send(target, {**request, "confirmed": confirm.get("confirm")})
        if not answer.get("ok"):
            error = answer.get("error") or {}
            self.sent = Text(f"not sent: {error.get('type')}: {error.get('message')}", style="red")
        elif "id" not in answer["result"]:
            self.sent = Text(f"not sent: {answer['result'].get('error')}", style="red")
        else:
            try:
                await asyncio.to_thread(write_child_run, getattr(self.session, "root", None), answer["result"])
            except Exception as exc:  # noqa: BLE001 - a store that cannot be written: say so, keep the answer on screen
                self.sent = Text.assemble(render_sent(answer["result"]), Text(f"\nnot recorded: {exc}", style="red"))
            else:
                self.sent = render_sent(answer["result"])
        self.show()

    def action_back(self) -> None:
        self.dismiss(None)


class ConfirmSend(ConfirmRun):
    """Asked before a replayed request goes to a model that is not scripted; shows the estimated cost."""

    def __init__(self, model: str, model_kind: str | None, estimate: str) -> None:
        super().__init__(model, model, estimate)
        self.kind = model_kind

    yes_label = "Send (y)"

    def question(self) -> Text:
        return Text.assemble(("Send the replayed request to ", "bold"), (self.target, "bold cyan"), ("?", "bold"))

    def detail(self) -> Text:
        return Text(
            f"Its model is not a ScriptedModel (model kind: {self.kind or 'unknown'}): the model is really called, which may cost "
            f"money. {self.estimate}. The answer is recorded as a child run of this run."
        )


__all__ = ["ConfirmSend", "ReplayScreen"]
