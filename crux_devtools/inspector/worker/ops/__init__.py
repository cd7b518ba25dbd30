"""The op table: every request the worker answers, one module per op in this folder.

Each op module declares, at module level:

- ``Request``: the ``TypedDict`` of the request's fields (``crux_devtools/shapes.py``, or the module
  itself when nothing else uses it), without the line's ``id`` and ``op``;
- ``Answer``: the type of the answer's ``result`` (a ``TypedDict``, or a union of them);
- ``handle(worker, request)``: the handler, run in the worker process with the ``Worker`` that holds
  the loaded project (``worker/main.py``);

and, where the default does not fit: ``NEEDS_PROJECT = False`` (the op runs before a ``load``),
``DOING`` (what a refusal of the network guard says the worker was doing), ``lifted(request)``
(whether the request may call a model: the network guard is lifted for it).

``OPS`` is built from the modules found here, so an op is its module and its shapes. Both sides read
it: the worker dispatches through it (``Worker.handle``), and ``transport/wire.py`` checks requests
(before they are sent, and again when they arrive) and answers against its types. Module-level code
of an op imports only ``shapes`` and the standard library: the server process reads the table without
loading the core.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Op:
    """One op of the table (see the module docstring for what each field comes from)."""

    name: str
    request: Any
    answer: Any
    handle: Callable[[Any, Any], Any]
    needs_project: bool
    doing: str
    lifted: Callable[[Any], bool]


def _never(request: Any) -> bool:
    return False


def op_of(name: str, module: Any) -> Op:
    """The op declared by ``module``; ``TypeError`` naming what it lacks."""
    missing = [attr for attr in ("Request", "Answer", "handle") if not hasattr(module, attr)]
    if missing:
        raise TypeError(f"op module {module.__name__} declares no {', '.join(missing)}: an op module declares Request, Answer and handle")
    request = module.Request
    if not (isinstance(request, type) and issubclass(request, dict) and hasattr(request, "__required_keys__")):
        raise TypeError(f"op module {module.__name__}: Request must be a TypedDict, not {request!r}")
    if not callable(module.handle):
        raise TypeError(f"op module {module.__name__}: handle must be a function (worker, request) -> answer")
    return Op(
        name, request, module.Answer, module.handle, bool(getattr(module, "NEEDS_PROJECT", True)),
        str(getattr(module, "DOING", "evaluating your prompts")), getattr(module, "lifted", _never),
    )


def op_modules() -> list[str]:
    """The names of the op modules in this folder."""
    return sorted(info.name for info in pkgutil.iter_modules(__path__) if not info.name.startswith("_"))


def _collect() -> dict[str, Op]:
    return {name: op_of(name, importlib.import_module(f"{__name__}.{name}")) for name in op_modules()}


OPS: dict[str, Op] = _collect()

__all__ = ["OPS", "Op", "op_modules", "op_of"]
