"""The ``o`` key: where a part is defined, and the ``$EDITOR`` command that opens it there."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from pathlib import Path

from .report import SourceLocation


def editor_command(location: SourceLocation, root: Path, environ: Mapping[str, str]) -> list[str] | None:
    """``$EDITOR +LINE FILE`` (the form vi, vim, emacs and nano understand), or ``None``.

    ``None`` when ``$EDITOR`` is unset: the TUI then only shows ``file:line`` (tests never set it).
    """
    editor = environ.get("EDITOR", "").strip()
    if not editor:
        return None
    return [*shlex.split(editor), f"+{location.line or 1}", str(root / location.file)]
