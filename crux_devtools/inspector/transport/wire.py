"""What crosses the worker boundary, checked in the server's process before anything reads it.

The worker runs user code, and user code can replace the inspector's own functions inside the
worker (monkeypatching). So nothing a worker sends is trusted: every answer (``check_answer``, one
call where answers arrive in ``process.py`` and ``inprocess.py``) and every progress event (``parse_event``) is checked
against its type in ``crux_devtools/shapes.py``, and a malformed one becomes a load error that
names the op, the path of the field and what was expected, instead of a ``KeyError`` somewhere in
the web page, the TUI or ``check``.

The check is derived from the types, never written by hand: ``check(shape, value, where)`` walks
the ``TypedDict`` annotations (``typing.get_type_hints``; required keys must be there, ``NotRequired``
ones may be absent), ``Literal``, unions, lists and dicts. A field added to a type is checked from
then on; a producer that forgets it fails mypy (the core's ``to_dict()`` returns these types) or
this check (the worker's own dicts).

Requests are checked too, against the op's ``Request`` (``check_request``): by the sender before a
line is written (``WorkerProcess.call``), and by the worker when it arrives (``Worker.handle``). A
malformed request is a ``MalformedRequest`` naming the op and the field; nothing is sent. The types of
both come from the op table (``worker/ops/``): one module per op.

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

from ...shapes import EVENTS, Answered, LoadErrorDict, PromptReport
from ..errors import LoadError


class MalformedReport(ValueError):
    """A value sent by a worker does not have the shape the front ends read."""


class MalformedRequest(ValueError):
    """A request to the worker does not have its op's shape (or names no op of the table)."""


Checker = Callable[[Any], None]


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


class _Mismatch(Exception):
    """Raised inside a check; the path to the field is added as it propagates (so a value that
    passes builds no path strings), and the message is written once at the top (``check``)."""

    def __init__(self, problem: str, alternatives: list[_Mismatch] | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.path: list[str] = []  # innermost segment first
        self.alternatives = alternatives or []

    def text(self, where: str) -> str:
        here = where + "".join(reversed(self.path))
        if self.alternatives:
            return f"{here} {self.problem}: " + "; or ".join(a.text(here) for a in self.alternatives)
        return f"{here} {self.problem}"


@functools.cache
def checker(shape: Any) -> Checker:
    """The check of one shape, built once per type: ``check(value)`` raises ``_Mismatch``."""
    if shape is Any:
        return lambda value: None
    if _is_typeddict(shape):
        return _typeddict_checker(shape)
    origin, args = typing.get_origin(shape), typing.get_args(shape)
    if origin is Literal:
        return _literal_checker(shape, args)
    if origin in (Union, types.UnionType):
        return _union_checker(shape, args)
    if origin is list or shape is list:
        return _list_checker(checker(args[0]) if args and args[0] is not Any else None)
    if origin is dict or shape is dict:
        return _dict_checker(checker(args[1]) if args and args[1] is not Any else None)
    if shape is type(None):
        return _scalar_checker(shape, (type(None),))
    if shape is float:
        return _scalar_checker(shape, (int, float))
    if shape in (str, int, bool):
        return _scalar_checker(shape, (shape,))
    raise TypeError(f"wire.checker cannot check {shape!r}; use JSON types in shapes.py")


def _fail(shape: Any, value: Any) -> _Mismatch:
    return _Mismatch(f"is {_type_name(value)}, expected {describe(shape)}")


def _scalar_checker(shape: Any, accepted: tuple[type, ...]) -> Checker:
    def check(value: Any) -> None:
        if type(value) not in accepted:  # exact types: a bool is not an int here
            raise _fail(shape, value)

    return _scalar(check, accepted)


# The exact types a check of JSON scalars accepts (``str``, ``int | None``, ...), so the checks of
# objects and lists test them inline instead of calling one function per value.
_SCALARS: dict[Checker, tuple[type, ...]] = {}


def _scalar(check: Checker, accepted: tuple[type, ...]) -> Checker:
    _SCALARS[check] = accepted
    return check


def _literal_checker(shape: Any, allowed: tuple[Any, ...]) -> Checker:
    def check(value: Any) -> None:
        if not any(type(value) is type(a) and value == a for a in allowed):
            raise _Mismatch(f"is {str(value)[:80]!r}, expected {describe(shape)}")

    return check


def _union_checker(shape: Any, alternatives: tuple[Any, ...]) -> Checker:
    nullable = type(None) in alternatives
    others = [a for a in alternatives if a is not type(None)]
    checks = [checker(a) for a in others]

    def check(value: Any) -> None:
        if value is None and nullable:
            return
        problems = []
        for alternative_check in checks:
            try:
                alternative_check(value)
                return
            except _Mismatch as problem:
                problems.append(problem)
        if len(problems) == 1 and value is not None:
            raise problems[0]  # X | None, and the value is not null: say what is wrong inside it
        if all(_is_typeddict(a) for a in others) and isinstance(value, dict):
            raise _Mismatch(f"is none of {describe(shape)}", problems)
        raise _fail(shape, value)

    if all(c in _SCALARS for c in checks):
        return _scalar(check, tuple(t for c in checks for t in _SCALARS[c]) + ((type(None),) if nullable else ()))
    return check


def _list_checker(item: Checker | None) -> Checker:
    simple = _SCALARS.get(item) if item is not None else None

    def check(value: Any) -> None:
        if type(value) is not list:
            raise _Mismatch(f"is {_type_name(value)}, expected a list")
        if item is not None and not (simple is not None and all(type(e) in simple for e in value)):
            i = 0
            try:
                for i, element in enumerate(value):
                    item(element)
            except _Mismatch as problem:
                problem.path.append(f"[{i}]")
                raise

    return check


def _dict_checker(entry: Checker | None) -> Checker:
    def check(value: Any) -> None:
        if type(value) is not dict:
            raise _Mismatch(f"is {_type_name(value)}, expected an object")
        if entry is not None:
            key = None
            try:
                for key, element in value.items():
                    entry(element)
            except _Mismatch as problem:
                problem.path.append(f"[{key!r}]")
                raise

    return check


def _typeddict_checker(shape: Any) -> Checker:
    annotated = [_field(key, hint, shape.__total__) for key, hint in typing.get_type_hints(shape, include_extras=True).items()]
    required = [(key, hint) for key, is_required, hint in annotated if is_required]
    required_keys = frozenset(key for key, _ in required)
    # (key, its check, the exact types it accepts when it checks a scalar), built on first use:
    # shapes may refer to each other.
    fields: list[tuple[str, Checker, tuple[type, ...] | None]] = []

    def check(value: Any) -> None:
        if type(value) is not dict:
            raise _fail(shape, value)
        if not required_keys <= value.keys():
            key, hint = next((key, hint) for key, hint in required if key not in value)
            raise _Mismatch(f"has no {key!r}: expected {describe(hint)}")
        if not fields:
            fields.extend((key, c, _SCALARS.get(c)) for key, _, hint in annotated for c in [checker(hint)])
        key = ""
        try:
            for key, field_check, simple in fields:
                if key in value:
                    field = value[key]
                    if simple is None or type(field) not in simple:
                        field_check(field)
        except _Mismatch as problem:
            problem.path.append(f".{key}")
            raise

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
    """``value`` if it has ``shape`` (a type of ``shapes.py``), else ``MalformedReport`` naming the
    path from ``where`` to the field, and what was expected there."""
    try:
        checker(shape)(value)
    except _Mismatch as problem:
        raise MalformedReport(problem.text(where)) from None
    return value


def check_load_error(value: Any, where: str = "error") -> LoadErrorDict:
    """``value`` if it is a ``LoadErrorDict``, else ``MalformedReport``."""
    return check(LoadErrorDict, value, where)  # type: ignore[no-any-return]


def check_prompt(value: Any, where: str = "prompt") -> PromptReport:
    """``value`` if it is a PromptReport the front ends can read, else ``MalformedReport``."""
    return check(PromptReport, value, where)  # type: ignore[no-any-return]


def check_request(op: str, request: Any) -> Any:
    """``request`` (the fields of a request line, without ``id`` and ``op``) if it has the shape of
    ``op``'s ``Request`` in the op table, else ``MalformedRequest`` naming the op and the field."""
    from ..worker.ops import OPS

    entry = OPS.get(op)
    if entry is None:
        raise MalformedRequest(f"unknown op {op!r}; the worker answers: {', '.join(OPS)}")
    if isinstance(request, dict) and ("id" in request or "op" in request):
        raise MalformedRequest(f"a request to {op!r} carries no 'id' or 'op' field: the transport adds them")
    try:
        check(entry.request, request, "request")
    except MalformedReport as problem:
        raise MalformedRequest(f"malformed request to {op!r}: {problem}") from None
    unknown = sorted(set(request) - set(typing.get_type_hints(entry.request)))
    if unknown:
        known = ", ".join(typing.get_type_hints(entry.request)) or "none"
        raise MalformedRequest(f"malformed request to {op!r}: request.{unknown[0]} is not a field of {entry.request.__name__} (its fields: {known})")
    return request


def answer_shape(op: str) -> Any:
    """The type of the ``result`` of an answer to ``op`` (its op module's ``Answer``)."""
    from ..worker.ops import OPS

    entry = OPS.get(op)
    return entry.answer if entry is not None else Any


def check_answer(op: str, answer: dict[str, Any]) -> dict[str, Any]:
    """A worker's answer to ``op`` if it has the shape of the op's ``Answer`` (or is a failure
    carrying a ``LoadErrorDict``); else a failed answer whose error names the op, the field and what
    was expected. Called once, where answers arrive (``WorkerProcess.call``)."""
    try:
        check(Answered, answer, "answer")
        if answer["ok"]:
            check(answer_shape(op), answer["result"], "result") if "result" in answer else _no("result")
        elif "error" not in answer:
            _no("error")
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
        # The rest of the event, its prompt and error just checked (a prompt is most of a load's bytes).
        check(EVENTS[kind], {**message, "prompt": None, "error": None}, kind)
    else:
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
