"""Contexts shared by the Nimbus support prompts. Define once, compose everywhere."""

from __future__ import annotations

from pydantic import BaseModel, Field

from crux_devtools import context, tool


class AccountInput(BaseModel):
    customer_name: str | None = Field(default=None, description="Signed-in customer's name, if any")
    plan: str | None = Field(default=None, description="Customer's plan: free, pro or business")


class BrandInput(BaseModel):
    brand_voice: str | None = Field(default=None, description="Brand voice notes for this channel")


class LookupOrder(BaseModel):
    order_id: str = Field(description="Order or invoice id, e.g. INV-1042")


def _lookup_order(args: LookupOrder) -> dict:
    # A stand-in for the billing API; deterministic so the demo works offline.
    return {"order_id": args.order_id, "status": "paid", "amount_eur": 119.0, "plan": "pro"}


lookup_order = tool(
    "lookup_order",
    description="Look up an invoice or order by id in the billing system.",
    parameters=LookupOrder,
    execute=_lookup_order,
)

house_rules = context(
    "house-rules",
    priority=100,
    system=(
        "## House rules\n"
        "- Never promise refunds; say a billing specialist will confirm.\n"
        "- Never ask for passwords or full card numbers.\n"
        "- Answer in the customer's language."
    ),
)

product_facts = context(
    "product-facts",
    priority=70,
    system=(
        "## Nimbus plans\n"
        "Free: 5 GB, one device. Pro: 2 TB, unlimited devices, 30-day version history. "
        "Business: pooled storage, admin console, SSO, 180-day version history."
    ),
)

billing = context(
    "billing",
    priority=80,
    tools=[lookup_order],
    use=[product_facts],  # nested: product facts resolve before the billing block
    system="## Billing\nUse lookup_order before you discuss any invoice. Quote amounts in EUR.",
)

account = context(
    "account",
    priority=60,
    input=AccountInput,
    when=lambda i: bool(i.customer_name),
    system=lambda i: f"## Account\nThe customer is {i.customer_name}, on the {i.plan or 'free'} plan.",
)

brand_voice = context(
    "brand-voice",
    priority=30,
    input=BrandInput,
    when=lambda i: bool(i.brand_voice),
    system=lambda i: f"## Brand voice\n{i.brand_voice}",
)

friendly_tone = context("tone-friendly", priority=40, system="## Tone\nWarm, plain words, short paragraphs.")
formal_tone = context("tone-formal", priority=40, system="## Tone\nFormal and precise. No exclamation marks.")
triage_mode = context(
    "triage-mode",
    priority=90,
    system="## Triage\nClassify the ticket as billing, sync, sharing or account. Reply with the label and one line of reasoning.",
)
