"""Representation ladders: the only model-facing forms the planner may choose for one source.

Rungs, highest fidelity first: ``full`` -> ``authored`` -> ``summary`` -> ``offload`` -> ``omitted``
(the names and their order are defined once, in ``rungs.py``).
The only legal nesting is ``droppable(offloadable(summarizable(prefer(src, alt...))))`` with any layer
left out; each constructor accepts only what may stand directly inside it, so any other nesting
raises ``RequestCompositionError(INVALID_COMPOSITION)`` at construction, and the typed signatures
make mypy reject the same ladders (see ``tests/functional/typing/``).

Decisions:

- A *source* is a context or a list of contexts (one atomic unit; their tools must not collide).
  Lists are accepted wherever a source is, except as ``prefer``'s primary or alternatives.
- A ``prefer`` alternative may leave out ``input`` and ``tools`` (it inherits the primary's); if it
  declares either, they must equal the primary's (same fields, same tools), else INVALID_COMPOSITION.
- ``offloadable(above_tokens=N)`` with no source is a tool *output policy*; in ``use`` it raises.
- A ladder nested inside another ladder's source is planned as part of the outer ladder.
- A list source's priority (for planning) is the highest of its members'.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, overload

from ..compose.contexts import Context, descendants
from ..compose.entries import Ladder
from ..errors import invalid_composition
from ..contract import is_model
from .summaries import ExtractiveStrategy, HierarchicalStrategy, SummaryStrategy, summarize
from ..tools import Tool

OnMiss = Literal["prepare", "skip", "fail"]
ON_MISS: tuple[str, ...] = ("prepare", "skip", "fail")


def _describe(value: Any) -> str:
    if isinstance(value, Ladder):
        return f"{type(value).__name__.lower()}(...)"
    if isinstance(value, Context):
        return f"context {value.id!r}"
    return type(value).__name__


def _source(where: str, value: Any) -> tuple[Context, ...]:
    """A context or a non-empty list of contexts, else INVALID_COMPOSITION naming what was given."""
    if isinstance(value, Context):
        _check_no_inner_ladder(where, (value,))
        return (value,)
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, Context) for v in value):
        members = tuple(value)
        _check_no_tool_collision(where, members)
        _check_no_inner_ladder(where, members)
        return members
    if isinstance(value, (list, tuple)):
        bad = next((v for v in value if not isinstance(v, Context)), None)
        what = "an empty list" if not value else f"a list holding {_describe(bad)}"
        raise invalid_composition(f"{where}: a list source must hold contexts only, got {what}")
    raise invalid_composition(
        f"{where} cannot wrap {_describe(value)}; the only legal order is "
        "droppable(offloadable(summarizable(prefer(source, alternative...)))) with any layer left out"
    )


def _check_no_tool_collision(where: str, members: tuple[Context, ...]) -> None:
    seen: dict[str, Tool] = {}
    for member in members:
        for t in tools_owned(member):
            if t.name in seen and seen[t.name] is not t:
                raise invalid_composition(f"{where}: two members declare different tools named {t.name!r}; rename one", contributor=member.id)
            seen[t.name] = t


def _check_no_inner_ladder(where: str, members: Sequence[Context]) -> None:
    """A ladder's source is planned as one block: a ladder inside it could never pick its own rung."""
    for member in members:
        inner = next((entry for entry in descendants(member.use) if isinstance(entry, Ladder)), None)
        if inner is not None:
            around = ", ".join(repr(c.id) for c in inner.canonical_sources() if isinstance(c, Context)) or "its source"
            raise invalid_composition(
                f"{where}: context {member.id!r} has {_describe(inner)} (around {around}) inside its use; a ladder's "
                f"source is planned as one block, so the inner ladder could never choose its own rung. Put the inner "
                f"ladder beside {member.id!r} in the prompt's use instead",
                contributor=member.id,
            )


def _walk_contexts(entries: Sequence[Any]) -> Iterator[Context]:
    return (entry for entry in descendants(entries) if isinstance(entry, Context))


def tools_owned(ctx: Context) -> list[Tool]:
    """Every tool declared by ``ctx`` and the contexts nested under it."""
    return [t for c in _walk_contexts([ctx]) for t in c.tools]


def _fields(model: Any) -> dict[str, Any]:
    return {name: info.annotation for name, info in model.model_fields.items()}


def _check_alternative(primary: Context, alt: Context) -> None:
    if alt.input is not None and alt.input is not primary.input:
        if primary.input is None or _fields(alt.input) != _fields(primary.input):
            raise invalid_composition(
                f"prefer({primary.id!r}, ...): alternative {alt.id!r} declares a different input model than the primary; "
                "alternatives must share the primary's input schema (leave input out to inherit it)",
                contributor=alt.id,
            )
    alt_tools = {t.name: t for t in tools_owned(alt)}
    if alt_tools:
        primary_tools = {t.name: t for t in tools_owned(primary)}
        if alt_tools.keys() != primary_tools.keys() or any(alt_tools[n] is not primary_tools[n] for n in alt_tools):
            raise invalid_composition(
                f"prefer({primary.id!r}, ...): alternative {alt.id!r} declares tools {sorted(alt_tools)} but the primary has "
                f"{sorted(primary_tools)}; an alternative keeps the primary's capabilities (leave tools out to inherit them)",
                contributor=alt.id,
            )


@dataclass(frozen=True, slots=True, eq=False)
class Prefer(Ladder):
    """``prefer(primary, *alternatives)``: authored representations of one primary context."""

    primary: Context
    alternatives: tuple[Context, ...]

    def canonical_sources(self) -> tuple[Any, ...]:
        return (self.primary,)


@dataclass(frozen=True, slots=True, eq=False)
class Summarizable(Ladder):
    """``summarizable(source)``: adds a generated-summary rung."""

    source: Prefer | tuple[Context, ...]
    model: Any
    strategy: SummaryStrategy
    on_miss: OnMiss

    def canonical_sources(self) -> tuple[Any, ...]:
        return self.source.canonical_sources() if isinstance(self.source, Prefer) else self.source


@dataclass(frozen=True, slots=True, eq=False)
class Offloadable(Ladder):
    """``offloadable(source)``: adds an exact-reference rung (preview + handle + ``read_offload``)."""

    source: Summarizable | Prefer | tuple[Context, ...]
    above_tokens: int | None

    def canonical_sources(self) -> tuple[Any, ...]:
        return self.source if isinstance(self.source, tuple) else self.source.canonical_sources()


@dataclass(frozen=True, slots=True, eq=False)
class Droppable(Ladder):
    """``droppable(source)``: adds terminal omission (content and owned tools removed)."""

    source: Offloadable | Summarizable | Prefer | tuple[Context, ...]

    def canonical_sources(self) -> tuple[Any, ...]:
        return self.source if isinstance(self.source, tuple) else self.source.canonical_sources()


@dataclass(frozen=True, slots=True, eq=False)
class OutputPolicy(Ladder):
    """``offloadable(above_tokens=N)`` with no source: offload large tool results. Not a ``use`` entry."""

    above_tokens: int | None
    is_output_policy = True

    def canonical_sources(self) -> tuple[Any, ...]:
        return ()

    def check_usable(self, owner: str) -> None:
        raise invalid_composition(
            f"{owner!r}: offloadable(above_tokens=...) without a source is a tool output policy; "
            "pass it as tool(..., output=offloadable(above_tokens=N)), not in use"
        )


@dataclass(frozen=True, slots=True)
class Offloaded:
    """``offload(value)``: a tool result that must reach the model as an exact reference."""

    value: Any


def prefer(primary: Context, *alternatives: Context) -> Prefer:
    """Authored alternatives for ``primary``, most faithful first. Needs at least one alternative."""
    if not alternatives:
        raise TypeError("prefer() needs a primary context and at least one alternative: prefer(full, compact)")
    if not isinstance(primary, Context):
        raise invalid_composition(f"prefer() primary must be a context, got {_describe(primary)}; prefer() cannot be nested or wrap a ladder")
    _check_no_inner_ladder(f"prefer({primary.id!r}, ...)", (primary,))
    for alt in alternatives:
        if not isinstance(alt, Context):
            raise invalid_composition(f"prefer({primary.id!r}, ...): alternatives must be exact contexts, got {_describe(alt)}")
        if alt is primary:
            raise invalid_composition(f"prefer({primary.id!r}, ...): an alternative cannot be the primary itself")
        if alt.use:
            raise invalid_composition(
                f"prefer({primary.id!r}, ...): alternative {alt.id!r} has its own use=[...]; an alternative is one authored "
                f"text that stands for the primary and everything it uses, so nested entries would be lost. Write what "
                f"it needs into its system text",
                contributor=alt.id,
            )
        _check_alternative(primary, alt)
    return Prefer(primary=primary, alternatives=tuple(alternatives))


def summarizable(
    source: Context | Prefer | Sequence[Context],
    *,
    model: Any = None,
    strategy: SummaryStrategy | None = None,
    on_miss: OnMiss = "prepare",
) -> Summarizable:
    """Add a summary rung. ``strategy=None``: extractive without a model, hierarchical with one."""
    inner: Prefer | tuple[Context, ...] = source if isinstance(source, Prefer) else _source("summarizable()", source)
    if on_miss not in ON_MISS:
        raise ValueError(f"summarizable(on_miss=...) must be one of {', '.join(ON_MISS)}, got {on_miss!r}")
    if strategy is None:
        strategy = summarize.hierarchical() if model is not None else summarize.extractive()
    if not isinstance(strategy, (ExtractiveStrategy, HierarchicalStrategy)):
        raise TypeError(f"summarizable(strategy=...) must be summarize.extractive() or summarize.hierarchical(), got {strategy!r}")
    if strategy.needs_model and model is None:
        raise invalid_composition("summarizable(strategy=summarize.hierarchical()) needs model=<a model adapter>")
    if model is not None and not is_model(model):
        raise TypeError(f"summarizable(model=...) must be a model adapter (with complete() or acomplete()), got {type(model).__name__}")
    return Summarizable(source=inner, model=model, strategy=strategy, on_miss=on_miss)


def _check_above(value: Any) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value <= 0):
        raise TypeError(f"offloadable(above_tokens=...) must be a positive int or None, got {value!r}")
    return value


@overload
def offloadable(source: None = None, *, above_tokens: int | None = None) -> OutputPolicy: ...
@overload
def offloadable(source: Context | Prefer | Summarizable | Sequence[Context], *, above_tokens: int | None = None) -> Offloadable: ...
def offloadable(source: Any = None, *, above_tokens: int | None = None) -> Offloadable | OutputPolicy:
    """Add an exact-reference rung; with no source, a tool output policy for large results."""
    above = _check_above(above_tokens)
    if source is None:
        return OutputPolicy(above_tokens=above)
    if isinstance(source, (Summarizable, Prefer)):
        return Offloadable(source=source, above_tokens=above)
    return Offloadable(source=_source("offloadable()", source), above_tokens=above)


def droppable(source: Context | Prefer | Summarizable | Offloadable | Sequence[Context]) -> Droppable:
    """Authorise omission: the last rung, which also removes the source's tools."""
    if isinstance(source, (Offloadable, Summarizable, Prefer)):
        return Droppable(source=source)
    return Droppable(source=_source("droppable()", source))


def offload(value: Any) -> Offloaded:
    """Force this tool result to reach the model as a preview plus an exact reference."""
    if isinstance(value, Offloaded):
        return value
    return Offloaded(value=value)


@dataclass(frozen=True, slots=True)
class Shape:
    """A ladder taken apart: which rungs it authorises and over which contexts."""

    ladder: Ladder
    sources: tuple[Context, ...]
    prefer: Prefer | None
    summary: Summarizable | None
    offload: Offloadable | None
    droppable: bool

    @property
    def id(self) -> str:
        return self.sources[0].id if len(self.sources) == 1 else "+".join(c.id for c in self.sources)

    @property
    def priority(self) -> int:
        return max(c.priority for c in self.sources)


def shape(ladder: Ladder) -> Shape:
    """Take a ladder apart into its layers (constructors guarantee the order)."""
    layer: Any = ladder
    drop = off = summ = pref = None
    if isinstance(layer, Droppable):
        drop, layer = layer, layer.source
    if isinstance(layer, Offloadable):
        off, layer = layer, layer.source
    if isinstance(layer, Summarizable):
        summ, layer = layer, layer.source
    if isinstance(layer, Prefer):
        pref = layer
    sources = tuple(ladder.canonical_sources())
    return Shape(ladder=ladder, sources=sources, prefer=pref, summary=summ, offload=off, droppable=drop is not None)
