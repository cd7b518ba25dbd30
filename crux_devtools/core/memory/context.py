"""``memory(...)``: a context whose system text is read from a ``MemoryStore`` at resolve time.

A ``Memory`` is a ``Context`` (``kind = "memory"``), so the resolver needs nothing special: it sits
in ``use`` or nests inside a context, its block shows in ``Inspection.parts`` with its tokens, and
its ``remember_fact`` tool is inherited like any context tool. ``capture(messages)`` buffers what
the blocks keep from a conversation and ``flush()`` writes it in one transaction.

The namespace of the current resolve is remembered (per thread or task, through a ``ContextVar``,
and as the last one seen) so that the ``remember_fact`` tool and ``capture`` write where the
memory was last read, unless a namespace or input is given explicitly.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from ..compose.contexts import Context, check_id, check_input_model, check_priority
from ..errors import CallbackError, CruxError
from ..tools import Tool, tool
from ..compose.validation import validate_model
from ..compose.sites import definition_site
from .blocks import Facts, RecentMessages
from .checks import check_text
from .store import MemoryStore

Namespace = str | Callable[[Any], Any]
QuerySource = str | Callable[[Any], Any] | None
FACT_TOOL = "remember_fact"


class RememberFact(BaseModel):
    fact: str = Field(description="One durable fact about the user or account, in a full sentence")


class MemoryState:
    """Mutable companion of a frozen ``Memory``: the current namespace and the capture buffer."""

    def __init__(self, memory_id: str) -> None:
        self.current: ContextVar[str | None] = ContextVar(f"crux_memory_{memory_id}", default=None)
        self.detail: ContextVar[str | None] = ContextVar(f"crux_memory_detail_{memory_id}", default=None)
        self.last: str | None = None
        self.pending: list[tuple[str, str, str, str | None]] = []  # (namespace, content, entry_type, lane)
        self.lock = threading.Lock()

    def set(self, namespace: str) -> None:
        self.current.set(namespace)
        self.last = namespace

    def get(self) -> str | None:
        return self.current.get() or self.last


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Memory(Context):
    """A memory in ``use``: renders its blocks for the input's namespace; exposes ``remember_fact``."""

    kind: ClassVar[str] = "memory"

    store: MemoryStore | None = None
    namespace: Namespace = ""
    blocks: tuple[RecentMessages | Facts, ...] = ()
    query: QuerySource = None
    state: MemoryState = field(default_factory=lambda: MemoryState("memory"))

    # -- rendering -----------------------------------------------------------------------------
    def _call(self, callback: str, function: Callable[[Any], Any], input: Any) -> Any:
        """Call the ``namespace`` or ``query`` callback; a failure names that callback of this memory
        (not the ``system`` text it is read for)."""
        try:
            value = function(input)
        except CruxError:
            raise
        except Exception as exc:  # noqa: BLE001 - user code: re-raised with the memory and callback named
            raise CallbackError(self.id, callback, f"raised {type(exc).__name__}: {exc}", function=function) from exc
        if inspect.isawaitable(value):
            if inspect.iscoroutine(value):
                value.close()  # never awaited: close it instead of leaving a warning behind
            raise CallbackError(
                self.id,
                callback,
                f"returned a coroutine; a memory's {callback} callback must be a plain function, not async def",
                function=function,
            )
        return value

    def namespace_for(self, input: Any) -> str:
        """The namespace for one validated input (a string, or the namespace callback's result)."""
        if not callable(self.namespace):
            return self.namespace
        value = self._call("namespace", self.namespace, input)
        if not isinstance(value, str) or not value:
            raise CallbackError(
                self.id,
                "namespace",
                f"returned {value!r}, expected a non-empty string; return the namespace to read and write, e.g. f\"user:{{i.user_id}}\"",
                function=self.namespace,
            )
        return value

    def query_for(self, input: Any) -> str | None:
        """What the facts block searches for: the ``query`` string, the callback's result, or ``None``."""
        if not callable(self.query):
            return self.query
        value = self._call("query", self.query, input)
        if value is not None and not isinstance(value, str):
            raise CallbackError(
                self.id,
                "query",
                f"returned {type(value).__name__}, expected str or None; return the text to search the memory for (None: its newest facts)",
                function=self.query,
            )
        return value

    def render(self, input: Any) -> str:
        """The memory block for ``input``: each block's text, joined by a blank line."""
        namespace = self.namespace_for(input)
        self.state.set(namespace)
        query = self.query_for(input)
        assert self.store is not None
        rendered = [block.render_with_detail(self.store, namespace, query) for block in self.blocks]
        self.state.detail.set(f"namespace {namespace!r}: " + "; ".join(detail for _, detail in rendered))
        return "\n\n".join(text for text, _ in rendered if text)

    def render_detail(self) -> str | None:
        """What the last render in this thread or task read: its namespace and, per block, what it
        found and what the block's budget left out."""
        return self.state.detail.get()

    # -- writing -------------------------------------------------------------------------------
    def _target(self, namespace: str | None, input: Any) -> str:
        if namespace is not None:
            return check_text("namespace", namespace)  # now, not when flush() writes it
        if input is not None:
            return self.namespace_for(_as_input(self.input, input, self.id))
        if isinstance(self.namespace, str) and self.namespace:
            return self.namespace
        current = self.state.get()
        if current is None:
            raise ValueError(
                f"memory {self.id!r}: no namespace yet; resolve a prompt that uses it first, or pass namespace= or input="
            )
        return current

    def capture(self, messages: Sequence[Any], *, namespace: str | None = None, input: Any = None) -> int:
        """Buffer what the blocks keep from ``messages`` (chat dicts); returns how many entries."""
        if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Sequence):
            raise TypeError(f"memory {self.id!r}: capture expects a list of message dicts, got {type(messages).__name__}")
        target = self._target(namespace, input)
        kept = [(target, content, entry_type, lane) for block in self.blocks for content, entry_type, lane in block.keep(messages)]
        with self.state.lock:
            self.state.pending.extend(kept)
        return len(kept)

    def flush(self) -> int:
        """Write every captured entry to the store (one transaction per namespace); returns the count."""
        assert self.store is not None
        with self.state.lock:
            pending, self.state.pending = self.state.pending, []
        by_namespace: dict[str, list[dict[str, Any]]] = {}
        for namespace, content, entry_type, lane in pending:
            by_namespace.setdefault(namespace, []).append({"content": content, "entry_type": entry_type, "lane": lane})
        done: set[str] = set()
        try:
            for namespace, rows in by_namespace.items():
                self.store.remember_many(namespace, rows)
                done.add(namespace)
        except BaseException:
            with self.state.lock:  # put back what was not written, so a retry loses nothing
                self.state.pending[:0] = [p for p in pending if p[0] not in done]
            raise
        return len(pending)

    @property
    def pending(self) -> int:
        """How many captured entries wait for ``flush()``."""
        return len(self.state.pending)

    def remember_fact(self, fact: str, *, namespace: str | None = None) -> str:
        """Store one fact in the current (or given) namespace right away; returns its id."""
        assert self.store is not None
        return self.store.remember(self._target(namespace, None), fact, entry_type="fact")


def _as_input(model: type[BaseModel] | None, input: Any, memory_id: str) -> Any:
    if isinstance(input, BaseModel):
        return input
    if not isinstance(input, Mapping):
        raise TypeError(f"input must be a dict or a pydantic model instance, got {type(input).__name__}")
    if model is not None:
        return validate_model(model, input, f"memory {memory_id!r}")
    return SimpleNamespace(**input)


def _fact_tool(state: MemoryState, store: MemoryStore, name: str, memory_id: str) -> Tool:
    def execute(args: RememberFact) -> str:
        namespace = state.get()
        if namespace is None:
            return f"error: memory {memory_id!r} has no namespace yet; nothing was stored"
        store.remember(namespace, args.fact, entry_type="fact")
        return f"remembered: {args.fact}"

    return tool(
        name,
        description="Remember a durable fact about the user or account so that later conversations can use it.",
        parameters=RememberFact,
        execute=execute,
    )


def memory(
    id: str,
    *,
    store: MemoryStore,
    namespace: Namespace,
    blocks: Sequence[RecentMessages | Facts],
    priority: int = 50,
    input: type[BaseModel] | None = None,
    when: Callable[[Any], Any] | None = None,
    query: QuerySource = None,
    fact_tool: str | None = FACT_TOOL,
) -> Memory:
    """Define a memory usable in ``use``.

    ``namespace`` is a string or a callback of the merged input (``lambda i: f"user:{i.user_id}"``);
    declare the fields it reads with ``input=``. ``query`` (string or callback) is what the facts
    block searches for; without one the most recent facts are shown. A memory with a facts block
    exposes a tool named ``fact_tool`` (``None`` for no tool; give two memories in one prompt
    different names).
    """
    check_id("memory", id)
    check_priority(id, priority)
    if not isinstance(store, MemoryStore):
        raise TypeError(f"memory {id!r}: store must be a MemoryStore, got {type(store).__name__}")
    if not (isinstance(namespace, str) and namespace) and not callable(namespace):
        raise TypeError(f"memory {id!r}: namespace must be a non-empty string or a callback of the input, got {namespace!r}")
    if query is not None and not isinstance(query, str) and not callable(query):
        raise TypeError(f"memory {id!r}: query must be a string or a callback of the input, got {type(query).__name__}")
    if when is not None and not callable(when):
        raise TypeError(f"memory {id!r}: when must be a callback taking the input, got {type(when).__name__}")
    checked = tuple(blocks)
    if not checked:
        raise ValueError(f"memory {id!r}: blocks must list at least one block, e.g. [recent_messages(...), facts(...)]")
    seen: set[str] = set()
    for block in checked:
        if not isinstance(block, (RecentMessages, Facts)):
            raise TypeError(f"memory {id!r}: blocks must be recent_messages(...) or facts(...), got {type(block).__name__}")
        if block.id in seen:
            raise ValueError(f"memory {id!r}: two blocks have the id {block.id!r}; give each a unique id")
        seen.add(block.id)
    state = MemoryState(id)
    has_facts = any(isinstance(b, Facts) for b in checked)
    tools = (_fact_tool(state, store, fact_tool, id),) if has_facts and fact_tool else ()
    result = Memory(
        id=id,
        system=None,
        input=check_input_model(id, input),
        when=when,
        priority=priority,
        tools=tools,
        store=store,
        namespace=namespace,
        blocks=checked,
        query=query,
        state=state,
        defined_at=definition_site(),
    )
    object.__setattr__(result, "system", result.render)
    return result
