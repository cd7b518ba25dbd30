"""Where in the source a change comes from: the edited line of a definition, the line of a setting.

``Sources`` reads a project file as it is at the base and at the head revision (``git show`` of a
commit, or the working tree); ``edited_line`` finds the first line inside a definition that the
source diff between the two changed, and ``setting_line`` the line of a keyword argument (a budget
setting) inside a definition. Pure but for ``Sources`` reading files; no user code runs.
"""

from __future__ import annotations

import ast
import difflib
import subprocess
from functools import lru_cache
from pathlib import Path


class Sources:
    """The text of a project file (a path relative to the project folder) at ``base`` and ``head``.

    ``top`` is the git work tree, ``subdir`` the project folder in it (POSIX, "" for the top);
    a side's ``sha`` is read from git, a side without one from ``head_dir`` (the working tree)."""

    def __init__(self, top: Path, subdir: str, base_sha: str | None, head_sha: str | None, head_dir: Path | None = None) -> None:
        self.top, self.subdir = top, subdir
        self.shas = {"base": base_sha, "head": head_sha}
        self.head_dir = head_dir
        self._read: dict[tuple[str, str], str | None] = {}

    def text(self, side: str, file: str) -> str | None:
        """The file's text at ``side`` (``"base"`` or ``"head"``), None where it does not exist."""
        key = (side, file)
        if key not in self._read:
            self._read[key] = self._load(side, file)
        return self._read[key]

    def _load(self, side: str, file: str) -> str | None:
        sha = self.shas.get(side)
        if sha is None:
            if side == "base" or self.head_dir is None:
                return None
            path = self.head_dir / file
            try:
                return path.read_bytes().decode("utf-8", errors="replace") if path.is_file() else None
            except OSError:
                return None
        name = f"{self.subdir}/{file}" if self.subdir else file
        try:
            done = subprocess.run(["git", "show", f"{sha}:{name}"], cwd=self.top, capture_output=True, check=False, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return done.stdout.decode("utf-8", errors="replace") if done.returncode == 0 else None


@lru_cache(maxsize=64)
def _tree(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):
        return None


def definition_range(source: str, line: int) -> tuple[int, int]:
    """The lines (first, last; 1-based) of the innermost statement holding ``line``, decorators
    included: the definition written there. ``(line, line)`` when the source does not parse."""
    tree = _tree(source)
    best: tuple[int, int] | None = None
    if tree is not None:
        for node in ast.walk(tree):
            if not isinstance(node, ast.stmt) or node.end_lineno is None:
                continue
            first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())])
            if first <= line <= node.end_lineno and (best is None or (first, -node.end_lineno) >= (best[0], -best[1])):
                best = (first, node.end_lineno)
    return best or (line, line)


def edited_line(base: str | None, head: str | None, line: int) -> int | None:
    """The first line (at head, 1-based) of the definition at ``line`` of ``head`` that the diff
    ``base`` -> ``head`` changed (an insertion, a replacement, or the line after a deletion); None
    when the diff does not touch the definition or a side is missing."""
    if base is None or head is None or base == head:
        return None
    first, last = definition_range(head, line)
    found: list[int] = []
    matcher = difflib.SequenceMatcher(None, base.splitlines(), head.splitlines(), autojunk=False)
    for op, _, _, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        start, end = (j1 + 1, j2) if j2 > j1 else (j1 + 1, j1 + 1)  # a deletion: the line after it
        low, high = max(start, first), min(end, last)
        if low <= high:
            found.append(low)
    return min(found) if found else None


def setting_line(source: str | None, line: int, name: str) -> int | None:
    """The line of keyword argument ``name=`` inside the definition at ``line`` (nested calls
    included, e.g. ``input_budget=InputBudget(max=...)``); None when it is not written there."""
    if source is None:
        return None
    tree = _tree(source)
    if tree is None:
        return None
    first, last = definition_range(source, line)
    lines = [
        node.value.lineno for node in ast.walk(tree)
        if isinstance(node, ast.keyword) and node.arg == name and first <= node.value.lineno <= last
    ]
    return min(lines) if lines else None
