"""Lesson 5: an agent run, with one receipt per step.

`support_agent` binds a prompt to a model with a default input budget (optimize at 2,800 tokens,
never more than 4,000). The model is a `ScriptedModel`, so the demo runs offline: it asks for
`lookup_sku`, `fetch_sync_history` and `device_report`, then answers. Run it with the inspector's Run button, or:

    .venv/bin/python sample_project/05_agent.py

What the receipts show (example `stalled-sync`, 24 hours of log):

- Step 0: the full catalog (priority 70) stays; the sync log is far over budget, so `generate`
  prepares its extractive summary (no model needed) and sends that ("summary"); the example
  replies still fit under the 2,800-token watermark.
- The `fetch_sync_history` result is large, so its tool output policy offloads it: the application
  gets the whole text (`tool_results[i].output`), the model a preview and a handle
  (`model_output`), and the step records an `OffloadReceipt`. `device_report` returns
  `offload(report)`: a small value forced to a reference. `read_offload` is offered from then on.
- Step 1: the conversation grew by the tool results; the catalog drops to its authored index.
  Fidelity never rises again in this epoch, so later steps keep the index even with headroom.
- `preview` (what the inspector shows before a run) offloads the log instead: it never prepares a
  summary, so the summary rung is "unprepared" there.

Example `quiet-day` (1 hour of log) fits at full fidelity in step 0.
"""

from __future__ import annotations

from nimbus_data import CATALOG_INDEX, EXAMPLE_REPLIES, full_catalog, sync_log
from pydantic import BaseModel, Field
from shared import house_rules

from crux_devtools import (
    InputBudget,
    ModelCapacityProfile,
    ScriptedModel,
    agent,
    context,
    droppable,
    example,
    expect,
    generate,
    inspect_request,
    offload,
    offloadable,
    prefer,
    prompt,
    summarizable,
    summarize,
    tool,
    tool_call,
)


class ReplayingScriptedModel(ScriptedModel):
    """A ScriptedModel that starts its script over for each new conversation, so the demo can run
    again and again in one process (the inspector's worker does)."""

    def complete(self, request):  # noqa: ANN001, ANN201 - same signature as ScriptedModel.complete
        if not any(m.get("role") == "assistant" for m in request.messages):
            self.requests.clear()
        return super().complete(request)


class SkuQuery(BaseModel):
    sku: str = Field(description="A product SKU such as NB-PRO-2TB")


class HistoryQuery(BaseModel):
    device: str = Field(description="Device name, e.g. laptop-7")
    hours: int = Field(default=48, ge=1, le=168)


lookup_sku = tool(
    "lookup_sku",
    description="Look up one product by SKU.",
    parameters=SkuQuery,
    execute=lambda a: {"sku": a.sku, "regions": ["eu-west", "eu-central"], "version_history_days": 30},
)
fetch_sync_history = tool(
    "fetch_sync_history",
    description="Fetch the complete sync history of one device.",
    parameters=HistoryQuery,
    execute=lambda a: sync_log(a.hours).replace("laptop-7", a.device),
    output=offloadable(above_tokens=400),  # small histories go inline, large ones by reference
)



class DeviceQuery(BaseModel):
    device: str = Field(description="Device name, e.g. laptop-7")


def _device_report(args: DeviceQuery) -> object:
    report = {"device": args.device, "client": "nimbus-desktop 8.4.1", "os": "macOS 15.1", "pending_uploads": 0}
    # Small, but it is evidence the model must quote exactly: always send it as a reference.
    return offload(report)


device_report = tool("device_report", description="The device's client report.", parameters=DeviceQuery, execute=_device_report)


class AgentInput(BaseModel):
    question: str = Field(description="The customer's question")
    log_hours: int = Field(default=24, ge=0, le=72, description="Hours of sync log in the context")


catalog = droppable(
    prefer(
        context("catalog", priority=70, tools=[lookup_sku], input=AgentInput, system=full_catalog(1)),
        context("catalog-index", system=CATALOG_INDEX),
    )
)
sync_log_ladder = offloadable(
    summarizable(context("sync-log", priority=50, system=lambda i: "## Sync log\n" + sync_log(i.log_hours)), strategy=summarize.extractive(0.1)),
    above_tokens=300,
)
examples = droppable(context("example-replies", priority=10, system=EXAMPLE_REPLIES))

agent_reply = prompt(
    "agent-reply",
    system="You are Ari, a support agent for Nimbus cloud storage. Use the tools before you answer.",
    use=[house_rules, catalog, sync_log_ladder, examples],
    tools=[fetch_sync_history, device_report],
    prompt=lambda i: i.question,
    examples={
        "stalled-sync": example(
            {"question": "My laptop stopped syncing last night. What happened?", "log_hours": 24},
            expect=expect().rung("catalog", "full").rung("sync-log", "summary").rung("example-replies", "full")
            .tokens(max=2_800).tool("fetch_sync_history").tool("device_report").tool("lookup_sku"),
        ),
        "quiet-day": example(
            {"question": "Which plan keeps 30 days of versions?", "log_hours": 1},
            expect=expect().rung("catalog", "full").rung("sync-log", "full").rung("example-replies", "full"),
        ),
    },
)

model = ReplayingScriptedModel(
    [
        [
            tool_call("lookup_sku", {"sku": "NB-PRO-2TB"}),
            tool_call("fetch_sync_history", {"device": "laptop-7", "hours": 48}),
            tool_call("device_report", {"device": "laptop-7"}),
        ],
        "Your laptop stopped syncing at 03:10 when its sign-in token expired. Sign out and back in; "
        "Pro 2 TB keeps 30 days of versions, so nothing is lost.",
    ],
    name="nimbus-scripted",
    capacity=ModelCapacityProfile(16_384, 1_024, "estimated"),
)

support_agent = agent(
    "support-agent",
    prompt=agent_reply,
    model=model,
    input_budget=InputBudget(optimize_at=2_800, max=4_000),
    max_steps=4,
)


if __name__ == "__main__":
    result = generate(support_agent, input=agent_reply.examples["stalled-sync"])  # type: ignore[index]
    for step in result.steps:
        receipt = step.request
        print(f"step {step.index}: {receipt.input_tokens} input tokens (optimize at {receipt.optimize_at}, max {receipt.max_input_tokens})")
        for a in receipt.adaptations:
            print(f"  {a.contributor}: {a.representation} ({a.full_tokens} -> {a.selected_tokens} tokens)")
        for o in step.offloads:
            print(f"  offloaded {o.source}: {o.byte_size} bytes as {o.handle} r{o.revision}")
        largest = inspect_request(receipt).breakdown[0]
        print(f"  largest part: {largest.contributor} ({largest.tokens} tokens)")
    print("answer:", result.text)

    # generate() also takes a plain prompt and a model; a one-off ScriptedModel shows what was sent.
    once = ScriptedModel(["Pro 2 TB and Family 2 TB keep 30 days of versions."], name="nimbus-once")
    generate(agent_reply, input=agent_reply.examples["quiet-day"], model=once)  # type: ignore[index]
    print("a prompt run with ScriptedModel sent", len(once.requests[0].system), "characters of system text")
