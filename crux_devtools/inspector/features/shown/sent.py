"""The request as sent, read from a report's ``preview`` (``RequestPreview.to_dict()``) or a recorded
run step (``step["sent"]`` with its receipt ``step["request"]``).

Every surface (the CLI, the TUI's Request tab and run detail, the web prompt page and run page)
shows the same thing: the literal ``sent`` request, its system text cut part by part at each
contribution's ``span``, with the rung each part was sent at. The cutting is done once, here
(``cut_system``); the surfaces only add their looks (colours, CSS classes, Rich styles). These
functions only read what the core decided; nothing here re-plans or re-counts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ....core.plan.rungs import label, sent_as
from ....shapes import ExampleReport, SentRequestDict

def rung_text(choice: Mapping[str, Any]) -> str:
    """A candidate's or adaptation's rung as every view writes it: its label, and the alternative's id
    for ``authored`` (``authored: catalog-index``)."""
    return label(choice.get("representation")) + (f": {choice['variant']}" if choice.get("variant") else "")


# The kinds of contribution (``core/plan/receipts.py``): those of the system text, and those outside
# it (the user prompt and passed messages, and the tool schemas).
SYSTEM_KINDS = ("prompt-system", "context", "ladder")
MESSAGE_KINDS = ("user-prompt", "messages")
TOOLS_KIND = "tools"

# Where the capacity profile a plan used came from, in words (``RequestPreview.capacity_source``).
CAPACITY_SOURCES = {
    "model": "the model's own capacity",
    "profile": "a capacity profile",
    "resolver": "the capacity resolver",
    "conservative": "the conservative default",
}


UNATTRIBUTED = "(unattributed)"


@dataclass(frozen=True, slots=True)
class SentPart:
    """One part of the sent system text (``text``), or a contributor whose rung sent nothing
    (``text`` is ``None``: an omitted rung).

    ``contribution`` is the contribution the part was cut for, as the report or run holds it (a
    surface reads what else it shows from it); ``None`` for text that no span covers, which is
    named ``(unattributed)``. ``span`` is the contribution's recorded ``(start, end)``; ``text`` is
    ``system[start:end]`` clipped so that no character shows twice and none past the text's end.
    """

    contributor: str
    kind: str
    representation: str
    tokens: int
    text: str | None
    variant: str | None = None
    handle: str | None = None
    span: tuple[int, int] | None = None
    contribution: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)

    @property
    def attributed(self) -> bool:
        """False for text that no contribution's span covers."""
        return self.contribution is not None

    @property
    def rung(self) -> str:
        """The rung in words: ``full``, ``authored: catalog-index``, ``summary``,
        ``offload preview · handle ofl_…``, ``omitted: not sent``."""
        return sent_as(self.representation, variant=self.variant, handle=self.handle)


def sent_request(example: ExampleReport | None) -> SentRequestDict | None:
    """The ``sent`` request of an ``ExampleReport`` (``None`` when nothing would be sent)."""
    preview = example["preview"] if example is not None else None
    return preview["sent"] if preview is not None else None


def span_of(contribution: Mapping[str, Any]) -> tuple[int, int] | None:
    """A contribution's ``span`` as ``(start, end)``; ``None`` when it has none (or not two integers)."""
    span = contribution.get("span")
    if isinstance(span, (list, tuple)) and len(span) == 2 and all(isinstance(x, int) for x in span):
        return int(span[0]), int(span[1])
    return None


def _part(contribution: Mapping[str, Any], text: str | None, span: tuple[int, int] | None) -> SentPart:
    return SentPart(
        contributor=str(contribution.get("contributor", "?")),
        kind=str(contribution.get("kind", "")),
        representation=str(contribution.get("representation", "")),
        tokens=int(contribution.get("tokens") or 0),
        text=text,
        variant=contribution.get("variant"),
        handle=contribution.get("handle"),
        span=span,
        contribution=contribution,
    )


def _unattributed(text: str) -> SentPart:
    return SentPart(UNATTRIBUTED, "text", "full", 0, text)


def cut_system(system: str, contributions: Iterable[Mapping[str, Any]]) -> list[SentPart]:
    """``system`` (the text as sent) cut at each contribution's ``span``, in text order, keeping
    every character: the parts' texts joined give back ``system`` exactly.

    The text between (and after) the spans, the blank separators included, comes as unattributed
    parts (``contribution`` ``None``). Spans are clipped so that no character is in two parts and
    none is past the end (a stored text may have been cut); a part whose span starts past the end
    has the empty text. Contributions without a span are not parts.
    """
    spanned = sorted(
        ((span, c) for c in contributions if (span := span_of(c)) is not None),
        key=lambda item: item[0],
    )
    parts: list[SentPart] = []
    at = 0
    for (start, end), contribution in spanned:
        clipped_start = max(start, at)
        clipped_end = min(max(end, clipped_start), len(system))
        gap_end = min(clipped_start, len(system))
        if gap_end > at:
            parts.append(_unattributed(system[at:gap_end]))
        parts.append(_part(contribution, system[clipped_start:clipped_end], (start, end)))
        at = max(at, gap_end, clipped_end)
    if at < len(system):
        parts.append(_unattributed(system[at:]))
    return parts


def system_parts(preview: Mapping[str, Any]) -> list[SentPart]:
    """The sent system text, part by part in text order, each with its contributor and rung; an
    omitted rung (``text`` ``None``) stands after the part before it in the plan.

    Text that no contribution claims (there should be none but the blank lines between parts) is
    shown as an ``(unattributed)`` part, so that every character sent is on screen.
    """
    sent = preview.get("sent") or {}
    system = str(sent.get("system") or "")
    contributions = [
        c for c in preview.get("contributions") or [] if c.get("kind") not in MESSAGE_KINDS and c.get("kind") != TOOLS_KIND
    ]
    parts = [p for p in cut_system(system, contributions) if p.attributed or (p.text or "").strip()]
    # each omitted rung goes after the part of the last contribution with a span before it
    after: dict[int, list[SentPart]] = {}
    previous: int | None = None
    for c in contributions:
        if span_of(c) is not None:
            previous = id(c)
        elif c.get("representation") == "omitted":
            after.setdefault(-1 if previous is None else previous, []).append(_part(c, None, None))
    ordered = list(after.get(-1, []))
    for part in parts:
        ordered.append(part)
        if part.contribution is not None:
            ordered.extend(after.pop(id(part.contribution), []))
    return ordered


def tokens_of(preview: Mapping[str, Any], kinds: tuple[str, ...]) -> int:
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


def model_words(preview: Mapping[str, Any], plan_model: Mapping[str, Any] | None) -> str:
    """Which model the plan is for: ``model gpt-4o (project default from pyproject.toml)``."""
    name = (plan_model or {}).get("name") or preview.get("model")
    label = (plan_model or {}).get("label")
    if name:
        return f"model {name} ({label})" if label else f"model {name}"
    return label or "no model named"


def capacity_line(preview: Mapping[str, Any], plan_model: Mapping[str, Any] | None = None) -> str:
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
