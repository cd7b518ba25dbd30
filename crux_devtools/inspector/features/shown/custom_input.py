"""Parse a custom input typed by a person (the page's editor, ``inspect --input``) into a JSON object.

What comes back is safe to hand to the worker and to show: a JSON object, nested at most
``MAX_DEPTH`` levels (deeper values overflow Python's recursion in the JSON encoder, pydantic and
the templates), and holding no lone surrogate (``"\\ud800"`` is valid JSON but not text: it cannot
be encoded as UTF-8 to send, print or show). Every problem is an ``InputError`` with one sentence.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 100


class InputError(ValueError):
    """A custom input that cannot be used; ``field`` is a dotted path, ``""`` for the whole input."""

    def __init__(self, message: str, field: str = "") -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message


def parse_input(text: str) -> dict[str, Any]:
    """The JSON object in ``text``, or ``InputError`` saying what is wrong with it."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    except RecursionError:
        raise InputError(f"the input is nested too deeply (more than {MAX_DEPTH} levels of objects and arrays)") from None
    if not isinstance(value, dict):
        raise InputError(f"the input must be a JSON object, not {_json_type(value)}")
    check_value(value)
    return value


def check_value(value: Any) -> None:
    """Raise ``InputError`` for nesting deeper than ``MAX_DEPTH`` or a lone surrogate in any string.

    Walks iteratively, so a value too deep for recursion is still reported, not a crash."""
    stack: list[tuple[Any, str, int]] = [(value, "", 1)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, str):
            _check_text(item, path)
            continue
        if not isinstance(item, (dict, list)):
            continue
        if depth > MAX_DEPTH:
            raise InputError(f"nested too deeply (more than {MAX_DEPTH} levels of objects and arrays)", _shown(path))
        if isinstance(item, dict):
            for key, child in item.items():
                where = f"{path}.{key}" if path else str(key)
                _check_text(str(key), path, what="a field name")
                stack.append((child, where, depth + 1))
        else:
            stack.extend((child, f"{path}[{i}]", depth + 1) for i, child in enumerate(item))


def _check_text(text: str, path: str, what: str = "the text") -> None:
    if text.isascii():
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = text[exc.start]
        raise InputError(
            f"{what} holds a lone surrogate (\\u{ord(bad):04x} at character {exc.start + 1}), which is not valid Unicode text",
            _shown(path),
        ) from None


def _shown(path: str, limit: int = 48) -> str:
    """A path safe to print on one line: cut when long, a surrogate in a field name shown as ``?``."""
    if not path.isascii():
        path = path.encode("utf-8", "replace").decode("utf-8")
    return path if len(path) <= limit else path[:limit] + "…"


def _json_type(value: Any) -> str:
    names = {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "an array", type(None): "null"}
    return names.get(type(value), type(value).__name__)
