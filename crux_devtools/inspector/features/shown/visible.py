"""Recorded text made safe to print on a terminal: control characters are shown, never obeyed.

A run's target, model, error message or answer comes from the application, its tools and the HTTP
responses it got; an escape sequence in it (``ESC ] 0 ; title BEL`` sets the window title,
``ESC [ 2 J`` clears the screen) must not reach the terminal. Every C0 control, DEL and every C1
control is replaced by its Python escape (``\\x1b``), as are lone surrogates (which no terminal
encoding can print). Newline and tab are kept where a text is shown on several lines.
"""

from __future__ import annotations

import re
from typing import Any

_CONTROLS = [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)]
_NAMED = {0x0A: "\\n", 0x09: "\\t", 0x0D: "\\r"}


def _table(keep: str) -> dict[int, str]:
    table = {code: _NAMED.get(code, f"\\x{code:02x}") for code in _CONTROLS if chr(code) not in keep}
    table.update({code: f"\\u{code:04x}" for code in range(0xD800, 0xE000)})
    return table


LINES = _table("\n\t")  # a text shown on several lines
CSV_CELL = _table("\n")  # a CSV cell: quoted, so it may hold newlines; a tab would be taken for a separator
ONE_LINE = _table("")  # a table cell or a one-line summary
_ANY = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
_ANY_BUT_LINES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def visible(text: str, *, lines: bool = False) -> str:
    """``text`` with every control character (but newline and tab when ``lines``) made visible."""
    if (_ANY_BUT_LINES if lines else _ANY).search(text) is None:
        return text  # the usual case, found at regex speed
    return text.translate(LINES if lines else ONE_LINE)


def visible_csv(text: str) -> str:
    """``text`` as a CSV cell shows it: every control character but the newline made visible."""
    return text.translate(CSV_CELL)


def visible_tree(value: Any, *, lines: bool = True) -> Any:
    """A copy of a JSON-like value (a run, a step) with every string, keys included, made visible."""
    if isinstance(value, str):
        return visible(value, lines=lines)
    if isinstance(value, dict):
        return {visible_tree(k, lines=lines): visible_tree(v, lines=lines) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [visible_tree(v, lines=lines) for v in value]
    return value
