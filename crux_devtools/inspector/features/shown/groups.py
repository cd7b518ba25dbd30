"""The prompt list's groups: one per file, named by the file's path in the project.

A prompt is listed under the file that defines it (``contexts.py``, ``agents/support.py``), never
under the module name the inspector imported it by (``crux_project.01_contexts`` is the inspector's
own name for a file whose name is not an identifier). A prompt without a file (defined in code the
project did not import from a file) is listed under its module's name. Every front end that groups
the list calls ``group_prompts``, so the web list and the text say the same.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from ...report_types import PromptReport

T = TypeVar("T")

INTERNAL_PREFIX = "crux_project."  # the package the inspector imports non-identifier files under


def group_name(module: str, file: str) -> str:
    """What a prompt's group is called: its file, project-relative with ``/``; else its module's
    dotted name without the inspector's internal prefix; ``(no file)`` when it has neither."""
    if file:
        return file.replace("\\", "/")
    if module.startswith(INTERNAL_PREFIX):
        module = module[len(INTERNAL_PREFIX):]
    return module or "(no file)"


def prompt_group(prompt: PromptReport) -> str:
    """``group_name`` of one prompt of a report."""
    return group_name(prompt["module"], prompt["file"])


def group_prompts(items: Iterable[T], name: Callable[[T], str]) -> list[tuple[str, list[T]]]:
    """``items`` grouped by ``name`` (a group per distinct name), groups in the order their first
    item comes and items in their own order (report order: files as they loaded, prompts as defined)."""
    grouped: dict[str, list[T]] = {}
    for item in items:
        grouped.setdefault(name(item), []).append(item)
    return list(grouped.items())


__all__ = ["group_name", "group_prompts", "prompt_group"]
