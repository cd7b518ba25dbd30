"""What a change to the project's files calls for, decided from a frozen picture of what is held.

A pure function (no processes, no files): ``decide(change, held)`` returns

- ``Full(reason)``: load every module in a fresh worker;
- ``Incremental(retry)``: ask the held worker to update what the change concerns (``retry``: broken
  modules to import again anyway);
- ``VerifyOnly(reason)``: nothing the held worker imported or read changed, so no update; a fresh
  load in the background checks it (user code may depend on the change in ways the worker did not
  see: a module behind ``try: import``, a ``.py`` file read as data).

The session reads the project (discovery), builds ``Held`` and applies the decision.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Held:
    """What the session holds when a change arrives."""

    worker_alive: bool  # a worker holds the loaded project and can take an update
    same_modules: bool  # the discovered module list is the one the held worker loaded
    has_report: bool
    module_files: frozenset[str] = frozenset()  # the modules' files (relative to the root)
    imported: frozenset[str] = frozenset()  # project files the held worker imported (relative)
    watched: Mapping[str, object] = field(default_factory=dict)  # files read and folders listed ("dir/") -> readers
    broken: frozenset[str] = frozenset()  # modules whose last import or evaluation failed
    faulted: frozenset[str] = frozenset()  # modules that hung or ended a worker


@dataclass(frozen=True, slots=True)
class Full:
    reason: str


@dataclass(frozen=True, slots=True)
class Incremental:
    retry: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class VerifyOnly:
    reason: str


Decision = Full | Incremental | VerifyOnly


def was_read(relative: str, watched: Mapping[str, object]) -> bool:
    """A file user code read while the held worker loaded, or one in a folder it listed."""
    if relative in watched:
        return True
    folder = relative.rsplit("/", 1)[0] + "/" if "/" in relative else "./"
    return folder in watched


def decide(files: list[str], held: Held, *, full: bool = False) -> Decision:
    """What these changed files (relative to the root) call for; ``full``: a full load was asked for."""
    if full or not files:
        return Full("a full load was asked for")
    if "pyproject.toml" in files:
        return Full("pyproject.toml changed")
    if not held.worker_alive:
        return Full("no worker holds the project")
    if not held.same_modules:
        return Full("a module was added, removed or renamed")
    if held.faulted:
        return Full(f"{', '.join(sorted(held.faulted))} hung or ended a worker")
    if not held.has_report:
        return Full("no report is shown yet")
    known = held.imported | held.module_files
    concerned = [f for f in files if f in known or was_read(f, held.watched)]
    # A Python file no module imported may be what a broken module failed to import: retry those.
    unknown = any(f.endswith(".py") and f not in known for f in files)
    retry = held.broken - held.faulted if unknown else frozenset()
    if not concerned and not retry:
        return VerifyOnly(f"no module imported or read {', '.join(files[:3])}{'…' if len(files) > 3 else ''}")
    return Incremental(frozenset(retry))
