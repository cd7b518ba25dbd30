"""crux_devtools: compose prompts from reusable contexts, and see exactly what a model is sent.

Everything public is importable from here. Importing this package loads no UI library, and no library
code either until a public name is first used: the inspector's session process (web, TUI, CLI) imports
``crux_devtools.inspector`` without paying for pydantic, tiktoken and the core (about 0.3 s).
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    # Type checkers see the real names; at run time ``__getattr__`` loads them on first use. The names,
    # and ``__all__``, come from the one table of the core (``crux_devtools/core/__init__.py``).
    from .core import *  # noqa: F403


def __getattr__(name: str) -> Any:
    """``__all__`` and every public name come from the core's table (PEP 562): the first use of a
    public name loads the core and caches every public name here. Reading the table loads no library
    code (the core's ``__init__`` is light), and a submodule's name (``from . import cli_diff``) is left
    to the import system without reading it."""
    if (name.startswith("__") and name != "__all__") or importlib.util.find_spec(f"{__name__}.{name}") is not None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    core = importlib.import_module(f"{__name__}.core")
    if name == "__all__":
        globals()["__all__"] = list(core.__all__)
        return globals()["__all__"]
    if name not in core.__all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    for public in core.__all__:
        globals()[public] = getattr(core, public)
    return globals()[name]


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(importlib.import_module(f"{__name__}.core").__all__))
