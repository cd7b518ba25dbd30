"""Turning exceptions raised by user code into ``LoadError`` dicts with the project file and line.

Runs in the worker. The line is the deepest frame of the traceback (following ``__cause__``) that is
inside the project folder, so a failing callback points at the user's code, not at the library.
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path
from typing import Any

MAX_TRACEBACK = 20_000


def relative(root: Path, filename: str | None) -> str | None:
    """``filename`` relative to the project, or as given when outside it."""
    if not filename:
        return None
    try:
        path = Path(filename).resolve()
    except OSError:
        return filename
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def _in_project(root: Path, filename: str) -> bool:
    try:
        path = Path(filename).resolve()
    except OSError:
        return False
    return path.is_relative_to(root) and ".venv" not in path.parts and "site-packages" not in path.parts


def locate(root: Path, exc: BaseException) -> tuple[str | None, int | None]:
    """The project file and line an exception comes from, if any."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return relative(root, exc.filename), exc.lineno
    seen: set[int] = set()
    current: BaseException | None = exc
    best: tuple[str | None, int | None] = (None, None)
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        for frame in traceback.extract_tb(current.__traceback__):
            if _in_project(root, frame.filename):
                best = (relative(root, frame.filename), frame.lineno)
        current = current.__cause__ or current.__context__
    if best[0] is None:
        # No frame of the project ran (a callback returned a wrong value): where it is defined.
        defined = _callback_location(exc)
        if defined is not None and _in_project(root, defined[0]):
            best = (relative(root, defined[0]), defined[1])
    return best


def _callback_location(exc: BaseException) -> tuple[str, int] | None:
    """``CallbackError.location`` of the first core ``CallbackError`` in ``exc``'s chain (looked up
    in ``sys.modules`` for the reason ``_is_input_error`` gives)."""
    errors = sys.modules.get("crux_devtools.core.errors")
    if errors is None:
        return None
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, errors.CallbackError) and current.location is not None:
            return current.location
        current = current.__cause__ or current.__context__
    return None


def _is_input_error(exc: BaseException) -> bool:
    """Whether ``exc`` is the core's ``InputValidationError``. Looked up in ``sys.modules``: this module
    is also imported by the session process, which must not load pydantic and the core, and an
    exception of that type can only exist where its module was loaded."""
    validation = sys.modules.get("crux_devtools.core.validation")
    return validation is not None and isinstance(exc, validation.InputValidationError)


def load_error(root: Path, exc: BaseException, *, file: str | None = None, line: int | None = None) -> dict[str, Any]:
    """A ``LoadError`` dict for an exception; ``file``/``line`` are fallbacks when the traceback has none."""
    found_file, found_line = locate(root, exc)
    if found_file is None and _is_input_error(exc):
        # An example or input that does not fit the prompt's input: not a fault in code, so one
        # readable line per field and no library traceback; ``file``/``line`` name the example.
        return {"file": file, "line": line, "type": type(exc).__name__, "message": "\n".join(exc.problems), "traceback": ""}  # type: ignore[attr-defined]
    text = "".join(traceback.format_exception(exc))
    if len(text) > MAX_TRACEBACK:
        text = text[:MAX_TRACEBACK] + "\n… [traceback truncated]"
    message = str(exc) if not isinstance(exc, SystemExit) else f"user code called sys.exit({exc.code!r})"
    return {
        "file": found_file or file,
        "line": found_line if found_file else line,
        "type": type(exc).__name__,
        "message": message,
        "traceback": text,
    }


def plain_error(kind: str, message: str, *, file: str | None = None, line: int | None = None, tb: str = "") -> dict[str, Any]:
    """A ``LoadError`` dict for a fault that has no Python exception (timeout, crashed worker)."""
    return {"file": file, "line": line, "type": kind, "message": message, "traceback": tb}
