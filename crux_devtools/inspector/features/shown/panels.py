"""The panels of a prompt's view, in one ordered registry both front ends iterate.

A ``Panel`` names one view of the prompt on screen (the request as sent, the resolved system text,
the planner's decisions...): its ``key``, the ``title`` a tab or card shows, a one-line
``description``, and where each front end shows it. The web prompt page renders a panel from
``templates/_panel_<key>.html``; the TUI from the widget in ``tui/widgets/`` whose ``PANEL`` names its key. Neither
front end lists panels of its own: a panel missing a renderer in a front end that shows it is a test
failure (tests/functional/tui/test_panels.py), not a blank space.

Adding a panel: a line in ``PANELS`` (its place in the order is its place on screen), its web
partial, and its TUI widget (a class in ``tui/widgets/`` with ``PANEL = "<key>"``).

The TUI's tab bar has room for seven tabs (number keys 1-7): it holds the first six TUI panels and the
last one (Errors, so a failed load is always in sight); any other TUI panel is in the "More" list
(key ``m``), see ``tui/panels.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# Where the web prompt page shows a panel: "top" above everything of the report, "view" in the main
# column as one of the views the view tabs choose between, "main" under it, "side" in the side column.
WebPlace = Literal["top", "view", "main", "side"]


@dataclass(frozen=True, slots=True)
class Panel:
    """One panel of a prompt's view. ``web``: where the web page shows it (``None``: not there);
    ``tui``: whether the TUI shows it as a tab."""

    key: str
    title: str
    description: str
    web: WebPlace | None
    tui: bool


PANELS: tuple[Panel, ...] = (
    Panel("request", "Request", "the request as sent: the system text part by part at its rung, the messages, the tools", "view", True),
    Panel("system", "System text", "the resolved system text: every part in full, with what was excluded or dropped", "view", True),
    Panel("contributors", "Contributors", "each context with its status, priority, tokens and why it is in or out", "side", True),
    Panel("tools", "Tools", "each tool offered, its JSON schema and what it costs", "main", True),
    Panel("planning", "Planning", "the limits the plan was made against, each ladder's candidate rungs and the choice", "side", True),
    Panel("diff", "Since the previous version", "what the last save changed in this example's system text", "main", False),
    Panel("runs", "Runs", "the recorded runs of this prompt", None, True),
    Panel("expectations", "Expectations", "the example's expectations (example(..., expect=...)): whether each holds, and why not", "side", True),
    Panel("cache", "Cache", "the request as a bar of static, per-input and per-request blocks, the cacheable prefix, the breakpoints and the suggested use order", "main", True),
    Panel("errors", "Errors", "load errors of the project and this example's own, with tracebacks", "top", True),
)


def panels_for(front_end: Literal["web", "tui"], panels: tuple[Panel, ...] | None = None) -> tuple[Panel, ...]:
    """The panels one front end shows, in the registry's order (``PANELS`` unless ``panels`` is given)."""
    return tuple(p for p in (PANELS if panels is None else panels) if (p.web is not None if front_end == "web" else p.tui))


def web_panels(place: WebPlace, panels: tuple[Panel, ...] | None = None) -> tuple[Panel, ...]:
    """The panels the web page shows at ``place``, in order."""
    return tuple(p for p in (PANELS if panels is None else panels) if p.web == place)
