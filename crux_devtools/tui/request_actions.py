"""Actions of the app about the request as sent: switch between the sent and resolved views, and
prepare an example's summaries so the summary rung can be seen and picked.

A mixin of ``CruxTui`` (its keys are in ``CruxTui.BINDINGS``). Preparing runs in a worker that ends
by posting ``SummariesPrepared``; the session reloads the project afterwards, so the new plan
arrives as an ordinary session event.
"""

from __future__ import annotations

from typing import Any

from textual import work

from ..inspector.errors import LoadError
from ..inspector.report_types import PrepareResult
from ..inspector.worker.run_confirm import asks_confirmation
from .messages import SummariesPrepared
from .widgets.prompt_detail import PromptDetail

__all__ = ["RequestActions", "SummariesPrepared", "prepared_sentence"]


def prepared_sentence(prompt_id: str, result: PrepareResult, allow_models: bool) -> tuple[str, str]:
    """The notification for a finished preparation: ``(message, severity)``."""
    error = result["error"]
    if error is not None:
        return f"Could not prepare the summaries of {prompt_id}: {error['type']}: {error['message']}", "error"
    lines = [f"prepared {p['contributor']} ({p['strategy']}, {p['tokens']} tok)" for p in result["prepared"]]
    lines += [f"skipped {s['contributor']}: {s['reason']}" for s in result["skipped"]]
    if not lines:
        return f"{prompt_id}: no summary to prepare for this example.", "information"
    if not allow_models and any(s["needs_model"] for s in result["skipped"]):
        lines.append("P prepares it with its model (this calls the model).")
    return "\n".join(lines), "warning" if result["skipped"] and not result["prepared"] else "information"


class RequestActions:
    """``v``: the request as sent / the resolved system text; ``p`` / ``P``: prepare summaries."""

    detail: PromptDetail  # the prompt view: what is selected, and ``busy`` (shown in its status line)

    def action_toggle_view(self: Any) -> None:
        self.detail.show_tab("tab-system" if self.detail.active_tab == "tab-request" else "tab-request")

    def action_prepare_summaries(self: Any, allow_models: bool = False) -> None:
        prompt = self.detail.prompt()
        if prompt is None:
            return
        if any(w.group == "prepare" and w.is_running for w in self.workers):
            self.notify("Summaries are already being prepared.", severity="warning")
            return
        choice = self.detail.selection.choice
        budget = choice.budget if self.detail.budget_target(prompt) == "system" else None
        self.detail.busy = "preparing summaries" + (" with the model" if allow_models else "")
        self.run_preparation(prompt["id"], choice.example, allow_models, budget)

    @work(group="prepare", exit_on_error=False)
    async def run_preparation(self: Any, prompt_id: str, example: str | None, allow_models: bool, budget: int | None) -> None:
        try:
            result: PrepareResult = await self.session.prepare_summaries(prompt_id, example=example, allow_models=allow_models, token_budget=budget)
        except Exception as exc:  # the engine's own failure: said in a notification
            result = {"prepared": [], "skipped": [], "error": LoadError.plain(type(exc).__name__, str(exc)).to_dict()}
        self.post_message(SummariesPrepared(prompt_id, result, allow_models))

    def on_summaries_prepared(self: Any, message: SummariesPrepared) -> None:
        if self.detail.busy and self.detail.busy.startswith("preparing"):
            self.detail.busy = None
        text, severity = prepared_sentence(message.prompt_id, message.result, message.allow_models)
        self.notify(text, title="Summaries", severity=severity, markup=False)

    def ask_to_run(self: Any, prompt_id: str, result: Any) -> bool:
        """When the worker refused to call a real model unconfirmed (nothing ran), ask; "yes" runs
        again with the token of the model the worker named, so a model changed meanwhile asks again."""
        if not asks_confirmation(result):
            return False
        from ..inspector.features.runs.costs import prices_for
        from .screens import ConfirmRun

        self.detail.busy = None
        token = result.get("confirm")
        estimate = prices_for(getattr(self.session, "root", None)).question(result)  # priced at the model the token allows
        self.push_screen(ConfirmRun(prompt_id, result.get("model"), estimate), callback=lambda yes: self.start_run(prompt_id, token) if yes else None)
        return True
