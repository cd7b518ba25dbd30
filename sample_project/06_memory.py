"""Lesson 6: memory assembled under a budget, and a skill.

- `team_knowledge` asks the memory store for one budgeted block (`get_context`, 80 tokens):
  mental models, rules and lessons first, raw history last. In `photo-sync` the sync-log note is
  dropped to fit, in `new-customer` the archived ticket; the block's last line says how many notes
  the budget left out (`evidence_dropped_by_budget`).
- `customer_memory` is a `memory(...)`: its namespace comes from the input (`user:<id>`), it shows
  the customer's recent messages and the facts that match the ticket, and it exposes the
  `remember_fact` tool.
- `escalation` is a skill loaded from `skills/escalation/SKILL.md`: only its name and description
  enter the system text; the model calls `load_skill` to read the body.
- `personalized_support` bundles memory and skill in one context, as in the seed documents.

The memory file `data/memory.sqlite3` is built by `seed_memory.py` the first time this module is
imported (it is not committed).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field
from seed_memory import TEAM, ensure_seeded

from crux_devtools import MemoryStore, context, example, expect, facts, memory, prompt, recent_messages, skill

HERE = Path(__file__).resolve().parent
store = MemoryStore(ensure_seeded())


class Customer(BaseModel):
    user_id: str = Field(description="Customer id in the support desk, e.g. dana or lee")


class Ticket(BaseModel):
    message: str = Field(description="The customer's message")


TEAM_BUDGET = 80  # tokens; small on purpose, so that the lowest section visibly drops


def team_briefing(i: Ticket) -> str:
    """One budgeted block from team memory, plus a line saying what the budget left out."""
    assembly = store.get_context(TEAM, i.message, max_token_budget=TEAM_BUDGET)
    if not assembly.evidence_dropped_by_budget:
        return assembly.context_block
    left_out = assembly.evidence_dropped_by_budget
    notes = "note was" if left_out == 1 else "notes were"
    return (
        f"{assembly.context_block}\n\n(Team memory holds {assembly.evidence_candidates_considered} matching notes; "
        f"{left_out} lower-priority {notes} left out to fit {TEAM_BUDGET} tokens.)"
    )


team_knowledge = context("team-knowledge", priority=70, input=Ticket, system=team_briefing)

customer_memory = memory(
    "customer-memory",
    store=store,
    namespace=lambda i: f"user:{i.user_id}",
    input=Customer,
    query=lambda i: i.message,
    priority=60,
    blocks=[recent_messages("recent", max_messages=6), facts("facts", max_tokens=200)],
)

escalation = skill.from_file(HERE / "skills" / "escalation" / "SKILL.md")

personalized_support = context(
    "personalized-support",
    use=[customer_memory, escalation],
    system="Use durable customer memory when it is relevant. Load the escalation skill for account-risk or billing-risk questions.",
)

support_with_memory = prompt(
    "support-with-memory",
    system="You are Ari, a support agent for Nimbus cloud storage.",
    input=Ticket,
    use=[team_knowledge, personalized_support],
    prompt=lambda i: i.message,
    examples={
        "double-charge": example(
            {"user_id": "dana", "message": "I was charged twice for my renewal, please refund one."},
            expect=expect().includes("team-knowledge", "customer-memory", "skill:escalation").tool("remember_fact").tool("load_skill"),
        ),
        "photo-sync": example(
            {"user_id": "lee", "message": "My photos are stuck syncing on the iPhone."},
            expect=expect().includes("team-knowledge", "customer-memory").tool("load_skill"),
        ),
        "new-customer": example(
            {"user_id": "sam", "message": "How do I export my files as CSV?"},
            expect=expect().includes("team-knowledge", "customer-memory").tool("remember_fact"),
        ),
    },
)
