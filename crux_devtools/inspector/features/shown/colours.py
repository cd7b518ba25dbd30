"""The colour of each context, a function of its name: the same context has the same colour on every
surface (the web prompt page, its diff view, the run page's bars, the TUI), whatever the order of the
prompt's ``use``, so a before and an after can be compared by eye.

A name's colour is a stable hash of the name into ``PALETTE``; two names of one prompt (or one run)
that hash to the same colour are told apart by probing the next free colour, the names taken in
sorted order (never the order they are used in), so the result depends only on which names there
are. Past ``len(PALETTE)`` names, colours repeat (each name at its own hash).

Colour 0 is the prompt's own text (and any text no context claims); messages and tool schemas have
classes of their own (``MESSAGES_COLOUR``, ``TOOLS_COLOUR``).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from dataclasses import dataclass

PROMPT_NAME = "<prompt>"


@dataclass(frozen=True, slots=True)
class Swatch:
    """One colour: ``slot`` is the web's ``c-N`` class, ``hex`` what the TUI and the SVG charts paint."""

    slot: int
    name: str
    hex: str


# Okabe and Ito's colour-blind-safe set, with a violet and a brown added: distinguishable on white
# and on a dark terminal. Slot 0 is the prompt's own text. ``static/app.css`` holds the same values
# as ``--c0`` .. ``--c9`` (a test keeps them equal).
PALETTE: tuple[Swatch, ...] = (
    Swatch(0, "grey", "#8a94a6"),
    Swatch(1, "blue", "#0072b2"),
    Swatch(2, "orange", "#e69f00"),
    Swatch(3, "green", "#009e73"),
    Swatch(4, "pink", "#cc79a7"),
    Swatch(5, "sky", "#56b4e9"),
    Swatch(6, "vermillion", "#d55e00"),
    Swatch(7, "yellow", "#d4b800"),
    Swatch(8, "violet", "#6a3d9a"),
    Swatch(9, "brown", "#9c755f"),
)
MESSAGES_COLOUR = Swatch(-1, "slate", "#64748b")  # the web's ``c-msg``
TOOLS_COLOUR = Swatch(-2, "teal", "#0f766e")  # the web's ``c-tools``
OTHER_COLOUR = Swatch(-3, "hatched", "#c4c9d4")  # tokens no recorded part accounts for
CONTEXT_SLOTS = len(PALETTE) - 1


def hashed_slot(name: str) -> int:
    """The colour a name gets when nothing else of its prompt claims it first (1 .. 9)."""
    return 1 + zlib.crc32(name.encode("utf-8")) % CONTEXT_SLOTS


def assign_colours(names: Iterable[str]) -> dict[str, int]:
    """``{name: slot}`` for a prompt's (or a run's) contributors: each at its hashed slot, or the next
    free one when a name earlier in sorted order took it. ``<prompt>`` is always 0."""
    colours: dict[str, int] = {PROMPT_NAME: 0}
    taken: set[int] = set()
    for name in sorted({n for n in names if n and n != PROMPT_NAME}):
        slot = hashed_slot(name)
        if len(taken) < CONTEXT_SLOTS:
            while slot in taken:
                slot = 1 + slot % CONTEXT_SLOTS
        taken.add(slot)
        colours[name] = slot
    return colours


def swatch(slot: int) -> Swatch:
    """The swatch of a slot (0 for anything out of range)."""
    return PALETTE[slot] if 0 <= slot < len(PALETTE) else PALETTE[0]
