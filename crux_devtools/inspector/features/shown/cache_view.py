"""The prompt-cache advice of one target as the session can give it, and the bar both front ends draw.

``target_advice`` plans each example of a prompt a second time through the session (in its worker;
no model is called) and, with ``runs``, the inputs of the newest recorded runs, then hands
everything to ``review/cache_advice.advise``: ``crux-devtools cache``, the web page's Cache panel and
the TUI's Cache tab all go through it, so they say the same. ``bar`` lays the request out as
segments in request order (their share of the width, their class) with the breakpoints, for the
web page's SVG and the TUI's line of blocks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ....review.cache_advice import Planned, advise
from ...session.discovery import read_model_config

CLASS_LABELS = {"static": "static", "per-input": "per-input", "per-request": "per-request"}


async def target_advice(session: Any, prompt: Mapping[str, Any], *, runs: Sequence[Mapping[str, Any]] = (),
                        profiles: Mapping[str, Mapping[str, Any]] | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The advice of ``prompt`` (a ``PromptReport``): its examples planned twice, ``runs`` once each."""
    if profiles is None:
        profiles = dict(read_model_config(session.root)[0].get("models") or {})
    planned: list[Planned] = []
    for example in prompt["examples"]:
        again = await session.evaluate(prompt["id"], example=example["name"])
        planned.append(Planned(example["name"], example.get("input") or {}, example, again))
    starts: list[float] = []
    for run in runs:
        data = run.get("input")
        if not isinstance(data, dict):
            continue
        planned.append(Planned(f"run:{run['id']}", data, await session.evaluate(prompt["id"], input=data)))
        try:
            starts.append(datetime.fromisoformat(str(run.get("started_at"))).timestamp())
        except ValueError:
            pass
    return advise(prompt, planned, profiles=profiles, run_starts=starts)


@dataclass(frozen=True, slots=True)
class Segment:
    """One block of the bar: where it starts and how wide it is, in percent of the request's tokens."""

    id: str
    cls: str
    tokens: int
    start: float
    width: float


@dataclass(frozen=True, slots=True)
class Bar:
    segments: list[Segment]
    breakpoints: list[tuple[float, str]]  # (percent from the left, a label)
    prefix: float  # the cacheable prefix, in percent
    total: int


def bar(target: Mapping[str, Any]) -> Bar:
    """``target``'s blocks as a bar in request order, with the breakpoints and the cacheable prefix."""
    blocks = list(target.get("blocks") or ())
    total = sum(int(b["tokens"]) for b in blocks) or 1
    segments: list[Segment] = []
    position = 0
    for b in blocks:
        segments.append(Segment(str(b["id"]), str(b["class"]), int(b["tokens"]), 100 * position / total, 100 * int(b["tokens"]) / total))
        position += int(b["tokens"])
    marks = [(min(100.0, 100 * int(p["tokens"]) / total), f"breakpoint after {p['tokens']:,} tokens ({p['ttl']})") for p in target.get("breakpoints") or ()]
    return Bar(segments, marks, min(100.0, 100 * int(target.get("prefix_tokens") or 0) / total), total)


__all__ = ["Bar", "CLASS_LABELS", "Segment", "bar", "target_advice"]
