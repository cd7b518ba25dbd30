"""Check a custom JSON input against a prompt's merged input schema, field by field.

The worker validates with pydantic too; this check runs first so the page can point at the exact
field (missing, unknown, wrong type) without a round trip, and so a typo never reaches user code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..inspector.features.shown.custom_input import InputError, parse_input

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}


@dataclass(frozen=True, slots=True)
class FieldError:
    """One problem with one field (``field`` is a dotted path, ``""`` for the whole input)."""

    field: str
    message: str


def parse_and_check(text: str, schema: dict[str, Any]) -> tuple[dict[str, Any] | None, list[FieldError]]:
    """Parse ``text`` as a JSON object and check it against ``schema``; returns (value, errors).

    Input that cannot be used at all (not JSON, not an object, nested too deeply, a lone surrogate)
    is one error for the whole input or the field that holds the problem."""
    try:
        value = parse_input(text)
    except InputError as exc:
        return None, [FieldError(exc.field, exc.message)]
    errors = check_object(value, schema, schema, "")
    return (value if not errors else None), errors


def check_object(value: dict[str, Any], schema: dict[str, Any], root: dict[str, Any], path: str) -> list[FieldError]:
    """Required, unknown and per-property checks of one object."""
    errors: list[FieldError] = []
    props: dict[str, Any] = schema.get("properties", {})
    for name in schema.get("required", []):
        if name not in value:
            errors.append(FieldError(_join(path, name), "required field is missing"))
    for name, item in value.items():
        where = _join(path, name)
        if name not in props:
            if schema.get("additionalProperties") is False:
                allowed = ", ".join(sorted(props)) or "none"
                errors.append(FieldError(where, f"unknown field; allowed fields: {allowed}"))
            continue
        errors.extend(check_value(item, props[name], root, where))
    return errors


def check_value(value: Any, schema: dict[str, Any], root: dict[str, Any], path: str) -> list[FieldError]:
    """Type and enum checks for one value; ``$ref`` and ``anyOf`` are followed."""
    schema = _deref(schema, root)
    if "anyOf" in schema:
        options = [_deref(s, root) for s in schema["anyOf"]]
        if any(not check_value(value, option, root, path) for option in options):
            return []
        names = sorted({str(o.get("type", o.get("title", "value"))) for o in options})
        return [FieldError(path, f"expected {' or '.join(names)}, got {_json_type(value)}")]
    if "enum" in schema and value not in schema["enum"]:
        choices = ", ".join(json.dumps(c) for c in schema["enum"])
        return [FieldError(path, f"must be one of {choices}")]
    if "const" in schema and value != schema["const"]:
        return [FieldError(path, f"must be {json.dumps(schema['const'])}")]
    expected = schema.get("type")
    if isinstance(expected, str) and expected in _JSON_TYPES:
        ok = isinstance(value, _JSON_TYPES[expected]) and not (expected in ("integer", "number") and isinstance(value, bool))
        if not ok:
            return [FieldError(path, f"expected {expected}, got {_json_type(value)}")]
        if expected == "object":
            return check_object(value, schema, root, path)
        if expected == "array" and isinstance(schema.get("items"), dict):
            return [e for i, item in enumerate(value) for e in check_value(item, schema["items"], root, f"{path}[{i}]")]
    return []


def _deref(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return root.get("$defs", {}).get(ref.removeprefix("#/$defs/"), {})
    return schema


def _json_type(value: Any) -> str:
    for name, types in _JSON_TYPES.items():
        if isinstance(value, types) and not (name in ("integer", "number") and isinstance(value, bool)):
            return name
    return type(value).__name__


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name
