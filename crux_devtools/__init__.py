"""crux_devtools: compose prompts from reusable contexts, and see exactly what a model is sent.

Everything public is importable from here. Importing this package loads no UI library.
"""

from __future__ import annotations

from .core import *  # noqa: F403
from .core import __all__ as _core_all

__all__ = list(_core_all)
__version__ = "0.1.0"
