"""Recorded runs for the web tests: real ``generate`` runs (ScriptedModel), stored in a real RunStore file.

``RecordingSession`` is the web tests' ``FakeSession`` with the project's real run store, and the
``runs`` event the real ``ProjectSession`` sends when any process writes a run. The runs come from
the library itself (``GenerateResult.to_dict()``), so the page is tested on the shape the core
records, not on a hand-made dict.
"""

from __future__ import annotations

import copy
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field
from web_fakes import FakeSession, default_prompts

from crux_devtools import (
    RunError,
    InputBudget,
    ModelCapacityProfile,
    ScriptedModel,
    agent,
    context,
    generate,
    offloadable,
    prefer,
    prompt,
    tool,
    tool_call,
)
from crux_devtools.core.record.runstore import RunStore
from confirm_fake import fake_check_run

XSS = '<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2">'


class Question(BaseModel):
    question: str = Field(description="What the customer asks")


class OrderQuery(BaseModel):
    order_id: str


def _lookup(args: OrderQuery) -> dict[str, Any]:
    return {"order_id": args.order_id, "status": "paid", "note": XSS if args.order_id == "XSS" else "settled"}


def _history(args: OrderQuery) -> str:
    return "\n".join(f"2026-01-{d:02d} order {args.order_id} event {d}: state unchanged" for d in range(1, 29)) * 4


lookup = tool("lookup_order", description="Look up one order.", parameters=OrderQuery, execute=_lookup)
history = tool("order_history", description="The full event history of one order.", parameters=OrderQuery, execute=_history, output=offloadable(above_tokens=200))


def billing_prompt() -> Any:
    """An agent prompt with a kept context, an authored ladder variant and tools (one offloads)."""
    rules = context("house-rules", system="## House rules\nNever promise refunds.", priority=100)
    catalog = prefer(
        context("catalog", priority=60, system="## Catalog\n" + "Plan Pro: 2 TB, EUR 10 per month, 30 days of versions. " * 40),
        context("catalog-index", system="## Catalog (index)\n- Pro: 2 TB\n- Free: 5 GB"),
    )
    return prompt(
        "billing-agent",
        system="You are Ari, a billing agent.",
        input=Question,
        use=[rules, catalog],
        tools=[lookup, history],
        prompt=lambda i: i.question,
        examples={"refund": {"question": "Was INV-1042 charged twice?"}},
    )


def scripted_run(answer: str = "INV-1042 was paid once.", *, order: str = "INV-1042", question: str = "Was INV-1042 charged twice?",
                 optimize_at: int = 420, steps: list[Any] | None = None) -> tuple[dict[str, Any], Any]:
    """One real agent run: a tool-call step (with an offloaded result), then the answer."""
    script = steps if steps is not None else [[tool_call("lookup_order", {"order_id": order}), tool_call("order_history", {"order_id": order})], answer]
    model = ScriptedModel(script, name="scripted-billing", capacity=ModelCapacityProfile(8_192, 512, "estimated"))
    bot = agent("billing-agent", prompt=billing_prompt(), model=model, input_budget=InputBudget(optimize_at=optimize_at, max=4_000), max_steps=3)
    # generate() is the sync API: from inside a test's event loop it runs in a thread of its own.
    with ThreadPoolExecutor(1) as pool:
        result = pool.submit(run_to_the_end, bot, input={"question": question}).result()
    return result.to_dict(), result


def run_to_the_end(target: Any, **kwargs: Any) -> Any:
    """``generate``'s result, or the partial result a failed run raised with (as the recorder stores it)."""
    try:
        return generate(target, **kwargs)
    except RunError as exc:
        return exc.result


def run_record(
    *,
    target: str = "billing-agent",
    kind: str = "agent",
    input: Any = None,
    origin: str = "app",
    started_at: datetime | None = None,
    run_id: str | None = None,
    answer: str = "INV-1042 was paid once.",
    order: str = "INV-1042",
    usage: dict[str, int] | None = None,
    steps: list[Any] | None = None,
    question: str = "Was INV-1042 charged twice?",
) -> dict[str, Any]:
    """A whole run as the recorder writes it, its steps from a real ``generate``."""
    result, raw = scripted_run(answer, order=order, steps=steps, question=question)
    status = {"text": "ok", "max_steps": "max_steps"}.get(raw.stop_reason, "error")
    step_dicts = result["steps"]
    if usage is not None:
        for step in step_dicts:
            step["usage"] = dict(usage)
    summed = None if usage is None else {k: v * len(step_dicts) for k, v in usage.items()}
    return {
        "id": run_id or uuid.uuid4().hex[:12],
        "target": target,
        "kind": kind,
        "file": "agents.py",
        "line": 12,
        "origin": origin,
        "started_at": (started_at or datetime.now(UTC)).isoformat(),
        "duration_ms": 42.5,
        "status": status,
        "error": result["error"],
        "model": "scripted-billing",
        "input": input if input is not None else {"question": question},
        "text": result["text"],
        "usage": summed,
        "steps": step_dicts,
    }


def long_run(steps: int, run_id: str, base: dict[str, Any] | None = None) -> dict[str, Any]:
    """A run of ``steps`` steps: the steps of one real run (``run_record``: a tool call, then the
    answer) repeated, each re-indexed and after the one before in time; it ends with the answer."""
    run = copy.deepcopy(base if base is not None else run_record())
    pattern = run["steps"]
    clock = 0.0
    out = []
    for n in range(steps):
        step = copy.deepcopy(pattern[-1] if n == steps - 1 else pattern[n % len(pattern)])
        step["index"] = n
        if isinstance(step.get("started_ms"), (int, float)):
            step["started_ms"] = clock
            clock += float(step.get("latency_ms") or 1.0) + float(step.get("tool_ms") or 0.0) + 1.0
        out.append(step)
    run["id"], run["steps"] = run_id, out
    return run


def many_runs(store: RunStore, count: int, *, target: str = "billing-agent", start: datetime | None = None) -> list[str]:
    """``count`` runs (copies of one real run, a second apart), oldest first; returns their ids."""
    base = run_record(target=target)
    begin = start or datetime(2026, 1, 1, tzinfo=UTC)
    ids = []
    for n in range(count):
        run = {**base, "id": f"run-{n:05d}", "started_at": (begin + timedelta(seconds=n)).isoformat(), "text": f"answer number {n}"}
        store.write(run)
        ids.append(run["id"])
    return ids


class RecordingSession(FakeSession):
    """``FakeSession`` plus the project's real run store and ``runs`` events."""

    def __init__(self, root: Path, prompts: list[Any] | None = None, *, agent_ids: tuple[str, ...] = ()) -> None:
        super().__init__(root, prompts if prompts is not None else [*default_prompts(), billing_prompt()], agent_ids=agent_ids)
        self.store = RunStore.for_project(root)

    def runs(self) -> RunStore:
        return self.store

    def record(self, run: dict[str, Any]) -> str:
        """Write a run as another process would, then tell subscribers, as the real session does."""
        run_id = self.store.write(run)
        self._emit_runs(f"1 new run: {run.get('target')} ({run.get('status')})")
        return run_id

    def _emit_runs(self, summary: str) -> None:
        from crux_devtools.inspector.api import SessionEvent

        event = SessionEvent(kind="runs", version=self.store.change_token(), summary=summary)  # type: ignore[arg-type]
        for callback in list(self._subscribers):
            callback(event)

    async def run(self, prompt_id: str, *, example: str | None = None, input: dict[str, Any] | None = None, confirm: Any = None) -> dict[str, Any]:
        """The inspector's own Run: a real run, recorded with origin "inspector", returned whole."""
        asked = fake_check_run(self.report, prompt_id, confirm)
        if asked is not None:  # nothing runs: the front end must ask first
            return asked
        self.run_calls.append({"prompt_id": prompt_id, "example": example, "input": input})
        run = run_record(target=prompt_id, origin="inspector", input=input or {"question": "Was INV-1042 charged twice?"})
        self.record(run)
        return run


def audit_run(run_id: str = "audit") -> dict[str, Any]:
    """A real run whose step sends a context at its offload rung (a preview and a handle) and whose
    prompt's token budget dropped another context before planning."""
    from crux_devtools import offloadable

    log = offloadable(context("audit-log", priority=40, system="## Audit log\n" + "\n".join(f"2026-01-{d:02d} INV-{d} paid" for d in range(1, 29)) * 6), above_tokens=100)
    notes = context("old-notes", priority=5, system="## Old notes\n" + "Nothing of note happened. " * 60)
    audit = prompt("audit", system="You audit invoices.", use=[log, notes], prompt="Any duplicates?", token_budget=2000)
    model = ScriptedModel(["No duplicates."], name="scripted-audit", capacity=ModelCapacityProfile(8_192, 512, "estimated"))
    auditor = agent("auditor", prompt=audit, model=model, input_budget=InputBudget(optimize_at=300, max=600))
    with ThreadPoolExecutor(1) as pool:
        result = pool.submit(generate, auditor, input={}).result()
    return {
        "id": run_id, "target": "auditor", "kind": "agent", "file": "audit.py", "line": 3, "origin": "app",
        "started_at": datetime.now(UTC).isoformat(), "duration_ms": 3.0, "status": "ok", "error": None,
        "model": "scripted-audit", "input": {}, "text": result.text, "usage": None,
        "steps": [s.to_dict() for s in result.steps],
    }
