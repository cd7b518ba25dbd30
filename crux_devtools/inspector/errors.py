"""``LoadError``: a fault in user code or in the worker, built in one place, with the project file and line.

Every load error of a report is made here, by one constructor per kind of fault, and reaches the
report as ``to_dict()`` (a ``report_types.LoadErrorDict``): ``LoadError.from_exception`` (an
exception raised by user code, in the worker), ``LoadError.from_import`` (a module that failed to
import), ``LoadError.plain`` (a fault without a Python exception: timeout, crash, bad config),
``LoadError.from_dict`` (one read back from the wire, after ``wire.check_load_error``).
``FailedExample`` is the ``ExampleReport`` of an example that could not be evaluated at all.

Locating runs in the worker. The line is the deepest frame of the traceback (following ``__cause__``) that is
inside the project folder, so a failing callback points at the user's code, not at the library. A
callback that returned the wrong type left no frame behind: it is located by its definition.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import sys
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_type_hints

from .report_types import ExampleReport, LoadErrorDict

MAX_TRACEBACK = 20_000

# The fields every front end places itself: where (file, line), what (type or code), the message and
# the traceback. Any other field of a load error is shown by ``further_fields``, so a field added to
# ``LoadErrorDict`` reaches the web page, the TUI and the command line without a front end knowing it.
PLACED_FIELDS = frozenset({"file", "line", "type", "code", "message", "traceback"})
FURTHER_FIELDS = tuple(name for name in get_type_hints(LoadErrorDict) if name not in PLACED_FIELDS)


def further_fields(error: object) -> list[tuple[str, str]]:
    """A load error's fields beyond the placed ones, as ``(label, text)`` in the shape's order; empty
    values are left out, and so is anything that is not a load error's mapping."""
    if not isinstance(error, Mapping):
        return []
    return [
        (name.replace("_", " "), str(error[name]))
        for name in FURTHER_FIELDS
        if error.get(name) not in (None, "", [], {})
    ]


def distinct(errors: list[LoadErrorDict]) -> list[LoadErrorDict]:
    """``errors`` with each error said once: a broken module that several modules import fails each
    of their imports with the same error at the same file and line (``shared.py:3: SyntaxError``),
    and that is one thing to fix. The one kept stands where the first came and has the shortest
    traceback (the shared module's own import when it was imported itself, not through an importer)."""
    kept: dict[tuple[object, ...], int] = {}
    out: list[LoadErrorDict] = []
    for error in errors:
        key = (error.get("file"), error.get("line"), error.get("type"), error.get("message"))
        at = kept.get(key)
        if at is None:
            kept[key] = len(out)
            out.append(error)
        elif len(error.get("traceback") or "") < len(out[at].get("traceback") or ""):
            out[at] = error
    return out


@functools.lru_cache(maxsize=4096)
def _resolved_absolute(filename: str) -> Path:
    return Path(filename).resolve()


def _resolved(filename: str) -> Path:
    """``Path(filename).resolve()``, remembered for absolute names: a load locates each context and
    callback by its code's file, the same few files again and again. (A relative name depends on the
    working folder, so it is resolved each time.)"""
    return _resolved_absolute(filename) if os.path.isabs(filename) else Path(filename).resolve()


def relative(root: Path, filename: str | None) -> str | None:
    """``filename`` relative to the project, or as given when outside it."""
    if not filename:
        return None
    try:
        path = _resolved(filename)
    except OSError:
        return filename
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def in_project(root: Path, filename: str) -> bool:
    """Whether ``filename`` (of a code object) is a project file, not a library or ``<frozen ...>``."""
    if not filename or filename.startswith("<"):
        return False
    try:
        path = _resolved(filename)
    except OSError:
        return False
    return path.is_relative_to(root) and ".venv" not in path.parts and "site-packages" not in path.parts


def _defined_at(root: Path, function: Any) -> tuple[str | None, int | None]:
    """Where a user function is defined, when that is in the project."""
    code = getattr(getattr(function, "__func__", function), "__code__", None)
    if code is None and callable(function):
        code = getattr(getattr(type(function), "__call__", None), "__code__", None)
    if code is None or not in_project(root, code.co_filename):
        return None, None
    return relative(root, code.co_filename), code.co_firstlineno


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
            if in_project(root, frame.filename):
                best = (relative(root, frame.filename), frame.lineno)
        function = getattr(current, "function", None)  # a CallbackError about the value it returned
        if best[0] is None and function is not None:
            best = _defined_at(root, function)
        current = current.__cause__ or current.__context__
    return best


def _refusal(exc: BaseException) -> BaseException | None:
    """The ``netguard.NetworkRefused`` in ``exc``'s chain of causes, if any (by name: the session's
    process never imports the worker's modules)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if type(current).__name__ == "NetworkRefused" and isinstance(current, PermissionError):
            return current
        current = current.__cause__ or current.__context__
    return None


def _is_input_error(exc: BaseException) -> bool:
    """Whether ``exc`` is the core's ``InputValidationError``. Looked up in ``sys.modules``: this module
    is also imported by the session process, which must not load pydantic and the core, and an
    exception of that type can only exist where its module was loaded."""
    validation = sys.modules.get("crux_devtools.core.compose.validation")
    return validation is not None and isinstance(exc, validation.InputValidationError)


@dataclass(frozen=True, slots=True)
class LoadError:
    """A fault in user code or in the worker; ``file`` is relative to the project (see module docstring)."""

    type: str
    message: str
    file: str | None = None
    line: int | None = None
    traceback: str = ""

    @classmethod
    def plain(cls, type: str, message: str, *, file: str | None = None, line: int | None = None, traceback: str = "") -> LoadError:
        """A fault that has no Python exception (timeout, crashed worker, bad config, malformed report)."""
        return cls(type, message, file, line, traceback)

    @classmethod
    def from_exception(cls, root: Path, exc: BaseException, *, file: str | None = None, line: int | None = None) -> LoadError:
        """The error of an exception user code raised; ``file``/``line`` are fallbacks when the traceback has none."""
        found_file, found_line = locate(root, exc)
        if found_file is None and _is_input_error(exc):
            # An example or input that does not fit the prompt's input: not a fault in code, so one
            # readable line per field and no library traceback; ``file``/``line`` name the example.
            return cls(type(exc).__name__, "\n".join(exc.problems), file, line)  # type: ignore[attr-defined]
        text = "".join(traceback.format_exception(exc))
        if len(text) > MAX_TRACEBACK:
            text = text[:MAX_TRACEBACK] + "\n… [traceback truncated]"
        message = str(exc) if not isinstance(exc, SystemExit) else f"user code called sys.exit({exc.code!r})"
        refused = _refusal(exc)
        if refused is not None and refused is not exc:  # a client library wrapped netguard's refusal: say it
            return cls(type(refused).__name__, f"{refused} (raised as {type(exc).__name__}: {' '.join(message.split())})", found_file or file,
                       found_line if found_file else line, text)
        return cls(type(exc).__name__, message, found_file or file, found_line if found_file else line, text)

    @classmethod
    def from_import(cls, root: Path, exc: BaseException, ref: Mapping[str, Any], *, file: str | None) -> LoadError:
        """A module that failed to import, saying what to do for the usual mistakes."""
        error = cls.from_exception(root, exc, file=file, line=None)
        name = ref.get("name", "")
        missing = getattr(exc, "name", None) if isinstance(exc, ModuleNotFoundError) else None
        if missing and not ref.get("path") and (name == missing or name.startswith(missing + ".")):
            # A name in [tool.crux-devtools] modules that is neither a project file nor installed.
            message = (
                f"module {name!r} listed in [tool.crux-devtools] modules was not found: no {name.replace('.', '/')}.py "
                "in the project and no installed module of that name. Fix the name in pyproject.toml "
                "(a dotted module name, or a path such as 'prompts/main.py')"
            )
            return dataclasses.replace(error, file="pyproject.toml", line=ref.get("line"), message=message)
        if isinstance(exc, ImportError) and (str(missing or "").startswith("crux_project") or "no known parent package" in str(exc)):
            folder = str(Path(file).parent) if file and str(Path(file).parent) != "." else "the project folder"
            message = (
                f"a relative import (from . import ...) in {file or 'this module'} needs a package: "
                f"add an empty __init__.py to {folder} (and to each folder above it inside the project), "
                "or use an absolute import"
            )
            return dataclasses.replace(error, message=message)
        return error

    @classmethod
    def from_dict(cls, value: LoadErrorDict) -> LoadError:
        """The error a ``LoadErrorDict`` holds (check one from a worker with ``wire.check_load_error`` first).
        Read field by field from the dataclass, so a field added to both (``to_dict`` is checked by
        mypy against the shape) travels back without a line here."""
        fields: Mapping[str, Any] = value
        return cls(**{field.name: fields[field.name] for field in dataclasses.fields(cls)})

    def located(self, file: str | None, line: int | None) -> LoadError:
        """This error at ``file:line`` when it names no file of its own."""
        return self if self.file else dataclasses.replace(self, file=file, line=line)

    def to_dict(self) -> LoadErrorDict:
        return {"file": self.file, "line": self.line, "type": self.type, "message": self.message, "traceback": self.traceback}


@dataclass(frozen=True, slots=True)
class FailedExample:
    """An example that could not be evaluated at all (the worker failed, the prompt is stale): its
    ``ExampleReport`` holds only the error."""

    name: str
    input: dict[str, Any]
    error: LoadError

    def to_dict(self) -> ExampleReport:
        return {
            "name": self.name, "input": self.input, "error": self.error.to_dict(), "inspection": None, "preview": None,
            "preview_error": None, "truncated": False, "status": "error", "summaries": [],
        }
