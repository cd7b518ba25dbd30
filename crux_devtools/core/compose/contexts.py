"""Contexts and conditional entries: the building blocks a prompt composes through ``use``.

The use tree: a prompt's ``use`` holds contexts, ``when(...)``, ``match(...)`` and ladders
(``entries.Ladder``), and each of them holds more entries. ``children(entry)`` is the one place that
knows where each kind keeps them; every walk over the tree (``prompts.reachable``, the ladder checks,
the resolver's two walks) goes through it. Only the resolver's ``match(...)`` step reads the cases by
key, since it must know which case its key selected.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Union

from pydantic import BaseModel

from .entries import Ladder
from ..tools import Tool, normalize_tools
from .sites import definition_site

TextSource = str | Callable[[Any], Any] | None


def check_id(kind: str, id: Any) -> str:
    if not isinstance(id, str) or not id.strip():
        raise ValueError(f"{kind} id must be a non-empty string, got {id!r}")
    return id


def check_priority(id: str, priority: Any) -> int:
    if isinstance(priority, bool) or not isinstance(priority, int) or not 0 <= priority <= 100:
        raise ValueError(f"context {id!r}: priority must be an int from 0 to 100 (higher is dropped later), got {priority!r}")
    return priority


def check_input_model(owner: str, model: Any) -> type[BaseModel] | None:
    if model is None:
        return None
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise TypeError(f"{owner!r}: input must be a pydantic BaseModel subclass, got {model!r}")
    return model


def check_text_source(owner: str, name: str, value: Any) -> TextSource:
    if value is None or isinstance(value, str) or callable(value):
        return value
    raise TypeError(f"{owner!r}: {name} must be a string or a callback returning one, got {type(value).__name__}")


@dataclass(frozen=True, slots=True, eq=False)
class Context:
    """A reusable fragment of system text, with its input fields, tools and nested entries.

    Compared by identity: the same object reached twice in one prompt contributes once.
    """

    kind: ClassVar[str] = "context"

    id: str
    system: TextSource = None
    input: type[BaseModel] | None = None
    when: Callable[[Any], Any] | None = None
    priority: int = 50
    tools: tuple[Tool, ...] = ()
    use: tuple[Any, ...] = ()
    defined_at: tuple[str, int] | None = field(default=None, repr=False, compare=False)  # the user's file and line of ``context(...)``

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.id!r}>"

    def render_detail(self) -> str | None:
        """A sentence on what the last ``system`` render in this thread or task read, or ``None``.

        The resolver puts it on the context's ``Part.detail``. Plain contexts say nothing; a memory
        says what it found and what its budget left out.
        """
        return None


def context(
    id: str,
    *,
    system: TextSource = None,
    input: type[BaseModel] | None = None,
    when: Callable[[Any], Any] | None = None,
    priority: int = 50,
    tools: Iterable[Tool] | Mapping[str, Tool] = (),
    use: Sequence[UseEntry] = (),
) -> Context:
    """Define a context. ``system`` and ``when`` may be callbacks taking the merged input."""
    check_id("context", id)
    check_priority(id, priority)
    if when is not None and not callable(when):
        raise TypeError(f"context {id!r}: when must be a callback taking the input, got {type(when).__name__}")
    return Context(
        id=id,
        system=check_text_source(id, "system", system),
        input=check_input_model(id, input),
        when=when,
        priority=priority,
        tools=normalize_tools(id, tools),
        use=normalize_use(id, use),
        defined_at=definition_site(),
    )


@dataclass(frozen=True, slots=True, eq=False)
class Conditional:
    """``when(predicate, entry)``: the entries are active only when the predicate is true."""

    predicate: Callable[[Any], Any]
    entries: tuple[Any, ...]


@dataclass(frozen=True, slots=True, eq=False)
class Match:
    """``match(on, cases)``: exactly the case selected by ``on(input)`` is active."""

    on: Callable[[Any], Any]
    cases: Mapping[Any, tuple[Any, ...]] = field(default_factory=dict)


def _as_entries(owner: str, entry: Any) -> tuple[Any, ...]:
    entries = list(entry) if isinstance(entry, (list, tuple)) else [entry]
    return normalize_use(owner, entries)


def when(predicate: Callable[[Any], Any], entry: UseEntry | Sequence[UseEntry]) -> Conditional:
    """Include ``entry`` (a context, ladder or list of them) only when ``predicate(input)`` is true."""
    if not callable(predicate):
        raise TypeError(f"when(): the predicate must be a callback taking the input, got {type(predicate).__name__}")
    return Conditional(predicate=predicate, entries=_as_entries("when()", entry))


def match(on: Callable[[Any], Any], cases: Mapping[Any, UseEntry | Sequence[UseEntry]]) -> Match:
    """Switch between branches: ``on(input)`` returns the key of the one case that is active."""
    if not callable(on):
        raise TypeError(f"match(): on must be a callback returning a case key, got {type(on).__name__}")
    if not isinstance(cases, Mapping) or not cases:
        raise TypeError("match(): cases must be a non-empty mapping {key: context or list of contexts}")
    return Match(on=on, cases={key: _as_entries(f"match() case {key!r}", value) for key, value in cases.items()})


def normalize_use(owner: str, use: Sequence[Any] | None) -> tuple[Any, ...]:
    """Drop falsy entries (static flags) and reject anything that cannot appear in ``use``."""
    if use is None:
        return ()
    if isinstance(use, (str, bytes)) or not isinstance(use, Iterable):
        raise TypeError(f"{owner!r}: use must be a list of entries, got {type(use).__name__}")
    out = []
    for entry in use:
        if entry is None or entry is False:
            continue
        if not is_use_entry(entry):
            raise TypeError(
                f"{owner!r}: use entries must be contexts, when(...), match(...), ladders, memory or skills; "
                f"got {type(entry).__name__} {entry!r:.60}"
            )
        check_use_entry(owner, entry)
        out.append(entry)
    return tuple(out)


def is_use_entry(entry: Any) -> bool:
    return isinstance(entry, (Context, Conditional, Match, Ladder))


def check_use_entry(owner: str, entry: Any) -> None:
    """Hook for entries that are legal Python objects but illegal in ``use`` (checked by the ladder layer)."""
    if isinstance(entry, Ladder):
        entry.check_usable(owner)


def children(entry: Any) -> tuple[Any, ...]:
    """The entries directly under ``entry`` in the use tree, in use order.

    A context's ``use``; a ``when(...)``'s entries; every ``match(...)`` case's entries, case after
    case; a ladder's canonical sources. Anything else (a falsy flag, a tool) has none. What a walk
    does at each kind (an owner for a context's children, a predicate for ``when``/``match``, the
    ladder its sources are planned under) stays with the walk; where the children are is said here.
    """
    if isinstance(entry, Context):
        return entry.use
    if isinstance(entry, Conditional):
        return entry.entries
    if isinstance(entry, Match):
        return tuple(child for branch in entry.cases.values() for child in branch)
    if isinstance(entry, Ladder):
        return tuple(entry.canonical_sources())
    return ()


def gated(entry: Any) -> bool:
    """True for ``when(...)`` and ``match(...)``: their children are reached only when a predicate selects them."""
    return isinstance(entry, (Conditional, Match))


def descendants(entries: Iterable[Any]) -> Iterator[Any]:
    """Every entry under ``entries``, depth first in use order, each before its children (all
    ``match`` cases, every ``when`` branch: a static walk, no predicate is called)."""
    for entry in entries:
        yield entry
        yield from descendants(children(entry))


if TYPE_CHECKING:
    from ..plan.ladders import Droppable, Offloadable, Prefer, Summarizable

    # What may appear in ``use``: a tool output policy (``offloadable(above_tokens=N)``) may not, and
    # falsy values (``None``, ``False``, ``DEBUG and ctx``) are ignored.
    UseEntry = Union[Context, Conditional, Match, Prefer, Summarizable, Offloadable, Droppable, None, bool]  # noqa: UP007
