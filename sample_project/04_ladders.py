"""Lesson 4: representation ladders, the only forms the planner may send under input pressure.

- `catalog` = droppable(prefer(full catalog, catalog index)): the authored index first, omission last.
  It owns the `lookup_sku` tool, which stays on every rung but "omitted" (capability stickiness).
- `sync-log` = offloadable(summarizable(log), above_tokens=300): an extractive summary (no model),
  then an exact reference (a bounded preview + a handle + the `read_offload` tool).
- `example-replies` = droppable(...): decorative, dropped first (priority 10).
- `house-rules` is a plain context: always sent exactly.

This prompt names no model, so it is planned against the project's `default_model` from
`pyproject.toml`: `nimbus-local`, an 8,192-token window with 2,048 tokens reserved for the answer and
estimated counting, so max 5,702 input tokens (the inspector's Planning panel says so). The examples
change the data size; the inspector's budget box changes the limit. What each sends (the page's
*Request as sent*):

- `quiet-day` (1 hour of log): everything at full fidelity (about 2,100 tokens); the log's offload
  rung is "below-floor" (under above_tokens=300). Budget 2,000: `example-replies` omitted. Budget
  800: the catalog is sent as its authored index, `catalog-index` (and the examples fit again).
  Budget 400: the catalog is omitted too, and `lookup_sku` is no longer offered.
- `busy-day` (24 hours of log, about 7,000 tokens): `sync-log` is sent as its extractive summary
  (about 2,100 tokens: the first and last lines of the log and its ERROR lines, gaps marked).
  `generate` prepares that summary itself before sending (`on_miss="prepare"`, no model), so the
  inspector prepares it too and shows what a run sends. Budget 2,000: the summary no longer fits, so
  the log is sent as an offload preview (its first and last lines and a handle), `read_offload` is
  offered, and the catalog goes to its index. Budget 800: the examples go. Budget 400: over the limit
  (REQUEST_TOO_LARGE): nothing would be sent.
- `big-catalog` (four notes per product and region): the full catalog (about 5,350 tokens) leaves no
  room for the rest under 5,702, so the authored index is sent even at the default limit.
"""

from __future__ import annotations

from nimbus_data import CATALOG_INDEX, EXAMPLE_REPLIES, full_catalog, sync_log
from pydantic import BaseModel, Field
from shared import house_rules

from crux_devtools import context, droppable, example, expect, offloadable, prefer, prompt, summarizable, tool


class SkuQuery(BaseModel):
    sku: str = Field(description="A product SKU such as NB-PRO-2TB")


def _lookup_sku(args: SkuQuery) -> dict:
    return {"sku": args.sku, "regions": ["eu-west", "eu-central", "us-east"], "in_stock": True}


lookup_sku = tool("lookup_sku", description="Look up one product by SKU.", parameters=SkuQuery, execute=_lookup_sku)


class LadderInput(BaseModel):
    question: str = Field(description="The customer's question")
    log_hours: int = Field(default=1, ge=0, le=72, description="Hours of sync log to include")
    catalog_detail: int = Field(default=1, ge=1, le=6, description="Catalog notes per product and region")


catalog_full = context(
    "catalog",
    priority=70,
    tools=[lookup_sku],
    input=LadderInput,
    system=lambda i: full_catalog(i.catalog_detail),
)
catalog_index = context("catalog-index", system=CATALOG_INDEX)
sync_log_ctx = context("sync-log", priority=50, system=lambda i: "## Sync log\n" + sync_log(i.log_hours))
examples_ctx = context("example-replies", priority=10, system=EXAMPLE_REPLIES)

catalog = droppable(prefer(catalog_full, catalog_index))
log = offloadable(summarizable(sync_log_ctx), above_tokens=300)
examples = droppable(examples_ctx)

ladder_reply = prompt(
    "ladder-reply",
    system="You are Ari, a support agent for Nimbus cloud storage. Answer from the material below.",
    use=[house_rules, catalog, log, examples],
    prompt=lambda i: i.question,
    examples={
        "quiet-day": example(
            {"question": "Which plan gives me 2 TB?", "log_hours": 1},
            expect=expect().rung("catalog", "full").rung("sync-log", "full").rung("example-replies", "full")
            .tokens(min=1_900, max=2_300).tool("lookup_sku").no_tool("read_offload"),
        ),
        "busy-day": example(
            {"question": "Why did my laptop stop syncing?", "log_hours": 24},
            expect=expect().rung("sync-log", "summary").rung("catalog", "full").no_tool("read_offload").tokens(max=5_702),
        ),
        "big-catalog": example(
            {"question": "Is Business Plus available in ap-south?", "log_hours": 6, "catalog_detail": 4},
            expect=expect().rung("catalog", "authored").tool("lookup_sku"),
        ),
    },
)
