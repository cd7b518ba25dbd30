"""A fake ``SessionLike`` for the TUI tests: real prompts, real inspections, no worker process.

The report is built from real ``Inspection.to_dict()`` values of the prompts below, so the TUI is
tested against the exact data shape the engine produces. ``evaluate`` re-inspects with a budget,
``run`` returns a scripted run, and ``emit`` lets a test push a session event as the watcher would.

With ``runs_file`` the session has a real ``RunStore`` there (``runs()``), as ``ProjectSession`` has:
``run`` records its runs in it (origin ``"inspector"``) and ``record`` writes a run as another
process would, then publishes the ``"runs"`` event the session's watcher would. Runs are made by
``recorded_run``: a real ``generate`` of a real prompt with a ``ScriptedModel``.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from crux_devtools import (
    InputBudget,
    ModelCapacityProfile,
    Prompt,
    ScriptedModel,
    SummaryStore,
    context,
    droppable,
    match,
    offloadable,
    prefer,
    aprepare_summaries,
    preview,
    prompt,
    summarizable,
    tool,
    when,
)
from crux_devtools.core.record.runstore import RunStore
from crux_devtools.inspector.api import SessionEvent
from confirm_fake import fake_check_run
from web_runs_fakes import run_to_the_end


class Order(BaseModel):
    order_id: str = Field(description="Order number")


class Customer(BaseModel):
    plan: str = "free"
    signed_in: bool = False


class Ticket(BaseModel):
    message: str
    mode: str = "chat"


lookup_order = tool(
    "lookup_order",
    description="Find an order by its number.",
    parameters=Order,
    execute=lambda p: {"order_id": p.order_id, "status": "shipped"},
)

house_rules = context("house_rules", system="Never promise refunds. Cite the policy by name.", priority=90)
product_facts = context(
    "product_facts",
    system="Nimbus Pro includes 2 TB of storage and version history for 180 days.",
    priority=60,
)
billing = context(
    "billing",
    system="For billing questions, look the order up before answering. " * 6,
    priority=30,
    tools=[lookup_order],
    use=[product_facts],
)
account = context(
    "account",
    system=lambda i: f"The customer is signed in on the {i.plan} plan.",
    input=Customer,
    when=lambda i: i.signed_in,
    priority=70,
)
tone = match(
    lambda i: i.mode,
    {
        "chat": context("tone_chat", system="Keep replies short and friendly."),
        "email": context("tone_email", system="Write a complete, formal email."),
    },
)


class LadderInput(BaseModel):
    question: str
    log_lines: int = 40
    catalog_rows: int = 10


lookup_sku = tool(
    "lookup_sku",
    description="Look up one product by SKU.",
    parameters=Order,
    execute=lambda p: {"sku": p.order_id},
)
catalog = droppable(
    prefer(
        context(
            "catalog",
            priority=70,
            tools=[lookup_sku],
            input=LadderInput,
            system=lambda i: "## Catalog (complete)\n" + "\n".join(f"- NB-{n:03}: Nimbus plan {n}, {n * 10} GB, EUR {n} per month, all regions" for n in range(i.catalog_rows)),
        ),
        context("catalog-index", system="## Catalog (index)\nNB-000 to NB-099: call lookup_sku for details."),
    )
)
sync_log = offloadable(
    summarizable(
        context(
            "sync-log",
            priority=50,
            input=LadderInput,
            system=lambda i: "## Sync log\n" + "\n".join(f"2026-11-29T{n // 60:02}:{n % 60:02}:00Z INFO device=laptop synced {n} files" for n in range(i.log_lines)),
        )
    ),
    above_tokens=100,
)
examples_ctx = droppable(context("example-replies", priority=10, system="## Example replies\nCustomer: It stopped. Agent: Sign out and in again."))


def ladder_prompt() -> Prompt:
    """A prompt with ladders, planned against a small model: its examples send an authored
    alternative, an offload preview (with ``read_offload``) and an omitted part."""
    return prompt(
        "ladder-reply",
        system="You are Ari, a support agent for Nimbus cloud storage.",
        input=LadderInput,
        use=[house_rules, catalog, sync_log, examples_ctx],
        prompt=lambda i: i.question,
        model=ModelCapacityProfile(context_window=2048, default_output_reserve=512, counting_confidence="exact"),
        examples={
            "quiet": {"question": "Which plan gives me 2 TB?", "log_lines": 2},
            "busy": {"question": "Why did my laptop stop syncing?", "log_lines": 120, "catalog_rows": 80},
        },
    )


def build_prompts() -> list[Prompt]:
    """The prompts the fake project holds: one prompt with contexts, one agent-like prompt."""
    support = prompt(
        "support-reply",
        system="You are Ari, a support agent for Nimbus cloud storage.",
        input=Ticket,
        use=[house_rules, billing, account, tone, when(lambda i: i.mode == "email", context("signature", system="Sign as Ari."))],
        prompt=lambda i: i.message,
        examples={
            "signed-in": {"message": "Why was I charged twice?", "plan": "pro", "signed_in": True},
            "anonymous": {"message": "How much storage does Pro include?", "mode": "email"},
        },
    )
    triage = prompt(
        "triage-agent",
        system="Sort the ticket into billing, account or other.",
        input=Ticket,
        use=[house_rules],
        prompt=lambda i: i.message,
        examples={"default": {"message": "My invoice is wrong."}},
    )
    return [support, triage]


# A hand-written plan without ``sent`` (tests that need an odd preview start from it); the fake
# session's own reports carry real previews.
PREVIEW = {
    "status": "fits",
    "model": "scripted",
    "input_tokens": 61,
    "max_input_tokens": 5292,
    "optimize_at": 5292,
    "adaptations": [],
    "candidates": [
        {"contributor": "house_rules", "representation": "full", "available": True, "selected": True, "input_tokens": 61, "rejection_reason": None},
        {"contributor": "house_rules", "representation": "omitted", "available": True, "selected": False, "input_tokens": 48, "rejection_reason": "lower-fidelity"},
    ],
    "tools": [],
    "warnings": [],
    "measurement": "estimated",
}

RUN = {
    "text": "This looks like a billing ticket.",
    "error": None,
    "steps": [
        {
            "index": 0,
            "request": {
                "id": "req-1",
                "model": "scripted",
                "input_tokens": 61,
                "max_input_tokens": 5292,
                "optimize_at": 5292,
                "measurement": "estimated",
                "adaptations": [],
                "warnings": [],
                "epoch": 1,
                "previous_request_id": None,
                "candidates": [],
                "contributions": [],
            },
            "response_text": "This looks like a billing ticket.",
            "tool_calls": [],
            "tool_results": [],
            "offloads": [],
        }
    ],
}


def recorded_run(
    p: Prompt,
    input: dict[str, Any],
    responses: list[Any],
    *,
    origin: str = "app",
    started_at: str | None = None,
    run_id: str | None = None,
) -> dict[str, Any]:
    """One run as the recorder writes it: a real ``generate`` of ``p`` with a
    ``ScriptedModel`` replaying ``responses``, its steps as ``Step.to_dict()``."""
    model = ScriptedModel(responses, name="scripted")
    began = time.perf_counter()
    # generate's sync API refuses to run inside an event loop (async tests): a thread has none
    with ThreadPoolExecutor(1) as pool:
        result = pool.submit(run_to_the_end, p, input=input, model=model).result()
    data = result.to_dict()
    status = {"text": "ok", "max_steps": "max_steps"}.get(result.stop_reason, "error")
    return {
        "id": run_id or uuid.uuid4().hex[:16],
        "target": p.id,
        "kind": "agent" if p.id.endswith("-agent") else "prompt",  # as prompt_report says
        "file": "support.py",
        "line": 10,
        "origin": origin,
        "started_at": started_at or datetime.now(UTC).isoformat(),
        "duration_ms": round((time.perf_counter() - began) * 1000, 3),
        "status": status,
        "error": data["error"],
        "model": "scripted",
        "input": input,
        "text": data["text"],
        "usage": result.usage,
        "steps": data["steps"],
    }


def summary_states(plan: dict[str, Any] | None) -> list[dict[str, Any]]:
    """``ExampleReport["summaries"]``: one per summary rung the planner considered (the fake's are
    extractive: no model)."""
    return [
        {"contributor": c["contributor"], "strategy": "extractive:0.3", "needs_model": False, "model": None, "prepared": c["rejection_reason"] != "unprepared"}
        for c in (plan or {}).get("candidates") or []
        if c["representation"] == "summary"
    ]


def example_status(error: Any, inspection: dict[str, Any] | None, plan: dict[str, Any] | None) -> str:
    """``ExampleReport["status"]``, decided by the engine's own function."""
    from crux_devtools.inspector.worker.evaluate import example_status as decide

    return decide({"error": error, "preview_error": None, "preview": plan, "inspection": inspection})  # type: ignore[typeddict-item]


def example_report(
    p: Prompt, name: str, input: dict[str, Any], token_budget: int | None = None, input_budget: int | None = None, store: SummaryStore | None = None
) -> dict[str, Any]:
    """One ``ExampleReport`` from a real inspection and a real plan (``preview``, reading the
    session's summary store), as the engine builds it."""
    inspection = p.inspect(input, token_budget=token_budget).to_dict()
    budget = InputBudget(max=input_budget) if input_budget is not None else None
    plan = preview(p, input=input, token_budget=token_budget, input_budget=budget, summary_store=store or SummaryStore()).to_dict()
    report = {
        "name": name,
        "input": input,
        "error": None,
        "status": example_status(None, inspection, plan),
        "inspection": inspection,
        "preview": plan,
        "preview_error": None,
        "truncated": False,
        "summaries": summary_states(plan),
    }
    if name in p.expectations:  # judged by the engine's evaluator, as the worker judges them
        from crux_devtools.inspector.worker.expectations import expectation_results

        report["expectations"] = expectation_results(None, p, p.expectations[name], {"file": "support.py", "line": 1, "contexts": []}, report)
    return report


def plan_model(p: Prompt) -> dict[str, Any]:
    """``PromptReport["plan_model"]``: the fake's prompts name a capacity profile, or no model."""
    if getattr(p, "model", None) is not None:
        return {"name": None, "source": "prompt", "label": "named by the prompt (model=...)", "profile": None, "hint": None}
    hint = "name one with prompt(..., model=...) or default_model in pyproject.toml"
    return {"name": None, "source": "none", "label": "no model named (the conservative 8k profile)", "profile": None, "hint": hint}


def prompt_report(p: Prompt, line: int, store: SummaryStore | None = None) -> dict[str, Any]:
    """One ``PromptReport`` for ``p`` with every example inspected, as the engine builds it."""
    examples = [example_report(p, name, data, store=store) for name, data in (p.examples or {"default": {}}).items()]
    is_agent = p.id.endswith("-agent")
    contexts = [
        {
            "id": r.context.id,
            "kind": r.context.kind,
            "owner": r.owner,
            "conditional": r.conditional,
            "priority": r.context.priority,
            "tools": [t.name for t in r.context.tools],
            "ladder": type(r.ladder).__name__ if r.ladder is not None else None,
            "file": None,
            "line": None,
        }
        for r in p.contexts()
    ]
    return {
        "id": p.id,
        "kind": "agent" if is_agent else "prompt",
        "module": "support",
        "file": "support.py",
        "line": line,
        "input_schema": p.input_model.model_json_schema(),
        "contexts": contexts,
        "tools": sorted(p.all_tools),
        "default_budget": None,
        "status": examples[0]["status"],
        "total_tokens": examples[0]["preview"]["input_tokens"],
        "plan_model": plan_model(p),
        "has_model": is_agent,
        "model_kind": "scripted" if is_agent else None,
        "examples": examples,
        "note": None,
    }


class FakeSession:
    """Holds a report of real inspections; records every call a front end makes."""

    def __init__(self, root: Path | None = None, prompts: list[Prompt] | None = None, runs_file: Path | None = None) -> None:
        self.root = root or Path("/project")
        self.history_warning: str | None = None
        self.store = RunStore(runs_file) if runs_file is not None else None
        self.prompts = {p.id: p for p in (prompts or build_prompts())}
        self.version = 1
        self.calls: list[tuple[str, Any]] = []
        self.run_delay = 0.0
        self.summary_store = SummaryStore()  # what prepare_summaries writes and every plan reads
        self._subscribers: list[Callable[[SessionEvent], Any]] = []
        self._report: dict[str, Any] | None = self.build_report()

    def build_report(self, errors: list[dict[str, Any]] | None = None, stale: bool = False) -> dict[str, Any]:
        return {
            "version": self.version,
            "project": str(self.root),
            "generated_at": "2026-11-29T12:00:00Z",
            "duration_ms": 12.0,
            "stale": stale,
            "errors": errors or [],
            "prompts": [prompt_report(p, 10 + 20 * i, self.summary_store) for i, p in enumerate(self.prompts.values())],
            "hash": f"h{self.version}",
            "notice": None,
            "modules_found": True,
            "load": "full",
            "reevaluated": [],
            "verified": True,
            "disagreements": 0,
        }

    @property
    def report(self) -> dict[str, Any] | None:
        return self._report

    def subscribe(self, callback: Callable[[SessionEvent], Any]) -> Callable[[], None]:
        self._subscribers.append(callback)
        return lambda: self._subscribers.remove(callback)

    def emit(self, event: SessionEvent) -> None:
        for callback in list(self._subscribers):
            callback(event)

    def replace_prompt(self, p: Prompt, summary: str = "support.py changed") -> None:
        """Swap in a new definition and publish a new report, as a saved file would."""
        self.prompts[p.id] = p
        self.version += 1
        self._report = self.build_report()
        self.emit(SessionEvent("report", self.version, summary, ["support.py"], [p.id]))

    def break_project(self, error: dict[str, Any]) -> None:
        """A load failed: keep the last good prompts, mark them stale, publish the error."""
        assert self._report is not None
        self.version += 1
        self._report = {**self._report, "version": self.version, "stale": True, "errors": [error]}
        self.emit(SessionEvent("error", self.version, f"{error['file']}:{error['line']}: {error['type']}", [error["file"]], []))

    async def start(self) -> None:
        self.calls.append(("start", None))

    async def stop(self) -> None:
        self.calls.append(("stop", None))

    async def reload(self) -> None:
        self.calls.append(("reload", None))
        self.version += 1
        self._report = self.build_report()
        self.emit(SessionEvent("report", self.version, "Reloaded the project", [], []))

    async def evaluate(
        self,
        prompt_id: str,
        *,
        example: str | None = None,
        input: dict[str, Any] | None = None,
        token_budget: int | None = None,
        input_budget: int | None = None,
        messages: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        self.evaluated_messages = messages  # a later step's messages (the fake plans with the input alone)
        call = {"prompt_id": prompt_id, "example": example, "token_budget": token_budget}
        if input_budget is not None:
            call["input_budget"] = input_budget
        if input is not None:
            call["input"] = input
        self.calls.append(("evaluate", call))
        p = self.prompts[prompt_id]
        name = example or next(iter(p.examples or {"default": {}}))
        data = input if input is not None else (p.examples or {}).get(name, {})
        return example_report(p, name, data, token_budget, input_budget, self.summary_store)

    async def prepare_summaries(
        self,
        prompt_id: str,
        *,
        example: str | None = None,
        input: dict[str, Any] | None = None,
        contributor: str | None = None,
        allow_models: bool = False,
        token_budget: int | None = None,
    ) -> dict[str, Any]:
        """Prepares for real (``crux_devtools.prepare_summaries`` into the session's store), then
        reloads, as the engine does."""
        self.calls.append(("prepare_summaries", {"prompt_id": prompt_id, "example": example, "allow_models": allow_models, "token_budget": token_budget}))
        p = self.prompts[prompt_id]
        data = input if input is not None else (p.examples or {}).get(example or next(iter(p.examples or {"default": {}})), {})
        done = await aprepare_summaries(p, input=data, summary_store=self.summary_store, allow_models=allow_models, token_budget=token_budget)
        result = {
            "prepared": [{"contributor": d.contributor, "strategy": d.strategy, "tokens": d.tokens} for d in done if d.status in ("prepared", "already-prepared")],
            "skipped": [{"contributor": d.contributor, "reason": d.detail or d.status, "needs_model": d.status == "needs-model", "model": d.model} for d in done if d.status in ("needs-model", "failed")],
            "error": None,
        }
        if result["prepared"]:
            await self.reload()
        return result

    async def run(self, prompt_id: str, *, example: str | None = None, input: dict[str, Any] | None = None, confirm: Any = None) -> dict[str, Any]:
        asked = fake_check_run(self.report, prompt_id, confirm)
        if asked is not None:  # nothing runs: the front end must ask first
            return asked
        self.calls.append(("run", {"prompt_id": prompt_id, "example": example} if input is None else {"prompt_id": prompt_id, "input": input}))
        if self.run_delay:
            await asyncio.sleep(self.run_delay)
        if self.store is None:
            return RUN
        p = self.prompts[prompt_id]
        data = input if input is not None else (p.examples or {}).get(example or "", next(iter((p.examples or {"": {}}).values())))
        run = recorded_run(p, data, list(self.run_responses), origin="inspector")
        self.record(run)
        return run

    run_responses: tuple[Any, ...] = ("This looks like a billing ticket.",)

    def runs(self) -> RunStore | None:
        return self.store

    def record(self, run: dict[str, Any]) -> None:
        """Write ``run`` to the store and publish the event the session's watcher would."""
        assert self.store is not None, "this FakeSession has no runs_file"
        self.store.write(run)
        self.emit_runs_event(f"1 new run: {run['target']} ({run['status']})")

    def emit_runs_event(self, summary: str) -> None:
        """What the session's watcher publishes when any process wrote a run."""
        token = self.store.change_token() if self.store is not None else 0
        self.emit(SessionEvent("runs", token, summary))  # type: ignore[arg-type]

    def previous_system(self, prompt_id: str, example: str) -> str | None:
        return None
