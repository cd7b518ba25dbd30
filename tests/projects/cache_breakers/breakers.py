"""Eight prompts, one cache breaker each, every one placed before the shared catalogue."""

from __future__ import annotations

import json
import uuid
from datetime import datetime

from pydantic import BaseModel

from crux_devtools import InputBudget, ScriptedModel, agent, context, droppable, match, prompt, tool, when
from crux_devtools import ModelCapacityProfile

CATALOG = "## Catalogue\n" + "\n".join(f"- SKU{i:04d}: plan {i}, {i * 10} GB, ships in {i % 7 + 1} days" for i in range(250))
catalog = context("catalog", system=CATALOG)


class Ask(BaseModel):
    question: str
    user: str = "ada"
    tags: list[str] = []
    admin: bool = False
    model: str = "small"
    vip: bool = False
    log: list[str] = []


class Args(BaseModel):
    sku: str


lookup = tool("lookup", description="Look a SKU up.", parameters=Args, execute=lambda a: {"sku": a.sku})
refund = tool("refund", description="Refund an order.", parameters=Args, execute=lambda a: {"ok": True})
EXAMPLES = {"first": {"question": "What ships fastest?"}, "second": {"question": "Which plan is biggest?"}}

clock = context("clock", system=lambda i: f"Now: {datetime.now().isoformat(timespec='microseconds')}")
request_id = context("request-id", system=lambda i: f"Request id: {uuid.uuid4()}")
prefs = context("prefs", system=lambda i: "Preferences: " + json.dumps({tag: True for tag in i.tags}))
admin_tools = context("admin-tools", system="Admins may refund.", tools=[refund])
user_profile = context("user-profile", system=lambda i: f"## User\nThe user is {i.user}.")
small_notes = context("small-notes", system="Answer in one line.")
large_notes = context("large-notes", system="Answer in full, with every detail that helps.")
vip_note = context("vip-note", system="VIP customers get priority shipping.")
history = context("history", system=lambda i: "## History\n" + "\n".join(i.log))


def _prompt(id: str, *use: object, examples: dict | None = None, tools: list | None = None) -> object:
    return prompt(id, system="You answer questions about the catalogue.", prompt=lambda i: i.question, input=Ask,
                  use=[*use, catalog], tools=tools or [lookup], examples=examples or EXAMPLES)


timestamp = _prompt("timestamp", clock)
random_id = _prompt("random-id", request_id)
unsorted = _prompt("unsorted-dict", prefs, examples={"a": {"question": "q", "tags": ["red", "blue"]}, "b": {"question": "q", "tags": ["blue", "red"]}})
tool_order = _prompt("tool-order", when(lambda i: i.admin, admin_tools), examples={"a": {"question": "q"}, "b": {"question": "q", "admin": True}})
per_user = _prompt("per-user", user_profile, examples={"a": {"question": "q", "user": "ada"}, "b": {"question": "q", "user": "bob"}})
model_switch = _prompt("model-switch", match(lambda i: i.model, {"small": small_notes, "large": large_notes}),
                       examples={"a": {"question": "q", "model": "small"}, "b": {"question": "q", "model": "large"}})
when_flip = _prompt("when-flip", when(lambda i: i.vip, vip_note), examples={"a": {"question": "q"}, "b": {"question": "q", "vip": True}})
rung_change = agent(
    "rung-change",
    prompt=_prompt("rung-change-prompt", droppable(history),
                   examples={"a": {"question": "q", "log": ["sync ok"]}, "b": {"question": "q", "log": [f"line {n}: the sync stalled again" for n in range(700)]}}),
    model=ScriptedModel(["-"], name="claude-test", capacity=ModelCapacityProfile(200000, 4096, "estimated")),
    input_budget=InputBudget(max=6000),
)
