"""The footer: Textual's, with whole entries only, the least important dropped first when they do not
all fit, and redrawn only when what it shows changes.

Textual's ``Footer`` lays every key out in a row and cuts the row at the screen's edge: at 100
columns the last keys are missing and one is cut in half. ``KeysFooter`` works out each entry's
width (a key, or a group of keys with one label such as ``+-0 Budget``) and shows, in their usual
order, the most important entries that fit beside the command palette's entry (``^p``, where every
key is listed): that one always stays. Importance is an order of actions given by the screen;
``FOCUSED`` in it stands for the keys of the focused widget (``f`` Filter runs, ``n`` Next match);
entries it does not name come after, in their order. The widths are those of the compact footer
(``KeysFooter(compact=True)``, as every screen of the TUI has it).

Textual's ``Footer`` also composes all its keys again on every bindings update (each focus change,
each ``refresh_bindings``; several at start); most leave the keys shown as they were.
``KeysFooter`` coalesces a burst of updates (and of resizes) into one check after the next refresh
and recomposes only when what it would show differs.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import groupby
from typing import Any

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey, FooterLabel, KeyGroup

FOCUSED = "<focused>"  # in an importance order: the keys of the focused widget (not the app's)


@dataclass(frozen=True, slots=True)
class FooterEntry:
    """One entry of the footer: a key with its description, or a group of keys with one label."""

    keys: tuple[tuple[Binding, bool, str, str], ...]  # (binding, enabled, tooltip, key as displayed)
    label: str  # a group's description (a single key's is its binding's)
    focused: bool  # a key of the focused widget, not of the app

    @property
    def grouped(self) -> bool:
        return len(self.keys) > 1

    @property
    def width(self) -> int:
        """Columns taken in the compact footer, margins included (``tui/app.tcss`` sets them)."""
        if self.grouped:  # the keys side by side after one column, then the label
            return 1 + sum(cell_len(display) for *_, display in self.keys) + 1 + cell_len(self.label) + 1
        binding, *_, display = self.keys[0]
        return cell_len(display) + (1 + cell_len(binding.description) if binding.description else 0) + 1


def footer_entries(screen: Screen[Any]) -> list[FooterEntry]:
    """The entries Textual's ``Footer`` shows for ``screen``'s active bindings, in its order: one per
    action (its first key), consecutive keys of one group together."""
    app = screen.app
    by_action: dict[str, list[tuple[Binding, bool, str, bool]]] = {}
    for node, binding, enabled, tooltip in screen.active_bindings.values():
        if binding.show:
            by_action.setdefault(binding.action, []).append((binding, enabled, tooltip, node is not app))
    firsts = [keys[0] for keys in by_action.values()]
    entries: list[FooterEntry] = []
    for group, members in groupby(firsts, lambda key: key[0].group):
        items = list(members)
        if group is not None and len(items) > 1:
            keys = tuple((b, enabled, tooltip or b.description, app.get_key_display(b)) for b, enabled, tooltip, _ in items)
            entries.append(FooterEntry(keys, group.description, any(f for *_, f in items)))
        else:
            entries += [FooterEntry(((b, enabled, tooltip, app.get_key_display(b)),), b.description, f) for b, enabled, tooltip, f in items]
    return entries


def rank(entry: FooterEntry, importance: tuple[str, ...]) -> int:
    """The entry's place in ``importance`` (its most important key's); entries it does not name come last."""
    places = [importance.index(b.action) for b, *_ in entry.keys if b.action in importance]
    if entry.focused and FOCUSED in importance:
        places.append(importance.index(FOCUSED))
    return min(places, default=len(importance))


def fitting(entries: list[FooterEntry], width: int, importance: tuple[str, ...]) -> list[FooterEntry]:
    """The entries shown in ``width`` columns, in their order: the most important ones, as many as fit
    whole (an entry is never cut; none is shown while a more important one is left out)."""
    by_importance = sorted(range(len(entries)), key=lambda i: rank(entries[i], importance))  # stable: ties keep their order
    chosen: set[int] = set()
    used = 0
    for i in by_importance:
        used += entries[i].width
        if used > width:
            break
        chosen.add(i)
    return [entry for i, entry in enumerate(entries) if i in chosen]


class KeysFooter(Footer):
    """A compact footer of whole entries; ``importance`` orders the actions (see the module's docstring)."""

    def __init__(self, *, importance: tuple[str, ...] = (), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.importance = importance
        self._check_pending = False
        self._shown: tuple[Any, ...] | None = None  # what the last compose showed
        self.hidden: list[FooterEntry] = []  # the entries left out for want of room

    def palette_entry(self) -> FooterEntry | None:
        """The command palette's key, shown on the right whatever the width."""
        if not (self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE):
            return None
        active = self.screen.active_bindings.get(self.app.COMMAND_PALETTE_BINDING)
        if active is None:
            return None
        _, binding, enabled, tooltip = active
        return FooterEntry(((binding, enabled, binding.tooltip or binding.description, self.app.get_key_display(binding)),), binding.description, False)

    def plan(self) -> tuple[list[FooterEntry], list[FooterEntry], FooterEntry | None]:
        """(every entry, those shown, the palette's) at the footer's width now."""
        entries = footer_entries(self.screen)
        palette = self.palette_entry()
        room = (self.size.width or self.app.size.width) - (palette.width + 1 if palette else 0)  # + its left border
        return entries, fitting(entries, room, self.importance), palette

    def shown_keys(self) -> tuple[Any, ...]:
        """What ``compose`` would show: each shown binding, whether it is enabled, its tooltip."""
        _, shown, palette = self.plan()
        return tuple(
            (binding.key, binding.action, binding.description, display, binding.group, binding.tooltip, enabled, tooltip)
            for entry in (*shown, *([palette] if palette else []))
            for binding, enabled, tooltip, display in entry.keys
        )

    def compose(self) -> ComposeResult:
        if not self._bindings_ready:
            return
        entries, shown, palette = self.plan()
        self.hidden = [entry for entry in entries if entry not in shown]
        for entry in shown:
            if entry.grouped:
                group = entry.keys[0][0].group
                with KeyGroup(classes="-compact" if group is not None and group.compact else ""):
                    for binding, enabled, tooltip, display in entry.keys:
                        yield FooterKey(binding.key, display, "", binding.action, disabled=not enabled, tooltip=tooltip, classes="-grouped").data_bind(
                            compact=Footer.compact
                        )
                yield FooterLabel(entry.label)
            else:
                binding, enabled, tooltip, display = entry.keys[0]
                yield FooterKey(binding.key, display, binding.description, binding.action, disabled=not enabled, tooltip=tooltip).data_bind(
                    compact=Footer.compact
                )
        if palette is not None:
            binding, enabled, tooltip, display = palette.keys[0]
            if self.hidden:  # say where the keys left out are
                tooltip += "; keys not shown here: " + ", ".join("".join(d for *_, d in e.keys) + f" {e.label}" for e in self.hidden)
            yield FooterKey(binding.key, display, binding.description, binding.action, classes="-command-palette", disabled=not enabled, tooltip=tooltip)

    def bindings_changed(self, screen: Screen[Any]) -> None:
        self._bindings_ready = True
        if screen.app.app_focus and self.is_attached and screen is self.screen:
            self.check_soon()

    def on_resize(self, _event: events.Resize) -> None:
        if self._bindings_ready:
            self.check_soon()

    def check_soon(self) -> None:
        if not self._check_pending:
            self._check_pending = True
            self.call_after_refresh(self.recompose_if_changed)

    async def recompose_if_changed(self) -> None:
        self._check_pending = False
        if not self.is_attached:
            return
        keys = self.shown_keys()
        if keys != self._shown:
            self._shown = keys
            await self.recompose()
