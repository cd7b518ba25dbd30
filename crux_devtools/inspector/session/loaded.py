"""What the held worker loaded, as the last loads left it: the facts the next change is decided with.

One frozen value per session, replaced after each load (``after``): the module list the held worker
loaded (set by full loads; another list means a full load), the modules that are broken (shown
stale until a load imports them again) or faulted (they hung or ended a worker: every change is a
full load until one loads without them faulting), the project files the worker imported and the
files it read and folders it listed (``"dir/"``) -> the modules that did, and what primes the next
spare (the libraries it imported, the texts it counted, the project's module files). ``holding``
hands the facts to ``reload_rules.decide``; ``keep_broken`` is the rule that an update leaves the
broken modules it did not import again broken.

One part is not a value: ``stores``, the state of each SQLite store the project reads (the watcher's
filter leaves those out) as this load left it, updated in place by ``reads_store`` as the watcher
sees it written, so a store only opened and closed again (a reader, a verification's worker) is no change.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...shapes import PrimeRequest
from ..report_types import Report
from .discovery import ModuleRef
from .held_report import report_texts
from .load import LoadOutcome
from .reload_rules import Held, Incremental
from .watcher import file_state, is_relevant


def module_files(modules: Sequence[ModuleRef], root: Path) -> frozenset[str]:
    """The modules' files, relative to the project root."""
    return frozenset(os.path.relpath(m.path, root) for m in modules if m.path)


def store_states(root: Path, watched: Mapping[str, object]) -> dict[str, tuple[int, int] | None]:
    """The state of each file user code read that the watcher's filter leaves out (a store), as it is now."""
    return {f: file_state(root / f) for f in watched if not f.endswith("/") and not is_relevant(root, str(root / f))}


def keep_broken(update: LoadOutcome, decision: Incremental, modules: Sequence[ModuleRef], root: Path, shown: Report | None) -> LoadOutcome:
    """The broken modules this update did not import again stay broken (``Incremental.still_broken``):
    their errors in the report ``shown`` stay, and so do their last good prompts (stale, see ``HeldReport.merge``)."""
    still = decision.still_broken(update.reimported)
    if not still or shown is None:
        return update
    files = module_files([m for m in modules if m.name in still], root)
    kept = [e for e in shown["errors"] if e["file"] in files]
    return dataclasses.replace(update, broken=update.broken | still, errors=[*kept, *update.errors])


@dataclass(frozen=True, slots=True)
class Loaded:
    """The load state of one session (see the module docstring); ``Loaded()`` before the first load."""

    modules: list[ModuleRef] | None = None  # the module list the held worker loaded (full loads set it)
    broken: frozenset[str] = frozenset()  # modules whose last import or evaluation failed
    faulted: frozenset[str] = frozenset()  # modules that hung or ended a worker in the last full load
    imported: frozenset[str] = frozenset()  # project files the held worker imported
    watched: dict[str, list[str]] = field(default_factory=dict)  # files read and folders listed -> the modules that did
    stores: dict[str, tuple[int, int] | None] = field(default_factory=dict)  # see the module docstring
    ignore: list[str] = field(default_factory=list)  # [tool.crux-devtools] watch_ignore
    note: str | None = None  # discovery.imported_note of the last discovery
    preload: list[str] = field(default_factory=list)  # the libraries the last full load imported
    counted: dict[str, list[Any]] | None = None  # the texts the last full load counted
    files: list[str] = field(default_factory=list)  # the project's module files, compiled ahead by the spare

    def holding(self, modules: Sequence[ModuleRef], root: Path, *, worker_alive: bool, has_report: bool, holds_stale: frozenset[str]) -> Held:
        """What the session holds for a change to the discovered ``modules`` (``reload_rules.decide``)."""
        return Held(
            worker_alive=worker_alive,
            same_modules=self.modules == list(modules),
            has_report=has_report,
            module_files=module_files(modules, root),
            imported=self.imported,
            watched=self.watched,
            broken=self.broken,
            faulted=self.faulted,
            holds_stale=holds_stale,
        )

    def after(self, outcome: LoadOutcome, *, stores: dict[str, tuple[int, int] | None], full: Sequence[ModuleRef] | None = None) -> Loaded:
        """The state after a load: an update's (``full`` is ``None``) or a full load of the modules ``full``."""
        changes: dict[str, Any] = {"broken": outcome.broken, "watched": outcome.watched, "imported": frozenset(outcome.imported), "stores": stores}
        if full is not None:
            changes.update(modules=list(full), faulted=outcome.faulted, files=[m.path for m in full if m.path and not m.package])
            if outcome.worker is not None:
                changes.update(preload=outcome.preload, counted=outcome.counted)
        return dataclasses.replace(self, **changes)

    def prime_request(self, root: Path, shown: Report | None) -> PrimeRequest:
        """What readies the next spare: this load's libraries, the texts it counted (else those of the
        report ``shown``: token counts are cached by content) and the project's files to compile."""
        counted = self.counted or {"texts": report_texts(shown), "separated": []}
        return {"root": str(root), "modules": self.preload, "files": self.files, "texts": counted["texts"], "separated": counted["separated"]}

    def reads_store(self, root: Path, relative: str) -> bool:
        """Whether this change to a file the watcher's filter leaves out is a store user code read,
        written since the load (or the last time this said so), not only opened and closed."""
        posix = relative.replace("\\", "/")
        if posix not in self.watched:
            return False
        state = file_state(root / posix)
        if posix in self.stores and self.stores[posix] == state:
            return False  # opened and closed (a reader, a verification's worker), not written
        self.stores[posix] = state
        return True
