"""The two tools that call a model, built only with ``crux-devtools mcp --allow-spend``.

The worker decides whether the model about to run needs the user's go-ahead (``run_confirm.py``,
``replay_send.py``): a ``ScriptedModel`` runs at once. Otherwise the user is asked through the client
(MCP elicitation, by the resolver ``server.asking`` before the tool body runs, when the report shows
a real model); a client that cannot ask, or a model the report did not show as real, gets a first
answer with ``needs_confirmation`` and the value to pass as ``confirm`` in a second call, once the
user agreed. Nothing is sent on a refusal.
"""

from __future__ import annotations

from typing import Any

from .tools import ProjectTools, ToolFault


class Spending:
    def __init__(self, tools: ProjectTools) -> None:
        self.tools = tools

    def _model_of(self, target: str) -> tuple[str | None, str | None]:
        """(model kind, model name) of a target as the session's report shows it."""
        from ..inspector.api import find_prompt

        prompt = find_prompt(self.tools.session.report, target)
        if prompt is None:
            return None, None
        return prompt.get("model_kind"), (prompt.get("plan_model") or {}).get("name")

    def run_question(self, target: str) -> str | None:
        """What the user is asked before ``run_target`` (None: the report shows no real model to ask about)."""
        kind, name = self._model_of(target)
        return None if kind != "real" else f"Run {target!r} with {name!r}, a real model (it may cost money and run real tools)?"

    def send_question(self, run: str) -> str | None:
        try:
            target = str(self.tools.recorded(run).get("target"))
        except ToolFault:
            return None  # the tool answers the unknown run
        kind, name = self._model_of(target)
        return None if kind != "real" else f"Send a replayed step of run {run!r} to {name!r}, a real model (it may cost money)?"

    def _agreed(self, agreed: bool | None, question: str, token: str, confirm: str | None) -> bool | dict[str, Any]:
        """True to go ahead; else the answer that says how to confirm (or that the user declined).
        ``agreed``: the user's answer through the client, None when not asked."""
        if agreed is False:
            return {"sent": False, "declined": question}
        if agreed is True:
            return True
        if confirm is not None:
            if confirm == token:
                return True
            raise ToolFault(f"confirm {confirm!r} is not this model's confirmation; ask again without confirm")
        return {"needs_confirmation": True, "question": question, "confirm": token,
                "how": "ask the user; if they agree, call again with this confirm value"}

    async def run_target(self, agreed: bool | None, target: str, example: str | None, input: dict[str, Any] | None, confirm: str | None) -> dict[str, Any]:
        from ..inspector.api import find_prompt
        from ..inspector.worker.run_confirm import asks_confirmation

        report = await self.tools.fresh()
        prompt = find_prompt(report, target)
        if prompt is None:
            known = [p["id"] for p in report["prompts"]]
            raise ToolFault(f"no prompt or agent with id {target!r}; known ids: {', '.join(known) or 'none'}", known=known, errors=report["errors"])
        if not prompt["has_model"]:
            runnable = [p["id"] for p in report["prompts"] if p["has_model"]]
            raise ToolFault(f"{prompt['kind']} {target!r} has no model to call; runnable: {', '.join(runnable) or 'none'}", known=runnable)
        if example is not None and input is None and example not in {e["name"] for e in prompt["examples"]}:
            known = [e["name"] for e in prompt["examples"]]
            raise ToolFault(f"{prompt['kind']} {target!r} has no example {example!r}; known examples: {', '.join(known) or 'none'}", known=known)
        session = self.tools.session
        result = await session.run(target, example=example, input=input, confirm=confirm)
        if asks_confirmation(result):
            go = self._agreed(agreed, f"Run {target!r} with {result.get('model')!r}, a real model (it may cost money and run real tools)?",
                              str(result["confirm"]), confirm)
            if go is not True:
                return go  # type: ignore[return-value]
            result = await session.run(target, example=example, input=input, confirm=str(result["confirm"]))
        return dict(result)

    async def replay_send(self, agreed: bool | None, run: str, step: int, *, confirm: str | None, **replay: Any) -> dict[str, Any]:
        from ..inspector.features.replay.document import send_request

        document = await self.tools.replay(run, step, **replay)
        if document["replayed"]["sent"] is None:
            raise ToolFault(f"nothing to send: the replayed request does not fit ({document['replayed'].get('error_code')})")
        recorded = self.tools.recorded(run)
        request = send_request(document, recorded)
        target = str(recorded.get("target"))
        session = self.tools.session
        answer = await session.replay_send(target, {**request, "confirmed": False})
        if answer.get("ok") and "confirm" in answer["result"]:
            model = str(answer["result"]["confirm"].get("model"))
            go = self._agreed(agreed, f"Send the replayed step {step} of run {run!r} to {model!r}, a real model (it may cost money)?", model, confirm)
            if go is not True:
                return go  # type: ignore[return-value]
            answer = await session.replay_send(target, {**request, "confirmed": True})
        if not answer.get("ok"):
            error = answer.get("error") or {}
            raise ToolFault(f"sending the replayed request failed: {error.get('type')}: {error.get('message')}")
        child = dict(answer["result"])
        if "id" not in child:
            raise ToolFault(str(child.get("error")))
        self.tools._read(lambda store: store.write(child))  # a store fault is a ToolFault
        return {"replay": document, "sent": child}
