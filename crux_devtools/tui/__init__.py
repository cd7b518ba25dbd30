"""The Textual front end of the inspector: ``crux-devtools tui``. Imports textual; the core never does."""

from __future__ import annotations

from .app import CruxTui, make_tui

__all__ = ["CruxTui", "make_tui"]
