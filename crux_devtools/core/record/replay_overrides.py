"""What a replay of a recorded step changes (``replay.py``): standard library only, so the inspector's
web and TUI processes build and carry overrides without loading the planner.

``Overrides`` has one wire form, ``to_dict()`` / ``from_dict()``: the CLI, the web form and the TUI
build an ``Overrides``, the worker receives its ``to_dict()`` and plans with ``from_dict()`` of it, and
the replay document shows the ``to_dict()`` of the value the planner used. Both are derived from the
dataclass fields (each field's type says its JSON form), so a field added here crosses the worker
boundary with no other change; a field the planner only takes in this process (``profile``, found
again by name in the worker) is marked ``wire=False``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..plan.budget import ModelCapacityProfile


@dataclass(frozen=True, slots=True)
class Overrides:
    """What a replay changes; empty, the step is planned exactly as recorded.

    ``max``/``optimize_at``: the input budget, merged over the recorded one; ``model``: a capacity
    profile's name, with ``profile`` the profile itself; ``rungs``: ``(contributor, rung)`` pairs to
    force; ``drop``: contexts to leave out.
    """

    max: int | None = field(default=None, metadata={"min": 1, "words": "a whole number of tokens"})
    optimize_at: int | None = field(default=None, metadata={"min": 1, "words": "a whole number of tokens"})
    model: str | None = field(default=None, metadata={"words": "a capacity profile's name"})
    profile: ModelCapacityProfile | None = field(default=None, metadata={"wire": False})
    rungs: tuple[tuple[str, str], ...] = field(default=(), metadata={"words": "an object of contributor: rung"})
    drop: tuple[str, ...] = field(default=(), metadata={"words": "a list of context ids"})

    @property
    def empty(self) -> bool:
        return all(getattr(self, f.name) == f.default for f in wire_fields())

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: every wire field, in order (``rungs`` as ``{contributor: rung}``, tuples as lists)."""
        return {f.name: _KINDS[str(f.type)][0](getattr(self, f.name)) for f in wire_fields()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Overrides:
        """The ``Overrides`` of a ``to_dict()`` (a missing key keeps its default; ``profile`` is None).
        ``ValueError`` naming the override, what it must be and what it was, for a bad value or an
        unknown key."""
        if not isinstance(data, Mapping):
            raise ValueError(f"overrides must be an object of override: value, got {type(data).__name__}")
        fields = {f.name: f for f in wire_fields()}
        unknown = sorted(set(data) - set(fields))
        if unknown:
            raise ValueError(f"unknown override {unknown[0]!r}; the overrides are: {', '.join(fields)}")
        values = {}
        for name, value in data.items():
            f = fields[name]
            try:
                values[name] = _KINDS[str(f.type)][1](value, f.metadata.get("min"))
            except (TypeError, ValueError):
                raise ValueError(f"override {name!r} must be {f.metadata.get('words', str(f.type))}{_minimum(f)} or left out, got {value!r}") from None
        return cls(**values)


def wire_fields() -> tuple[dataclasses.Field[Any], ...]:
    """The fields of ``Overrides`` that cross the worker boundary (all but ``wire=False`` ones)."""
    return tuple(f for f in dataclasses.fields(Overrides) if f.metadata.get("wire", True))


def _minimum(f: dataclasses.Field[Any]) -> str:
    return f", at least {f.metadata['min']}," if "min" in f.metadata else ""


def _int(value: Any, minimum: int | None) -> int | None:
    if value is None:
        return None
    if type(value) is not int or (minimum is not None and value < minimum):
        raise ValueError(value)
    return value


def _str(value: Any, minimum: int | None) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValueError(value)
    return value


def _pairs(value: Any, minimum: int | None) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and isinstance(v, str) and k and v for k, v in value.items()):
        raise ValueError(value)
    return tuple(value.items())


def _names(value: Any, minimum: int | None) -> tuple[str, ...]:
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) and v for v in value):
        raise ValueError(value)
    return tuple(value)


# Each field type's (JSON form, check and value of the JSON form): a field of another type needs a line here.
_KINDS: dict[str, tuple[Any, Any]] = {
    "int | None": (lambda v: v, _int),
    "str | None": (lambda v: v, _str),
    "tuple[tuple[str, str], ...]": (dict, _pairs),
    "tuple[str, ...]": (list, _names),
}


__all__ = ["Overrides", "wire_fields"]
