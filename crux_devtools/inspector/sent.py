"""The request as sent, read from a report's ``preview`` (``RequestPreview.to_dict()``).

The CLI and the TUI show the same thing: the literal ``sent`` request, its system text cut part by
part at each contribution's ``span``, with the rung each part was sent at. These functions only read
what the core decided; nothing here re-plans or re-counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Contributions outside the system text: the user prompt and passed messages, and the tool schemas.
MESSAGE_KINDS = ("user-prompt", "messages")
TOOLS_KIND = "tools"

# Where the capacity profile a plan used came from, in words (``RequestPreview.capacity_source``).
CAPACITY_SOURCES = {
    "model": "the model's own capacity",
    "profile": "the capacity profile the prompt names",
    "resolver": "the capacity resolver",
    "conservative": "no known model: the conservative profile",
}


@dataclass(frozen=True, slots=True)
class SentPart:
    """One part of the sent system text (``text``), or a contributor whose rung sent nothing
    (``text`` is ``None``: an omitted rung)."""

    contributor: str
    kind: str
    representation: str
    tokens: int
    text: str | None
    variant: str | None = None
    handle: str | None = None

    @property
    def rung(self) -> str:
        """The rung in words: ``full``, ``authored: catalog-index``, ``summary``,
        ``offload preview · handle ofl_…``, ``omitted: not sent``."""
        if self.representation == "authored" and self.variant:
            return f"authored: {self.variant}"
        if self.representation == "offload":
            return f"offload preview · handle {self.handle}" if self.handle else "offload preview"
        if self.representation == "omitted":
            return "omitted: not sent"
        return self.representation


def sent_request(example: dict[str, Any] | None) -> dict[str, Any] | None:
    """The ``sent`` request of an ``ExampleReport`` (``None`` when nothing would be sent)."""
    return ((example or {}).get("preview") or {}).get("sent")


def system_parts(preview: dict[str, Any]) -> list[SentPart]:
    """The sent system text, part by part in text order, each with its contributor and rung.

    Text that no contribution claims (there should be none but the blank lines between parts) is
    shown as an ``(unattributed)`` part, so that every character sent is on screen.
    """
    sent = preview.get("sent") or {}
    system = str(sent.get("system") or "")
    keyed: list[tuple[float, int, SentPart]] = []
    claimed: list[tuple[int, int]] = []
    last = -1.0
    for index, c in enumerate(preview.get("contributions") or []):
        if c.get("kind") in MESSAGE_KINDS or c.get("kind") == TOOLS_KIND:
            continue
        span = c.get("span")
        common = {
            "contributor": str(c.get("contributor", "?")),
            "kind": str(c.get("kind", "")),
            "representation": str(c.get("representation", "")),
            "tokens": int(c.get("tokens") or 0),
            "variant": c.get("variant"),
            "handle": c.get("handle"),
        }
        if span is not None:
            start, end = int(span[0]), int(span[1])
            claimed.append((start, end))
            last = float(start)
            keyed.append((last, index, SentPart(text=system[start:end], **common)))
        elif c.get("representation") == "omitted":
            keyed.append((last + 0.5, index, SentPart(text=None, **common)))
    position = 0
    for start, end in sorted(claimed) + [(len(system), len(system))]:
        gap = system[position:start]
        if gap.strip():
            keyed.append((float(position), -1, SentPart("(unattributed)", "text", "full", 0, gap)))
        position = max(position, end)
    keyed.sort(key=lambda item: (item[0], item[1]))
    return [part for _, _, part in keyed]


def tokens_of(preview: dict[str, Any], kinds: tuple[str, ...]) -> int:
    """Tokens of the contributions of these kinds (e.g. the messages, or the tool schemas)."""
    return sum(int(c.get("tokens") or 0) for c in preview.get("contributions") or [] if c.get("kind") in kinds)


def message_text(message: dict[str, Any]) -> str:
    """A message's content as text (content given as a list of parts is joined)."""
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, list):
        return "\n".join(str(p.get("text", p)) if isinstance(p, dict) else str(p) for p in content)
    return str(content)


def capacity_line(preview: dict[str, Any]) -> str:
    """``model gpt-4o · window 128,000 · output reserve 4,096 · source: the model's own capacity``."""
    model = preview.get("model")
    source = preview.get("capacity_source")
    bits = [f"model {model}" if model else "no model named"]
    for key, label in (("context_window", "window"), ("output_reserve", "output reserve")):
        if isinstance(preview.get(key), int):
            bits.append(f"{label} {preview[key]:,}")
    if source:
        bits.append(f"source {source} ({CAPACITY_SOURCES.get(source, source)})")
    return " · ".join(bits)


def plan_status(example: dict[str, Any] | None) -> str:
    """One word for the shown example: ``fits``, ``over-limit`` (the plan), ``over-budget`` (the
    system text over its token_budget even after drops), ``error``, or ``no plan``."""
    example = example or {}
    preview = example.get("preview")
    failure = example.get("preview_error")
    if example.get("error") or (failure and failure.get("code") not in ("REQUEST_TOO_LARGE",)):
        return "error"
    if (preview and preview.get("status") == "over-limit") or (failure and failure.get("code") == "REQUEST_TOO_LARGE"):
        return "over-limit"
    inspection = example.get("inspection") or {}
    if inspection and not inspection.get("fits", True):
        return "over-budget"
    return str(preview.get("status", "fits")) if preview else "no plan"
