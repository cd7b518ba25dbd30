"""Where a definition was written: the user's file and line that called ``prompt(...)`` or ``agent(...)``.

Captured once at construction (a few frame hops, no source reading), so a recorded run can say
which source to change without the recorder searching for it.
"""

from __future__ import annotations

import os
import sys

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def definition_site() -> tuple[str, int] | None:
    """The first caller outside the ``crux_devtools`` package, as ``(absolute file, line)``."""
    try:
        frame = sys._getframe(1)
    except ValueError:
        return None
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_PACKAGE):
            if filename.startswith("<"):
                return filename, frame.f_lineno
            return os.path.abspath(filename), frame.f_lineno
        frame = frame.f_back  # type: ignore[assignment]
    return None


def site_words(site: tuple[str, int] | None) -> str | None:
    """``ctx.py:3`` (the file relative to the working folder when it is inside it), or None."""
    if site is None:
        return None
    file, line = site
    try:
        relative = os.path.relpath(file)
    except ValueError:  # another drive
        relative = file
    return f"{file if relative.startswith('..') else relative}:{line}"
