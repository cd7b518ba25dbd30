"""A fake project session for the web tests: real prompts, real inspections, no worker process.

It holds a report built from ``Prompt.inspect(...).to_dict()`` of the prompts it is given, and can
be told a file was "saved" (``replace``), which makes a new report and notifies subscribers, as the
real ``ProjectSession`` does.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from pydantic import BaseModel, Field

from crux_devtools import context, prompt, tool, when
from crux_devtools.inspector.api import SessionEvent
from crux_devtools.inspector.errors import LoadError
from confirm_fake import fake_check_run


class Ticket(BaseModel):
    message: str = Field(description="The customer's message")
    lang: str = "en"


class OrderQuery(BaseModel):
    order_id: str


def _lookup(args: OrderQuery) -> dict[str, Any]:
    return {"order_id": args.order_id, "status": "paid"}


LOOKUP = tool("lookup_order", description="Look up an order.", parameters=OrderQuery, execute=_lookup)


def support_prompt(rules: str = "Never promise refunds.") -> Any:
    """A prompt with a kept, a droppable, a conditional and a nested context."""
    house = context("house-rules", system=f"## House rules\n{rules}", priority=100)
    facts = context("product-facts", system="## Plans\n" + "Pro: 2 TB, unlimited devices. " * 12, priority=30)
    billing = context("billing", system="## Billing\nUse lookup_order for invoices.", priority=80, tools=[LOOKUP], use=[facts])
    french = when(lambda i: i.lang == "fr", context("french", system="Réponds en français."))
    return prompt(
        "support-reply",
        system="You are Ari, a support agent.",
        input=Ticket,
        use=[house, billing, french],
        prompt=lambda i: i.message,
        examples={"billing": {"message": "Charged twice on INV-1042?"}, "french": {"message": "Bonjour", "lang": "fr"}},
    )


def xss_prompt() -> Any:
    payload = context("payload", system="<script>window.__xss = 1</script><img src=x onerror=\"window.__xss = 2\">")
    return prompt(
        "xss-probe",
        system="Show <b>this</b> literally.",
        use=[payload],
        prompt="<script>window.__xss = 3</script>",
        examples={"only": {}},
    )


def default_prompts() -> list[Any]:
    return [support_prompt(), xss_prompt()]


@asynccontextmanager
async def app_client(session: Any) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client to the real app over ``session``, in process (no server, no socket)."""
    from crux_devtools.web.app import create_app

    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(session)), base_url="http://127.0.0.1:4400") as client:
        yield client


def load_error(file: str, line: int, message: str) -> dict[str, Any]:
    error = LoadError.plain("SyntaxError", message, file=file, line=line, traceback=f'  File "{file}", line {line}\nSyntaxError: {message}')
    return dict(error.to_dict())


class FakeSession:
    """Implements ``SessionLike`` over in-process prompts (the real one uses a worker process)."""

    def __init__(self, root: Path, prompts: list[Any] | None = None, *, agent_ids: tuple[str, ...] = ()) -> None:
        self.root = Path(root)
        self.history_warning: str | None = None
        self.prompts = {p.id: p for p in (prompts if prompts is not None else default_prompts())}
        self.agent_ids = set(agent_ids)
        self.version = 0
        self.errors: list[dict[str, Any]] = []
        self.stale = False
        self.history: list[dict[str, Any]] = []
        self.started = False
        self.evaluations: list[dict[str, Any]] = []
        self.run_calls: list[dict[str, Any]] = []
        self._subscribers: list[Callable[[SessionEvent], Any]] = []
        self._report: dict[str, Any] | None = None
        from crux_devtools.inspector.worker.planning import PlanningDefaults

        self.defaults = PlanningDefaults()  # no pyproject profiles; summaries in memory (a test may set a store)
        self._rebuild()

    # ---- SessionLike
    @property
    def report(self) -> dict[str, Any] | None:
        return self._report

    def subscribe(self, callback: Callable[[SessionEvent], Any]) -> Callable[[], None]:
        self._subscribers.append(callback)
        return lambda: self._subscribers.remove(callback) if callback in self._subscribers else None

    async def start(self) -> None:
        self.started = True

    async def stop(self) -> None:
        self.started = False

    async def reload(self) -> None:
        self._rebuild()
        self._emit("report", "reloaded")

    async def evaluate(self, prompt_id: str, *, example: str | None = None, input: dict[str, Any] | None = None,
                       token_budget: int | None = None, input_budget: int | None = None, messages: dict[str, Any] | None = None) -> dict[str, Any]:
        self.evaluations.append({"prompt_id": prompt_id, "example": example, "input": input, "token_budget": token_budget, "input_budget": input_budget,
                                 "messages": messages})  # a later step's messages: recorded, the fake plans with the input alone
        p = self.prompts[prompt_id]
        name = "custom" if input is not None else (example or next(iter(p.examples or {"": {}})))
        data = input if input is not None else (p.examples or {}).get(name, {})
        return self._example(p, name, data, token_budget, input_budget)

    async def prepare_summaries(self, prompt_id: str, *, example: str | None = None, input: dict[str, Any] | None = None,
                                contributor: str | None = None, allow_models: bool = False, token_budget: int | None = None) -> dict[str, Any]:
        """Prepares into this session's own store with the worker's code, then "reloads"."""
        from crux_devtools.inspector.worker.evaluate import prepare

        p = self.prompts[prompt_id]
        name = example or next(iter(p.examples or {"": {}}))
        data = input if input is not None else (p.examples or {}).get(name, {})
        result = await asyncio.to_thread(  # the worker runs it synchronously, outside any event loop
            prepare, self.root, self._target(p), data, self.defaults, contributor=contributor, allow_models=allow_models, token_budget=token_budget,
        )
        if result["prepared"]:
            await self.reload()
        return result

    async def run(self, prompt_id: str, *, example: str | None = None, input: dict[str, Any] | None = None, confirm: Any = None) -> dict[str, Any]:
        asked = fake_check_run(self.report, prompt_id, confirm)
        if asked is not None:  # nothing runs: the front end must ask first
            return asked
        self.run_calls.append({"prompt_id": prompt_id, "example": example, "input": input})
        receipt = {"id": "req-1", "model": "scripted", "input_tokens": 120, "max_input_tokens": 5292, "optimize_at": 5292,
                   "measurement": "exact", "adaptations": [], "warnings": [], "epoch": 1, "previous_request_id": None}
        return {
            "text": "Your invoice INV-1042 was paid once.",
            "steps": [
                {"index": 0, "request": receipt, "response_text": None,
                 "tool_calls": [{"name": "lookup_order", "arguments": {"order_id": "INV-1042"}}],
                 "tool_results": [{"name": "lookup_order", "output": {"status": "paid"}, "model_output": {"status": "paid"}}],
                 "offloads": [{"handle": "off_1", "revision": 1, "byte_size": 17}]},
                {"index": 1, "request": {**receipt, "id": "req-2", "previous_request_id": "req-1"},
                 "response_text": "Your invoice INV-1042 was paid once.", "tool_calls": [], "tool_results": [], "offloads": []},
            ],
            "error": None,
        }

    def runs(self) -> Any:
        """The recorded runs' store: none here (``web_runs_fakes.RecordingSession`` has a real one)."""
        return None

    def previous_system(self, prompt_id: str, example: str) -> str | None:
        current = self._system_of(self._report, prompt_id, example)
        for old in reversed(self.history[:-1]):
            text = self._system_of(old, prompt_id, example)
            if text is not None and text != current:
                return text
        return None

    # ---- test controls
    async def replace(self, prompts: list[Any], *, changed_file: str = "prompts.py") -> None:
        """Simulate saving a file: a new report, then a ``report`` event."""
        self.prompts = {p.id: p for p in prompts}
        self.errors, self.stale = [], False
        self._rebuild()
        self._emit("report", f"{changed_file} changed", [changed_file])
        await asyncio.sleep(0)

    async def fail(self, error: dict[str, Any]) -> None:
        """Simulate a save that breaks the load: keep the last good report, marked stale."""
        self.errors, self.stale = [error], True
        self.version += 1
        assert self._report is not None
        self._report = {**self._report, "version": self.version, "errors": self.errors, "stale": True}
        self._emit("error", f"{error['file']} failed to load", [error["file"]])
        await asyncio.sleep(0)

    # ---- internals
    def _emit(self, kind: str, summary: str, files: list[str] | None = None) -> None:
        event = SessionEvent(kind=kind, version=self.version, summary=summary, changed_files=files or [])  # type: ignore[arg-type]
        for callback in list(self._subscribers):
            callback(event)

    def _target(self, p: Any) -> Any:
        from crux_devtools.inspector.worker.imports import Target

        line = 10 + list(self.prompts).index(p.id)
        return Target(p.id, "prompt", p, "prompts", "prompts.py", line)  # an "agent" here is a prompt said to have a model

    def _example(self, p: Any, name: str, data: dict[str, Any], budget: int | None, input_budget: int | None = None) -> dict[str, Any]:
        """What the worker answers: the real inspection and plan (``evaluate_example``), in process."""
        from crux_devtools.inspector.worker.evaluate import evaluate_example

        return evaluate_example(self.root, self._target(p), name, data, token_budget=budget, input_budget=input_budget, defaults=self.defaults)

    def _rebuild(self) -> None:
        from crux_devtools.inspector.worker.evaluate import planned_tokens, status_of

        self.version += 1
        prompts = []
        for line, p in enumerate(self.prompts.values(), start=10):
            examples = [self._example(p, n, d, None) for n, d in (p.examples or {"default": {}}).items()]
            first = examples[0]
            prompts.append({
                "id": p.id, "kind": "agent" if p.id in self.agent_ids else "prompt", "module": "prompts", "file": "prompts.py",
                "line": line, "input_schema": p.input_model.model_json_schema(), "contexts": [],
                "tools": sorted((first.get("inspection") or {}).get("tools", [])), "default_budget": None,
                "status": status_of(examples), "total_tokens": planned_tokens(first),
                "has_model": p.id in self.agent_ids, "plan_model": self.defaults.plan_model(self._target(p)), "examples": examples,
                "note": None,
            })
        for entry in prompts:  # the fake's agents run a ScriptedModel: Run needs no confirmation
            entry["model_kind"] = "scripted" if entry["has_model"] else None
        body = {"version": self.version, "project": str(self.root), "generated_at": datetime.now(UTC).isoformat(),
                "duration_ms": 12.0, "stale": self.stale, "errors": self.errors, "prompts": prompts,
                "notice": None, "modules_found": True, "load": "full", "reevaluated": [],
                "verified": True, "disagreements": 0}
        body["hash"] = hashlib.sha256(json.dumps(prompts, sort_keys=True).encode()).hexdigest()[:16]
        self._report = body
        self.history.append(body)

    @staticmethod
    def _system_of(report: dict[str, Any] | None, prompt_id: str, example: str) -> str | None:
        for p in (report or {}).get("prompts", []):
            if p["id"] == prompt_id:
                for e in p["examples"]:
                    if e["name"] == example and e.get("inspection"):
                        return e["inspection"]["system"]
        return None
