"""The web inspector: a FastAPI app over a project session (``crux-devtools serve``).

Nothing here is imported by ``import crux_devtools``; the CLI imports it lazily.
"""

from __future__ import annotations
