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
    "profile": "a capacity profile",
    "resolver": "the capacity resolver",
    "conservative": "the conservative default",
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


def model_words(preview: dict[str, Any], plan_model: dict[str, Any] | None) -> str:
    """Which model the plan is for: ``model gpt-4o (project default from pyproject.toml)``."""
    name = (plan_model or {}).get("name") or preview.get("model")
    label = (plan_model or {}).get("label")
    if name:
        return f"model {name} ({label})" if label else f"model {name}"
    return label or "no model named"


def capacity_line(preview: dict[str, Any], plan_model: dict[str, Any] | None = None) -> str:
    """``model gpt-4o (the agent's model) · window 128,000 · output reserve 4,096 · capacity from
    the model's own capacity``: the capacity profile a plan used."""
    bits = [model_words(preview, plan_model)]
    for key, label in (("context_window", "window"), ("output_reserve", "output reserve")):
        if isinstance(preview.get(key), int):
            bits.append(f"{label} {preview[key]:,}")
    source = preview.get("capacity_source")
    profile = (plan_model or {}).get("profile")
    if profile:  # a [tool.crux-devtools.models.NAME] table gave the capacity
        bits.append(f"capacity from {profile}")
    elif source:
        bits.append(f"capacity from {CAPACITY_SOURCES.get(source, source)}")
    return " · ".join(bits)


def example_status(example: dict[str, Any]) -> str:
    """The example's one status (``ExampleReport["status"]``): ``fits``, ``over`` or ``error``."""
    return str(example["status"])


def over_reason(example: dict[str, Any]) -> str:
    """Why an example is ``over``, in words: the plan is over its limit, or the system text is over
    its ``token_budget`` even after every drop."""
    preview = example.get("preview") or {}
    failure = example.get("preview_error") or {}
    if preview.get("status") == "over-limit" or failure.get("code") == "REQUEST_TOO_LARGE":
        return "over-limit: nothing would be sent"
    inspection = example.get("inspection") or {}
    return f"over: the system text is over its token_budget of {inspection.get('token_budget')} even after drops"
