"""Validating an input against a prompt's merged model, with one readable line per problem.

pydantic's own message repeats the model's name, the error type and a documentation link per field.
``InputValidationError`` says instead, per field, what is wrong and what is allowed::

    unknown field 'mesage' (did you mean 'message'?)
    field 'count': expected an integer, got 'abc'
    missing required field 'message'

It subclasses pydantic's ``ValidationError`` (``except ValidationError`` and ``.errors()`` keep
working) and ``CruxError``. Every input the library validates goes through ``validate_model``: the
inspector's examples and custom inputs, ``inspect --input``, ``resolve``, ``preview`` and ``generate``.
"""

from __future__ import annotations

import difflib
import reprlib
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticCustomError

from ..errors import CruxError

# What a value of each failed type should have been, for the common pydantic error types.
EXPECTED: dict[str, str] = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "decimal_type": "a number",
    "decimal_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "string_type": "a string",
    "string_unicode": "valid Unicode text (no lone surrogates)",
    "bytes_type": "bytes",
    "list_type": "a list",
    "tuple_type": "a list",
    "set_type": "a list of distinct items",
    "frozen_set_type": "a list of distinct items",
    "dict_type": "an object (a dict)",
    "model_type": "an object (a dict)",
    "model_attributes_type": "an object (a dict)",
    "none_required": "null (None)",
    "date_type": "a date (YYYY-MM-DD)",
    "date_parsing": "a date (YYYY-MM-DD)",
    "date_from_datetime_parsing": "a date (YYYY-MM-DD)",
    "datetime_type": "a date and time (ISO 8601)",
    "datetime_parsing": "a date and time (ISO 8601)",
    "datetime_from_date_parsing": "a date and time (ISO 8601)",
    "uuid_type": "a UUID",
    "uuid_parsing": "a UUID",
}
PREFIXES = ("Value error, ", "Assertion failed, ")

_short = reprlib.Repr()
_short.maxstring = 60
_short.maxother = 60
_short.maxlevel = 2
_short.maxdict = 4
_short.maxlist = 4


def _given(value: Any) -> str:
    try:
        return _short.repr(value)
    except Exception:  # noqa: BLE001 - a user object whose repr fails is still an input
        return f"a {type(value).__name__}"


def _unwrap(annotation: Any) -> tuple[Any, bool]:
    """``annotation`` without ``None`` (``X | None`` -> ``X``) and whether it is a union of several."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(members) == 1:
            return _unwrap(members[0])
        return annotation, True
    return annotation, False


def _step(annotation: Any, part: str | int) -> tuple[Any, str | None]:
    """Follow one ``loc`` element from ``annotation``: the inner annotation and the path piece to
    show (``None`` for a union member's tag, which is pydantic's bookkeeping, not the user's field)."""
    annotation, union = _unwrap(annotation)
    if union:
        return None, None if isinstance(part, str) else f"[{part}]"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel) and isinstance(part, str):
        field = annotation.model_fields.get(part)
        return (field.annotation if field is not None else None), part
    args = typing.get_args(annotation)
    origin = typing.get_origin(annotation)
    if isinstance(part, int):
        inner = args[0] if origin in (list, tuple, set, frozenset, Sequence) and args else None
        return inner, f"[{part}]"
    if origin in (dict, Mapping) and len(args) == 2:
        return args[1], f"[{part!r}]"
    return None, part


def _path(model: type[BaseModel], loc: tuple[str | int, ...]) -> tuple[str, Any]:
    """The field path a user wrote (``address.city``, ``items[0]``) and the annotation that holds
    its last element (the model whose fields an unknown name is compared with)."""
    text = ""
    annotation: Any = model
    parent: Any = model
    for part in loc:
        parent = annotation
        annotation, piece = _step(annotation, part)
        if piece is None:
            continue
        text += piece if piece.startswith("[") or not text else "." + piece
    return text, parent


def _unknown(model: type[BaseModel], loc: tuple[str | int, ...]) -> str:
    path, parent = _path(model, loc)
    parent, _ = _unwrap(parent)
    known = list(parent.model_fields) if isinstance(parent, type) and issubclass(parent, BaseModel) else []
    name = str(loc[-1]) if loc else path
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    if close:
        suggestion = path[: len(path) - len(name)] + close[0]
        return f"unknown field {path!r} (did you mean {suggestion!r}?)"
    if known:
        return f"unknown field {path!r}; known fields: {', '.join(known)}"
    return f"unknown field {path!r}"


def _expected(error: Mapping[str, Any]) -> str:
    kind = str(error.get("type", ""))
    if kind in EXPECTED:
        return f"expected {EXPECTED[kind]}"
    message = str(error.get("msg", "invalid value"))
    for prefix in PREFIXES:
        if message.startswith(prefix):
            return message[len(prefix) :]
    if message.startswith("Input should be "):
        return "expected " + message[len("Input should be ") :]
    return message[:1].lower() + message[1:]


def _merge(expected: list[str]) -> str:
    """``["expected an integer", "expected a string"]`` -> ``"expected an integer or a string"``."""
    if len(expected) > 1 and all(e.startswith("expected ") for e in expected):
        return "expected " + " or ".join(e[len("expected ") :] for e in expected)
    return "; ".join(expected)


def describe(model: type[BaseModel], errors: Sequence[Mapping[str, Any]]) -> list[str]:
    """One readable line per problem of a validation against ``model`` (pydantic's ``errors()``).

    Unknown fields come first (a misspelt name is usually the cause of a "missing" line that
    follows); problems of one field (one per member of a union) merge into one line."""
    unknown: list[str] = []
    order: list[str] = []  # "missing required field ..." lines, and paths of fields with bad values
    bad_values: dict[str, tuple[list[str], str]] = {}  # path -> (what was expected, what was given)
    for error in errors:
        loc = tuple(error.get("loc", ()))
        kind = error.get("type")
        if kind == "extra_forbidden":
            unknown.append(_unknown(model, loc))
            continue
        path, _ = _path(model, loc)
        if kind == "missing":
            order.append(f"missing required field {path!r}")
            continue
        if path not in bad_values:
            bad_values[path] = ([], _given(error.get("input")))
            order.append(path)
        expected = bad_values[path][0]
        phrase = _expected(error)
        if phrase not in expected:
            expected.append(phrase)
    out = list(unknown)
    for item in order:
        if item in bad_values:
            expected, given = bad_values.pop(item)
            out.append(f"{f'field {item!r}' if item else 'input'}: {_merge(expected)}, got {given}")
        else:
            out.append(item)
    return out


class InputValidationError(ValidationError, CruxError):
    """An input does not fit a prompt's (or memory's) input model.

    ``owner`` names what it was validated for (``"prompt 'support'"``); ``problems`` holds one
    readable line per field. ``errors()`` is pydantic's structured list, as for any ``ValidationError``.
    """

    owner: str
    problems: tuple[str, ...]

    @classmethod
    def wrap(cls, exc: ValidationError, model: type[BaseModel], owner: str) -> InputValidationError:
        """The readable form of pydantic's ``exc`` raised while validating ``model``."""
        errors = exc.errors()
        try:
            new = cls.from_exception_data(exc.title, errors)  # type: ignore[arg-type]
        except (TypeError, ValueError, KeyError):
            # A custom error type pydantic cannot rebuild by name keeps its message.
            details = [
                {"type": PydanticCustomError(str(e["type"]), str(e["msg"]).replace("{", "{{").replace("}", "}}")), "loc": e["loc"], "input": e.get("input")}
                for e in errors
            ]
            new = cls.from_exception_data(exc.title, details)  # type: ignore[arg-type]
        new.owner = owner
        new.problems = tuple(describe(model, errors)) or (str(exc),)
        return new

    def __str__(self) -> str:
        problems: tuple[str, ...] = getattr(self, "problems", ())
        head = f"{getattr(self, 'owner', 'input')}: invalid input"
        if len(problems) == 1:
            return f"{head}: {problems[0]}"
        return head + "".join(f"\n  {p}" for p in problems)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self)!r})"

    def __reduce__(self) -> Any:
        return _rebuild, (self.title, self.errors(), getattr(self, "owner", "input"), getattr(self, "problems", ()))


def _rebuild(title: str, errors: list[Any], owner: str, problems: tuple[str, ...]) -> InputValidationError:
    try:
        new = InputValidationError.from_exception_data(title, errors)
    except (TypeError, ValueError, KeyError):
        new = InputValidationError.from_exception_data(title, [])
    new.owner = owner
    new.problems = problems
    return new


def validate_model(model: type[BaseModel], data: Mapping[str, Any], owner: str) -> BaseModel:
    """``model.model_validate(dict(data))``; a failure raises ``InputValidationError``."""
    try:
        return model.model_validate(dict(data))
    except ValidationError as exc:
        raise InputValidationError.wrap(exc, model, owner) from None


__all__ = ["InputValidationError", "describe", "validate_model"]
