"""Lesson 2: conditional contexts.

- `brand_voice` has `when` on the context: intrinsic, it needs its own input field.
- `when(lambda i: i.channel == "email", ...)` wraps a context at the call site: only this prompt
  decides that the formal tone belongs to email.
- `match` switches between mutually exclusive modes; a key with no case selects nothing.
- `DEBUG and debug_notes` is a falsy entry: a static flag decided when the module loads.

Pick the examples in the inspector to see each exclusion and its reason.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel
from shared import brand_voice, formal_tone, friendly_tone, house_rules, triage_mode

from crux_devtools import context, example, expect, match, prompt, when

DEBUG = False

debug_notes = context("debug-notes", system="## Debug\nEcho the resolved mode at the end of the reply.")
reply_mode = context("reply-mode", system="## Reply\nAnswer the question fully, then offer one next step.")


class Message(BaseModel):
    message: str
    mode: Literal["triage", "reply"] | None = None
    channel: Literal["chat", "email"] = "chat"


responder = prompt(
    "responder",
    system="You handle incoming Nimbus support messages.",
    input=Message,
    use=[
        house_rules,
        match(on=lambda i: i.mode or "reply", cases={"triage": triage_mode, "reply": [reply_mode, friendly_tone]}),
        when(lambda i: i.channel == "email", formal_tone),
        brand_voice,
        DEBUG and debug_notes,
    ],
    prompt=lambda i: i.message,
    examples={
        "reply-chat": example(
            {"message": "My phone stopped syncing photos.", "mode": "reply"},
            expect=expect().includes("reply-mode", "tone-friendly").excludes("triage-mode", "tone-formal", "brand-voice"),
        ),
        "triage": example(
            {"message": "Refund please, the app deleted my folder!", "mode": "triage"},
            expect=expect().includes("triage-mode").excludes("reply-mode", "tone-friendly"),
        ),
        "email-with-brand": example(
            {"message": "Can I share a folder with my accountant?", "channel": "email", "brand_voice": "Calm, competent, never cute."},
            expect=expect().includes("tone-formal", "brand-voice").excludes("triage-mode"),
        ),
    },
)
