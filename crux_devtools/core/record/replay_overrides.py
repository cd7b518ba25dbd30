"""What a replay of a recorded step changes (``replay.py``): standard library only, so the inspector's
web and TUI processes build and carry overrides without loading the planner.

``Overrides`` has one wire form, ``to_dict()`` / ``from_dict()``: the CLI, the web form and the TUI
build an ``Overrides``, the worker receives its ``to_dict()`` and plans with ``from_dict()`` of it, and
the replay document shows the ``to_dict()`` of the value the planner used. Both are derived from the
dataclass fields (each field's type says its JSON form), so a field added here crosses the worker
boundary with no other change; a field the planner only takes in this process (``profile``, found
again by name in the worker) is marked ``wire=False``.

Everything else about a field is its metadata too, so no other module names the overrides one by
one: ``apply``, what of the recorded inputs it replaces (a key of the step's recorded frame, or
``budget.KEY`` for one key of its input budget: ``applied``, which the planner plans from); ``form``,
its name in the web form and as a CLI option (``--form``; the field's name when left out); ``label``,
how a replay's title says it (a format of each of its values, ``shown``); ``words`` and ``min``, what
it must be; ``metavar`` and ``help``, its CLI option's. Each front end offers every field by its
kind: the CLI's option (``cli/replay.override_options``, a list repeatable), the MCP replay tools'
argument (``mcp_server/server.override_arguments``), the web form (``web/views/replay.py``) and the
TUI replay screen's input (``tui/screens/overrides.py``).
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

    max: int | None = field(default=None, metadata={"min": 1, "words": "a whole number of tokens", "apply": "budget.max", "label": "max {:,}",
                                                    "metavar": "N", "help": "Plan with this max input budget (tokens)."})
    optimize_at: int | None = field(default=None, metadata={"min": 1, "words": "a whole number of tokens", "apply": "budget.optimize_at",
                                                            "label": "optimize at {:,}", "metavar": "N",
                                                            "help": "Plan with this optimize_at input budget (tokens)."})
    model: str | None = field(default=None, metadata={"words": "a capacity profile's name", "apply": "model", "label": "model {}", "metavar": "NAME",
                                                      "help": "Plan against this capacity profile of [tool.crux-devtools.models.NAME]."})
    profile: ModelCapacityProfile | None = field(default=None, metadata={"wire": False, "apply": "profile"})
    rungs: tuple[tuple[str, str], ...] = field(default=(), metadata={"words": "an object of contributor: rung", "apply": "rungs", "form": "rung",
                                                                     "label": "{} → {}", "metavar": "CONTRIBUTOR=RUNG",
                                                                     "help": "Force a ladder contributor to one rung its ladder allows (repeatable)."})
    drop: tuple[str, ...] = field(default=(), metadata={"words": "a list of context ids", "apply": "drop", "label": "without {}", "metavar": "CONTEXT",
                                                        "help": "Leave this context out, with what it owns and its tools (repeatable)."})

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

    def applied(self, recorded: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """The recorded inputs with each override that is set in place of what its ``apply`` names,
        and those replacements alone (``{apply: value}``). ``budget.KEY`` replaces one key of the
        recorded input budget (none recorded: a budget of that key alone)."""
        inputs, replaced = dict(recorded), {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value == f.default:
                continue
            target = f.metadata["apply"]
            key, dot, inner = target.partition(".")
            if key not in inputs:
                raise KeyError(f"override {f.name!r} replaces {key!r}, which is not one of the recorded inputs ({', '.join(sorted(inputs))}): "
                               "name one of them in its field's metadata 'apply'")
            inputs[key] = {**(inputs[key] or {}), inner: value} if dot else value
            replaced[target] = value
        return inputs, replaced

    def shown(self) -> list[tuple[dataclasses.Field[Any], tuple[Any, ...]]]:
        """Each value of every wire field that is set, in field order, as the arguments of its
        ``label`` (a pair of ``rungs`` is two): what a query string and a title are made of."""
        return [(f, args) for f in wire_fields() for args in _KINDS[str(f.type)][2](getattr(self, f.name))]


def form_name(f: dataclasses.Field[Any]) -> str:
    """The field's name in the web form and as a CLI option (``--`` and dashes for underscores)."""
    return str(f.metadata.get("form", f.name))


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


# Each field type's (JSON form, check and value of the JSON form, its values as ``label`` arguments):
# a field of another type needs a line here (and in the web form's ``_READERS``).
_KINDS: dict[str, tuple[Any, Any, Any]] = {
    "int | None": (lambda v: v, _int, lambda v: [] if v is None else [(v,)]),
    "str | None": (lambda v: v, _str, lambda v: [(v,)] if v else []),
    "tuple[tuple[str, str], ...]": (dict, _pairs, list),
    "tuple[str, ...]": (list, _names, lambda v: [(x,) for x in v]),
}


def _check_fields() -> None:
    """Every field says what it replaces and has a known kind; a wire field says how it is shown."""
    for f in dataclasses.fields(Overrides):
        missing = [key for key in ("apply", *(("words", "label", "metavar", "help") if f.metadata.get("wire", True) else ())) if key not in f.metadata]
        if missing or (str(f.type) not in _KINDS and f.metadata.get("wire", True)):
            raise TypeError(f"Overrides.{f.name} needs {', '.join(missing) or 'a kind in _KINDS'} in its field (see the module docstring)")


_check_fields()


__all__ = ["Overrides", "form_name", "wire_fields"]
