"""The Textual front end of the inspector: ``crux-devtools tui``.

``make_tui`` and ``CruxTui`` are loaded on first use, so ``crux_devtools.tui.launch`` can start the
project's worker process before paying for the Textual import.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CruxTui", "make_tui"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import app

        return getattr(app, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
