"""Lesson 3: priorities and a token budget.

Priority (0-100, default 50) says what goes first under token pressure; use order says where text
appears. With a budget, the lowest-priority contexts drop until the system text fits; the prompt's
own text always stays. A nested context never outlives its owner.

`budgeted-reply` has a default budget of 150 tokens: its system text is about 200 tokens, so
`style-examples` (priority 10, the lowest) is dropped. In the inspector, move the budget slider down
and watch `brand-voice` (30) go next, then the tone (40), then `product-facts` (70) and then
`billing` (80), which owns it (a nested context can leave before its owner, never after it); the
house rules (100) go last, and the prompt's own text always stays.
"""

from __future__ import annotations

from pydantic import BaseModel
from shared import billing, brand_voice, friendly_tone, house_rules

from crux_devtools import context, example, expect, prompt

style_examples = context(
    "style-examples",
    priority=10,
    system=(
        "## Example replies\n"
        "Q: Can I recover a deleted file?\n"
        "A: Yes. Open Nimbus on the web, choose Trash, select the file and press Restore. "
        "Pro keeps deleted files for 30 days.\n\n"
        "Q: Why is my upload slow?\n"
        "A: Uploads share your connection with other apps. Pause other large transfers and try again."
    ),
)


class Question(BaseModel):
    question: str


budgeted_reply = prompt(
    "budgeted-reply",
    system="You are Ari, a support agent for Nimbus cloud storage. Be accurate and brief.",
    input=Question,
    use=[house_rules, billing, friendly_tone, brand_voice, style_examples],
    prompt=lambda i: i.question,
    token_budget=150,
    examples={
        "with-brand-voice": example(
            {"question": "How do I restore a file?", "brand_voice": "Calm and exact."},
            expect=expect().dropped("style-examples", reason="budget").includes("brand-voice", "tone-friendly", "billing"),
        ),
        "no-brand-voice": example(
            {"question": "Why is my upload slow?"},
            expect=expect().dropped("style-examples", reason="budget").excludes("brand-voice"),
        ),
    },
)

# `crux-devtools inspect sample_project --prompt budgeted-reply --token-budget 100` shows more drops.
