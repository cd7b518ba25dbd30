"""Prompts: the root of a composition, with its own text, input, tools, ``use`` entries and examples."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from .callbacks import drive_async, drive_sync
from .contexts import (
    Context,
    TextSource,
    check_id,
    check_input_model,
    check_text_source,
    children,
    gated,
    normalize_use,
)
from .entries import Ladder
from .examples import Example

if TYPE_CHECKING:
    from .contexts import UseEntry
from ..errors import invalid_composition
from .resolve import finish, walk
from .sites import definition_site
from .results import Inspection, Resolved
from .schema import FieldDecl, merge_fields
from ..tokens import TokenCounter
from ..tools import Tool, normalize_tools
from .validation import validate_model


def check_planning_model(owner: str, value: Any) -> Any:
    """A prompt's ``model=``: a model name, a ``ModelCapacityProfile`` or a model adapter."""
    from ..plan.budget import ModelCapacityProfile
    from ..contract import is_model

    if value is None or isinstance(value, ModelCapacityProfile):
        return value
    if isinstance(value, str):
        if not value.strip():
            raise ValueError(f"prompt {owner!r}: model must be a non-empty model name, a ModelCapacityProfile or a model adapter, got ''")
        return value
    if is_model(value):
        return value
    raise TypeError(
        f"prompt {owner!r}: model must be a model name, a ModelCapacityProfile or a model adapter "
        f"(an object with complete()), got {type(value).__name__}"
    )


def check_token_budget(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise TypeError(f"token_budget must be a positive int or None, got {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class Reach:
    """A context reachable from a prompt, found statically (without any input)."""

    context: Context
    owner: str | None
    conditional: bool
    ladder: Ladder | None


def reachable(entries: Iterable[Any], owner: str | None = None, conditional: bool = False, ladder: Ladder | None = None) -> Iterator[Reach]:
    """Every context under ``entries`` in declaration order (owner before what it owns)."""
    for entry in entries:
        if isinstance(entry, Context):
            inner = conditional or entry.when is not None
            yield Reach(entry, owner, inner, ladder)
            yield from reachable(children(entry), entry.id, inner, ladder)
        else:
            under = entry if isinstance(entry, Ladder) else ladder
            yield from reachable(children(entry), owner, conditional or gated(entry), under)


@dataclass(frozen=True, slots=True, eq=False)
class Prompt:
    """A prompt definition. Build with ``prompt(...)``; resolve with ``resolve``/``inspect``."""

    id: str
    system: TextSource
    prompt: TextSource
    own_input: type[BaseModel] | None
    use: tuple[Any, ...]
    tools: tuple[Tool, ...]
    examples: dict[str, dict[str, Any]] | None
    input_model: type[BaseModel]
    all_tools: dict[str, Tool] = field(default_factory=dict)
    token_budget: int | None = None
    model: Any = None
    defined_at: tuple[str, int] | None = field(default=None, repr=False)  # (file, line) of the prompt(...) call
    expectations: dict[str, Any] = field(default_factory=dict, repr=False)  # example name -> Expect (example(..., expect=...))

    def __repr__(self) -> str:
        return f"<Prompt {self.id!r}>"

    # -- input ---------------------------------------------------------------------------------
    def validate_input(self, input: Any = None) -> BaseModel:
        """Validate a dict (or an instance of ``input_model``) into the merged model.

        A failure raises ``InputValidationError`` (a pydantic ``ValidationError``) with one readable
        line per field, e.g. ``unknown field 'mesage' (did you mean 'message'?)``."""
        if isinstance(input, self.input_model):
            return input
        if input is None:
            input = {}
        if isinstance(input, BaseModel):
            input = input.model_dump()
        if not isinstance(input, Mapping):
            raise TypeError(f"prompt {self.id!r}: input must be a dict or a {self.input_model.__name__}, got {type(input).__name__}")
        return validate_model(self.input_model, input, f"prompt {self.id!r}")

    def contexts(self) -> list[Reach]:
        """Every context this prompt may use, statically, in declaration order."""
        return list(reachable(self.use))

    # -- resolving -----------------------------------------------------------------------------
    def resolve(self, input: Any = None, *, token_budget: int | None = None, counter: TokenCounter | None = None) -> Resolved:
        return self._run_sync(input, token_budget, counter)[0]

    def inspect(self, input: Any = None, *, token_budget: int | None = None, counter: TokenCounter | None = None) -> Inspection:
        return self._run_sync(input, token_budget, counter)[1]

    async def aresolve(self, input: Any = None, *, token_budget: int | None = None, counter: TokenCounter | None = None) -> Resolved:
        return (await self._run_async(input, token_budget, counter))[0]

    async def ainspect(self, input: Any = None, *, token_budget: int | None = None, counter: TokenCounter | None = None) -> Inspection:
        return (await self._run_async(input, token_budget, counter))[1]

    def _budget(self, token_budget: int | None) -> int | None:
        # The call's budget wins; the prompt's own default applies when the call gives none.
        return check_token_budget(token_budget) if token_budget is not None else self.token_budget

    def _run_sync(self, input: Any, token_budget: int | None, counter: TokenCounter | None) -> tuple[Resolved, Inspection]:
        budget = self._budget(token_budget)
        model = self.validate_input(input)
        return finish(self, model, drive_sync(walk(self, model)), budget, counter)

    async def _run_async(self, input: Any, token_budget: int | None, counter: TokenCounter | None) -> tuple[Resolved, Inspection]:
        budget = self._budget(token_budget)
        model = self.validate_input(input)
        return finish(self, model, await drive_async(walk(self, model)), budget, counter)


def _collect(prompt_id: str, own_input: type[BaseModel] | None, own_tools: tuple[Tool, ...], use: tuple[Any, ...]) -> tuple[list[FieldDecl], dict[str, Tool]]:
    decls: list[FieldDecl] = []
    if own_input is not None:
        decls.extend(FieldDecl(n, prompt_id, own_input, info, False) for n, info in own_input.model_fields.items())
    tools: dict[str, Tool] = {}
    tool_owner: dict[str, str] = {}

    def add_tool(t: Tool, owner: str) -> None:
        if t.name in tools and tools[t.name] is not t:
            raise invalid_composition(
                f"prompt {prompt_id!r}: two different tools are named {t.name!r} (in {tool_owner[t.name]!r} and {owner!r}); rename one",
                contributor=owner,
            )
        tools.setdefault(t.name, t)
        tool_owner.setdefault(t.name, owner)

    for t in own_tools:
        add_tool(t, prompt_id)
    by_id: dict[str, Context] = {}
    conditional_everywhere: dict[int, bool] = {}
    reaches = list(reachable(use))
    for reach in reaches:
        ctx = reach.context
        if ctx.id in by_id and by_id[ctx.id] is not ctx:
            raise invalid_composition(
                f"prompt {prompt_id!r}: two different contexts have the id {ctx.id!r}; give each a unique id",
                contributor=ctx.id,
            )
        by_id[ctx.id] = ctx
        key = id(ctx)
        conditional_everywhere[key] = conditional_everywhere.get(key, True) and reach.conditional
    done: set[int] = set()
    for reach in reaches:
        ctx = reach.context
        if id(ctx) in done:
            continue
        done.add(id(ctx))
        for t in ctx.tools:
            add_tool(t, ctx.id)
        if ctx.input is not None:
            conditional = conditional_everywhere[id(ctx)]
            decls.extend(FieldDecl(n, ctx.id, ctx.input, info, conditional) for n, info in ctx.input.model_fields.items())
    return decls, tools


def _check_examples(prompt_id: str, examples: Any) -> tuple[dict[str, dict[str, Any]] | None, dict[str, Any]]:
    """The examples as input dicts, and the expectations of those written with ``example(...)``."""
    if examples is None:
        return None, {}
    if not isinstance(examples, Mapping):
        raise TypeError(f"prompt {prompt_id!r}: examples must be a dict {{name: input dict}}, got {type(examples).__name__}")
    out: dict[str, dict[str, Any]] = {}
    expectations: dict[str, Any] = {}
    for name, value in examples.items():
        if not isinstance(name, str) or not name:
            raise TypeError(f"prompt {prompt_id!r}: example names must be non-empty strings, got {name!r}")
        if isinstance(value, Example):
            out[name] = dict(value.input)
            if value.expect.items:
                expectations[name] = value.expect
            continue
        if not isinstance(value, Mapping):
            raise TypeError(f"prompt {prompt_id!r}: example {name!r} must be an input dict, got {type(value).__name__}")
        out[name] = dict(value)
    return out, expectations


def prompt(
    id: str,
    *,
    system: TextSource = None,
    prompt: TextSource = None,
    input: type[BaseModel] | None = None,
    use: Sequence[UseEntry] = (),
    tools: Iterable[Tool] | Mapping[str, Tool] = (),
    examples: Mapping[str, Mapping[str, Any] | Example] | None = None,
    token_budget: int | None = None,
    model: Any = None,
) -> Prompt:
    """Define a prompt. Checks the whole composition now: ids, tools, and the merged input model.

    ``token_budget`` limits the system text: every resolve of this prompt (``resolve``, ``inspect``,
    ``preview``, ``generate``) drops whole contexts by priority until it fits, unless the call passes
    its own. ``model`` names the model the prompt is used with (a name, a ``ModelCapacityProfile``
    or a model adapter): ``preview`` plans against it when the call names none, and ``generate``
    calls it when it is an adapter.
    """
    check_id("prompt", id)
    own_input = check_input_model(id, input)
    own_tools = normalize_tools(id, tools)
    entries = normalize_use(id, use)
    decls, all_tools = _collect(id, own_input, own_tools, entries)
    checked_examples, expectations = _check_examples(id, examples)
    return Prompt(
        id=id,
        system=check_text_source(id, "system", system),
        prompt=check_text_source(id, "prompt", prompt),
        own_input=own_input,
        use=entries,
        tools=own_tools,
        examples=checked_examples,
        input_model=merge_fields(id, decls),
        all_tools=all_tools,
        token_budget=check_token_budget(token_budget),
        model=check_planning_model(id, model),
        defined_at=definition_site(),
        expectations=expectations,
    )
