"""Read an excerpt of a project file for a load error, never anything outside the project."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

READABLE_SUFFIXES = frozenset({".py", ".toml", ".md", ".txt", ".json", ".yaml", ".yml", ".cfg", ".ini"})
MAX_BYTES = 512_000
CONTEXT_LINES = 12


@dataclass(frozen=True, slots=True)
class SourceExcerpt:
    file: str
    line: int | None
    lines: list[tuple[int, str]] = field(default_factory=list)
    problem: str | None = None


def resolve_inside(root: Path, relative: str) -> Path | None:
    """The file ``relative`` names under ``root``, or None when it would leave the project.

    Raises ``OSError`` when the name cannot be looked up at all (too long, a loop of links)."""
    if not relative or "\x00" in relative or Path(relative).is_absolute():
        return None
    base = Path(root).resolve()
    target = (base / relative).resolve()
    if not target.is_relative_to(base) or any(part.startswith(".") for part in target.relative_to(base).parts):
        return None
    return target


def source_excerpt(root: Path, relative: str, line: int | None) -> SourceExcerpt:
    """Lines around ``line`` of a project file; a file that cannot be shown gives a ``problem``."""
    try:
        target = resolve_inside(root, relative)
        if target is None:
            return SourceExcerpt(relative, line, problem="this file is outside the project (or hidden), so it is not shown")
        if target.suffix not in READABLE_SUFFIXES or not target.is_file():
            return SourceExcerpt(relative, line, problem="no such source file in the project")
        if target.stat().st_size > MAX_BYTES:
            return SourceExcerpt(relative, line, problem="the file is too large to show")
        text = target.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:  # a name too long for the file system, a link loop, no permission
        return SourceExcerpt(relative, line, problem=f"cannot read this file: {exc.strerror or exc}")
    if line is None:
        start, end = 1, len(text)
    else:
        start, end = max(1, line - CONTEXT_LINES), min(len(text), line + CONTEXT_LINES)
    return SourceExcerpt(relative, line, [(n, text[n - 1]) for n in range(start, end + 1)])
