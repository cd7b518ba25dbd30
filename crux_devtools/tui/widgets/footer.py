"""The footer: Textual's, redrawn only when the keys it shows change.

Textual's ``Footer`` composes all its keys again on every bindings update (each focus change, each
``refresh_bindings``; several at start), each time restyling every key; most of these updates leave
the keys shown as they were. ``KeysFooter`` coalesces a burst of updates into one check after the
next refresh and recomposes only when what it would show differs.
"""

from __future__ import annotations

from typing import Any

from textual.screen import Screen
from textual.widgets import Footer


class KeysFooter(Footer):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._check_pending = False
        self._keys_shown: tuple[Any, ...] | None = None  # what the last compose showed

    def shown_keys(self) -> tuple[Any, ...]:
        """What ``compose`` would show: each shown binding, whether it is enabled, its tooltip."""
        palette = self.app.COMMAND_PALETTE_BINDING  # shown even when hidden from the other keys
        return tuple(
            (key, binding.action, binding.description, binding.key_display, binding.group, binding.tooltip, enabled, tooltip)
            for key, (_, binding, enabled, tooltip) in self.screen.active_bindings.items()
            if binding.show or key == palette
        )

    def bindings_changed(self, screen: Screen[Any]) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus or not self.is_attached or screen is not self.screen or self._check_pending:
            return
        self._check_pending = True
        self.call_after_refresh(self.recompose_if_changed)

    async def recompose_if_changed(self) -> None:
        self._check_pending = False
        if not self.is_attached:
            return
        keys = self.shown_keys()
        if keys != self._keys_shown:
            self._keys_shown = keys
            await self.recompose()
