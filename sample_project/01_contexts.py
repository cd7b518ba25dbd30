"""Lesson 1: a prompt composed from reusable contexts.

- `house_rules`, `billing` and `account` come from shared.py: written once, used by many prompts.
- `billing` nests `product_facts` through its own `use`: the nested block comes first.
- `billing` declares the `lookup_order` tool: every prompt that uses it inherits the tool.
- `account` has its own `when`: it joins only when the customer is signed in, so its input
  fields become optional in the merged input model.

Each example states these claims as expectations (`example(..., expect=expect()...)`):
`crux-devtools check` fails, at the claim's line, the day the code stops doing what this says.
"""

from __future__ import annotations

from pydantic import BaseModel, Field
from shared import account, billing, house_rules

from crux_devtools import example, expect, prompt


class Ticket(BaseModel):
    message: str = Field(description="The customer's message")


support_reply = prompt(
    "support-reply",
    system="You are Ari, a support agent for Nimbus cloud storage.",
    input=Ticket,
    use=[house_rules, billing, account],
    prompt=lambda i: i.message,
    examples={
        "signed-in": example(
            {"message": "Why was I charged twice on INV-1042?", "customer_name": "Dana Okafor", "plan": "pro"},
            expect=expect().includes("house-rules", "product-facts", "billing", "account").tool("lookup_order"),
        ),
        "anonymous": example(
            {"message": "How much storage does Pro include?"},
            expect=expect().excludes("account").includes("billing").tool("lookup_order"),
        ),
    },
)
