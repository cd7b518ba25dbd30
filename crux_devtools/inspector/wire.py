"""What crosses the worker boundary, checked in the server's process before anything reads it.

The worker runs user code, and user code can replace the inspector's own functions inside the
worker (monkeypatching). So nothing a worker sends is trusted: every answer (``check_answer``, one
call where answers arrive in ``process.py``) and every progress event (``parse_event``) is checked
against its type in ``crux_devtools/shapes.py``, and a malformed one becomes a load error that
names the op, the path of the field and what was expected, instead of a ``KeyError`` somewhere in
the web page, the TUI or ``check``.

The check is derived from the types, never written by hand: ``check(shape, value, where)`` walks
the ``TypedDict`` annotations (``typing.get_type_hints``; required keys must be there, ``NotRequired``
ones may be absent), ``Literal``, unions, lists and dicts. A field added to a type is checked from
then on; a producer that forgets it fails mypy (the core's ``to_dict()`` returns these types) or
this check (the worker's own dicts).

Progress events (worker -> session, while a ``load`` runs; each resets the step's deadline) are
``shapes.EVENTS``::

    {"event": "import", "module": name}                      about to import a module
    {"event": "imported", "module": name, "file", "error"}   done (error: a LoadError or null)
    {"event": "target", "target": id, "kind", "module", "file", "line"}  about to evaluate a prompt or agent
    {"event": "example", "target": id, "example": name}      about to evaluate one of its examples
    {"event": "report", "target": id, "prompt", "error"}     its PromptReport (or the error that stopped it)
    {"event": "exit", "code": int, "file", "line"}           user code called os._exit here
"""

from __future__ import annotations

import functools
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Union

from typing_extensions import NotRequired, Required

from ..shapes import ANSWERS, EVENTS, LoadErrorDict, PromptReport
from .errors import LoadError


class MalformedReport(ValueError):
    """A value sent by a worker does not have the shape the front ends read."""


Checker = Callable[[Any, str], None]


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def describe(shape: Any) -> str:
    """A shape in words, for an error message: ``int``, ``null``, ``a list of PartDict``, ``'a' or 'b'``,
    ``a LoadErrorDict object``."""
    if shape is Any:
        return "any value"
    if shape is type(None):
        return "null"
    if _is_typeddict(shape):
        return f"a {shape.__name__} object"
    origin, args = typing.get_origin(shape), typing.get_args(shape)
    if origin is Literal:
        return " or ".join(repr(a) for a in args)
    if origin in (Union, types.UnionType):
        return " or ".join(describe(a) for a in args)
    if origin is list:
        return f"a list of {_plural(args[0])}" if args else "a list"
    if origin is dict or shape is dict:
        return f"an object of {describe(args[1])}" if args else "an object"
    return getattr(shape, "__name__", str(shape))


def _plural(shape: Any) -> str:
    return shape.__name__ if _is_typeddict(shape) else describe(shape)


def _is_typeddict(shape: Any) -> bool:
    return isinstance(shape, type) and issubclass(shape, dict) and hasattr(shape, "__required_keys__")


@functools.cache
def checker(shape: Any) -> Checker:
    """The check of one shape, built once per type: ``check(value, where)`` raises ``MalformedReport``."""
    if shape is Any:
        return lambda value, where: None
    if _is_typeddict(shape):
        return _typeddict_checker(shape)
    origin, args = typing.get_origin(shape), typing.get_args(shape)
    if origin is Literal:
        return _literal_checker(shape, args)
    if origin in (Union, types.UnionType):
        return _union_checker(shape, args)
    if origin is list or shape is list:
        return _list_checker(checker(args[0]) if args else None)
    if origin is dict or shape is dict:
        return _dict_checker(checker(args[1]) if args and args[1] is not Any else None)
    if shape is type(None):
        return _scalar_checker(shape, lambda value: value is None)
    if shape is float:
        return _scalar_checker(shape, lambda value: type(value) in (int, float))
    if shape in (str, int, bool):
        return _scalar_checker(shape, lambda value: type(value) is shape)
    raise TypeError(f"wire.checker cannot check {shape!r}; use JSON types in shapes.py")


def _fail(shape: Any, value: Any, where: str) -> MalformedReport:
    return MalformedReport(f"{where} is {_type_name(value)}, expected {describe(shape)}")


def _scalar_checker(shape: Any, accepts: Callable[[Any], bool]) -> Checker:
    def check(value: Any, where: str) -> None:
        if not accepts(value):
            raise _fail(shape, value, where)

    return check


def _literal_checker(shape: Any, allowed: tuple[Any, ...]) -> Checker:
    def check(value: Any, where: str) -> None:
        if not any(type(value) is type(a) and value == a for a in allowed):
            raise MalformedReport(f"{where} is {str(value)[:80]!r}, expected {describe(shape)}")

    return check


def _union_checker(shape: Any, alternatives: tuple[Any, ...]) -> Checker:
    nullable = type(None) in alternatives
    others = [a for a in alternatives if a is not type(None)]
    checks = [checker(a) for a in others]

    def check(value: Any, where: str) -> None:
        if value is None and nullable:
            return
        problems = []
        for alternative_check in checks:
            try:
                alternative_check(value, where)
                return
            except MalformedReport as problem:
                problems.append(str(problem))
        if len(problems) == 1 and value is not None:
            raise MalformedReport(problems[0])  # X | None, and the value is not null: say what is wrong inside it
        if all(_is_typeddict(a) for a in others) and isinstance(value, dict):
            raise MalformedReport(f"{where} is none of {describe(shape)}: " + "; or ".join(problems))
        raise _fail(shape, value, where)

    return check


def _list_checker(item: Checker | None) -> Checker:
    def check(value: Any, where: str) -> None:
        if not isinstance(value, list):
            raise MalformedReport(f"{where} is {_type_name(value)}, expected a list")
        if item is not None:
            for i, element in enumerate(value):
                item(element, f"{where}[{i}]")

    return check


def _dict_checker(entry: Checker | None) -> Checker:
    def check(value: Any, where: str) -> None:
        if not isinstance(value, dict):
            raise MalformedReport(f"{where} is {_type_name(value)}, expected an object")
        if entry is not None:
            for key, element in value.items():
                entry(element, f"{where}[{key!r}]")

    return check


def _typeddict_checker(shape: Any) -> Checker:
    fields = [_field(key, hint, shape.__total__) for key, hint in typing.get_type_hints(shape, include_extras=True).items()]
    built: dict[str, Checker] = {}

    def check(value: Any, where: str) -> None:
        if not isinstance(value, dict):
            raise MalformedReport(f"{where} is {_type_name(value)}, expected {describe(shape)}")
        for key, is_required, hint in fields:
            if key not in value:
                if is_required:
                    raise MalformedReport(f"{where} has no {key!r}: expected {describe(hint)}")
                continue
            field_check = built.get(key)
            if field_check is None:  # built on first use: shapes may refer to each other
                field_check = built[key] = checker(hint)
            field_check(value[key], f"{where}.{key}")

    return check


def _field(key: str, hint: Any, total: bool) -> tuple[str, bool, Any]:
    """``(key, required, type)`` of one annotation. Read from the annotation itself, not from
    ``__required_keys__``: that one misses ``NotRequired`` written under postponed annotations."""
    origin = typing.get_origin(hint)
    if origin is NotRequired:
        return key, False, typing.get_args(hint)[0]
    if origin is Required:
        return key, True, typing.get_args(hint)[0]
    return key, total, hint


def check(shape: Any, value: Any, where: str) -> Any:
    """``value`` if it has ``shape`` (a type of ``shapes.py``), else ``MalformedReport`` naming the path."""
    checker(shape)(value, where)
    return value


def check_load_error(value: Any, where: str = "error") -> LoadErrorDict:
    """``value`` if it is a ``LoadErrorDict``, else ``MalformedReport``."""
    return check(LoadErrorDict, value, where)  # type: ignore[no-any-return]


def check_prompt(value: Any, where: str = "prompt") -> PromptReport:
    """``value`` if it is a PromptReport the front ends can read, else ``MalformedReport``."""
    return check(PromptReport, value, where)  # type: ignore[no-any-return]


def check_answer(op: str, answer: dict[str, Any]) -> dict[str, Any]:
    """A worker's answer to ``op`` if it has the shape of ``shapes.ANSWERS[op]`` (or is a failure
    carrying a ``LoadErrorDict``); else a failed answer whose error names the op, the field and what
    was expected. Called once, where answers arrive (``WorkerProcess.request``)."""
    try:
        if answer.get("ok") is True:
            if op in ANSWERS:
                check(ANSWERS[op], answer.get("result"), "result") if "result" in answer else _no("result")
        elif answer.get("ok") is False:
            check_load_error(answer.get("error"), "error") if "error" in answer else _no("error")
        else:
            raise MalformedReport(f"ok is {_type_name(answer.get('ok'))}, expected bool")
    except MalformedReport as problem:
        error = malformed_error(problem, what=f"answer to {op!r}")
        return {"id": answer.get("id"), "ok": False, "error": error, "duration_ms": answer.get("duration_ms")}
    return answer


def _no(key: str) -> None:
    raise MalformedReport(f"the answer has no {key!r}")


# -- progress events -------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ImportStarted:
    module: str


@dataclass(frozen=True, slots=True)
class Imported:
    module: str
    file: str | None
    error: LoadErrorDict | None


@dataclass(frozen=True, slots=True)
class TargetStarted:
    target: str
    kind: str
    module: str
    file: str | None
    line: int | None


@dataclass(frozen=True, slots=True)
class ExampleStarted:
    target: str
    example: str


@dataclass(frozen=True, slots=True)
class TargetReported:
    """A target's report, or the error that stopped it (already checked)."""

    target: str
    prompt: PromptReport | None
    error: LoadErrorDict | None


@dataclass(frozen=True, slots=True)
class ExitCalled:
    """User code called ``os._exit(code)`` at ``file:line`` (the worker says so just before)."""

    code: int
    file: str | None
    line: int | None


Event = ImportStarted | Imported | TargetStarted | ExampleStarted | TargetReported | ExitCalled


def parse_event(message: dict[str, Any]) -> Event:
    """The typed event of a worker's progress line; ``MalformedReport`` if it is not one."""
    kind = message.get("event")
    if not isinstance(kind, str) or kind not in EVENTS:
        raise MalformedReport(f"unknown progress event {str(kind)[:80]!r}")
    if kind == "report":  # its prompt is named after the target, so a fault in it says whose it is
        target = check(str, message.get("target"), "report.target")
        check(LoadErrorDict | None, message.get("error"), "report.error")
        prompt = message.get("prompt")
        if prompt is not None:
            check_prompt(prompt, f"the report of {target!r}")
        elif message.get("error") is None:
            raise MalformedReport("it holds neither a report nor an error")
    check(EVENTS[kind], message, kind)
    m: Any = message
    if kind == "import":
        return ImportStarted(m["module"])
    if kind == "imported":
        return Imported(m["module"], m["file"], m["error"])
    if kind == "target":
        return TargetStarted(m["target"], m["kind"], m["module"], m["file"], m["line"])
    if kind == "example":
        return ExampleStarted(m["target"], m["example"])
    if kind == "report":
        return TargetReported(m["target"], m["prompt"], m["error"])
    return ExitCalled(m["code"], m["file"], m["line"])


def malformed_error(problem: MalformedReport, *, what: str, file: str | None = None, line: int | None = None) -> LoadErrorDict:
    """The load error shown for a malformed value from a worker."""
    message = (
        f"the worker sent a malformed {what} ({problem}); crux-devtools cannot show it. "
        "Does user code replace crux_devtools functions (monkeypatching)? Remove that to see this report"
    )
    return LoadError.plain("MalformedReport", message, file=file, line=line).to_dict()
