"""No network from user code while the inspector imports and evaluates it.

The inspector imports every module of the project (each ``.py`` file that imports ``crux_devtools``,
unless ``[tool.crux-devtools] modules`` narrows it) on every save, and evaluates every example. A
module that calls ``generate`` or a provider at module level would then call the real model, and
spend money, on each save. So, in the worker, an audit hook (``sys.addaudithook``) refuses every
socket connection (``socket.connect`` and ``sendto``: TCP or UDP, loopback included, since a local
model server costs too, and Unix sockets) made while user code is on the stack, except:

- during a Run (the ``run`` op: the inspector's Run button and ``crux-devtools run``), which is
  meant to call the model, and while preparing summaries with ``allow_models`` (the page's
  "prepare with the model" button);
- in a project that sets ``allow_network = true`` in ``[tool.crux-devtools]``.

"User code on the stack" means a frame of a project file (not a library, not ``.venv``): the
library's own connections (none, today, while evaluating) are not refused, and neither is the
worker's own channel to the session. The refusal is a ``NetworkRefused`` (a ``PermissionError``, so
a client library wraps it as it wraps any connection failure) whose message names the project file
and line that connected and how to allow it. Hooks cannot be removed; ``install`` adds one per
process (a forked worker inherits it) and ``guarded`` turns it on and off.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .errors import in_project, relative

HOW_TO_ALLOW = (
    "guard the call with `if __name__ == \"__main__\":`, run it with the Run button or `crux-devtools run`, "
    "or set allow_network = true in [tool.crux-devtools] of pyproject.toml"
)
EVENTS = frozenset({"socket.connect", "socket.sendto", "socket.sendmsg"})


class NetworkRefused(PermissionError):
    """A connection user code tried to open while the inspector imported or evaluated it."""


class _Guard:
    def __init__(self) -> None:
        self.root: Path | None = None
        self.active = False
        self.refused = 0  # connections refused so far in this process
        self.doing = "importing and evaluating your modules"

    def check(self, event: str, args: tuple[Any, ...]) -> None:
        """Refuse this connection when the guard is on and user code made it."""
        if not self.active or self.root is None:
            return
        where = self.user_frame()
        if where is None:
            return
        self.refused += 1
        address = args[1] if len(args) > 1 else "?"
        raise NetworkRefused(
            f"crux-devtools refused a network connection to {_address(address)} made by {where[0]}:{where[1]} "
            f"while {self.doing}: the inspector re-runs this code on every save, so it never lets it call a "
            f"model or the network; {HOW_TO_ALLOW}"
        )

    def user_frame(self) -> tuple[str, int] | None:
        """The innermost frame of a project file on the stack, as ``(file, line)``."""
        assert self.root is not None  # noqa: S101 - checked by the caller
        frame = sys._getframe(1)
        while frame is not None:
            filename = frame.f_code.co_filename
            if filename != __file__ and in_project(self.root, filename):
                return relative(self.root, filename) or filename, frame.f_lineno
            frame = frame.f_back  # type: ignore[assignment]
        return None


def _address(address: Any) -> str:
    if isinstance(address, tuple) and len(address) >= 2:
        return f"{address[0]}:{address[1]}"
    if isinstance(address, bytes):
        return address.decode("utf-8", "replace")
    return str(address)


_guard = _Guard()
_installed = False


def _hook(event: str, args: tuple[Any, ...]) -> None:
    # Called for every audited event of the process (each open, import, compile...): the common
    # case returns at once.
    if event in EVENTS:
        _guard.check(event, args)


def install(root: Path) -> None:
    """Add the audit hook once per process; ``root`` is the project (its files are user code)."""
    global _installed
    _guard.root = Path(root).resolve()
    if not _installed:
        sys.addaudithook(_hook)
        _installed = True


@contextmanager
def guarded(on: bool = True, doing: str = "importing and evaluating your modules") -> Iterator[None]:
    """Refuse user code's connections inside the block (``on`` False: allow them, as a Run does)."""
    before, before_doing = _guard.active, _guard.doing
    _guard.active, _guard.doing = on, doing
    try:
        yield
    finally:
        _guard.active, _guard.doing = before, before_doing


def refused() -> int:
    """How many connections this process refused."""
    return _guard.refused


__all__ = ["HOW_TO_ALLOW", "NetworkRefused", "guarded", "install", "refused"]
