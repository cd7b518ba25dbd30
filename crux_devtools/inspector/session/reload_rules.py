"""The reload rules: what a change to the project's files calls for, and what stays shown stale.

Pure functions over frozen values (no processes, no files, no clock). The session reads the project
(discovery), describes what it holds as a ``Held``, asks these functions, and applies the answers;
its life cycle and events are its own. Every rule is here, in the order a save meets them:

1. ``sort_changes``: which changed files can change the report (an update or a load may follow) and
   which only call for a verification later (no module imported or read them), leaving out the
   echoes of files the worker's own code wrote and what ``watch_ignore`` names.
2. ``decide(change, held)``:

   - ``Full(reason)``: load every module in a fresh worker;
   - ``Incremental(retry, keep_stale, protect)``: ask the held worker to update what the change
     concerns (the worker's import graph knows which modules import or read the changed files),
     importing ``retry`` again anyway; the broken modules in ``keep_stale`` keep their last good
     prompts, shown stale, unless the update imports them again and they load; the held worker
     refuses (answers "load in full") to import a module of ``protect`` again, because it holds that
     module's last good version and an update that crashed it would lose it;
   - ``VerifyOnly(reason)``: nothing to redo now: nothing the held worker imported or read changed,
     so no update; a fresh load in the background checks it (user code may depend on the change in
     ways the worker did not see: a module behind ``try: import``, a ``.py`` file read as data).

3. ``Incremental.still_broken(reimported)``: after an update, the broken modules it did not import
   again; they stay broken (their error stays) whatever else was saved.
4. ``last_good(...)``: after any load, the last good prompts each broken module shows (stale), and
   what each module's last good prompts are from then on.

Changing a rule: change the function here and add a row to its table in
``tests/unit/inspector/test_reload_rules.py``; the process tests (``test_incremental.py``, ``test_isolation.py``,
``test_verify.py``) check the session applies it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from .discovery import is_ignored
from ..report_types import PromptReport


@dataclass(frozen=True, slots=True)
class Held:
    """What the session holds when a change arrives (paths are relative to the project root)."""

    worker_alive: bool  # a worker holds the loaded project and can take an update
    same_modules: bool  # the discovered module list is the one the held worker loaded
    has_report: bool
    module_files: frozenset[str] = frozenset()  # the modules' files
    imported: frozenset[str] = frozenset()  # project files the held worker imported
    watched: Mapping[str, object] = field(default_factory=dict)  # files read and folders listed ("dir/") -> readers
    broken: frozenset[str] = frozenset()  # modules whose last import or evaluation failed (shown stale)
    faulted: frozenset[str] = frozenset()  # modules that hung or ended a worker
    holds_stale: frozenset[str] = frozenset()  # broken modules whose last good version the held worker holds


@dataclass(frozen=True, slots=True)
class Change:
    """What changed: files relative to the root; ``full``: a full load was asked for (``reload()``)."""

    files: tuple[str, ...] = ()
    full: bool = False


@dataclass(frozen=True, slots=True)
class Full:
    reason: str


@dataclass(frozen=True, slots=True)
class Incremental:
    """An update in the held worker (see the module docstring)."""

    retry: frozenset[str] = frozenset()  # broken modules to import again anyway
    keep_stale: frozenset[str] = frozenset()  # broken modules that keep their last good prompts unless imported again
    protect: frozenset[str] = frozenset()  # modules the held worker must not import again (it holds their last good version)

    def still_broken(self, reimported: Iterable[str]) -> frozenset[str]:
        """The broken modules this update did not import again: still broken, their error and their
        last good prompts (stale) kept, whatever else was saved."""
        return self.keep_stale - frozenset(reimported)


@dataclass(frozen=True, slots=True)
class VerifyOnly:
    reason: str


Decision = Full | Incremental | VerifyOnly


@dataclass(frozen=True, slots=True)
class Changes:
    """Watcher events sorted: ``wanted`` may change the report now; ``unseen`` no module imported or
    read, so they only call for a verification later."""

    wanted: tuple[str, ...] = ()
    unseen: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LastGood:
    """What ``last_good`` found: the prompts to show stale, each with its module, and each module's
    last good prompts from now on."""

    stale: tuple[tuple[str, PromptReport], ...]
    known: dict[str, list[PromptReport]]


def was_read(relative: str, watched: Mapping[str, object]) -> bool:
    """A file user code read while the held worker loaded, or one in a folder it listed."""
    if relative in watched:
        return True
    folder = relative.rsplit("/", 1)[0] + "/" if "/" in relative else "./"
    return folder in watched


def concerns(relative: str, watched: Mapping[str, object], ignore: Sequence[str]) -> bool:
    """Whether a change to this project file can change the report: ``pyproject.toml``, a Python
    file, or a file (or a folder's entry) user code read while the worker loaded; never one matching
    ``watch_ignore``."""
    posix = relative.replace("\\", "/")
    if posix == "pyproject.toml":
        return True
    if is_ignored(posix, list(ignore)):
        return False
    return posix.endswith(".py") or was_read(posix, watched)


def sort_changes(files: Iterable[str], *, watched: Mapping[str, object], ignore: Sequence[str], echoes: Iterable[str] = ()) -> Changes:
    """Sort the watcher's changed files (see ``Changes``); a file the worker's own code wrote is its
    echo, not a change, and a file ``watch_ignore`` names is neither."""
    written = set(echoes)
    files = [f for f in files if f.replace("\\", "/") not in written]
    wanted = [f for f in files if concerns(f, watched, ignore)]
    unseen = [f for f in files if f not in wanted and not is_ignored(f.replace("\\", "/"), list(ignore))]
    return Changes(tuple(wanted), tuple(unseen))


def decide(change: Change, held: Held) -> Decision:
    """What this change calls for, given what is held (see the module docstring)."""
    files = change.files
    if change.full or not files:
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
    return Incremental(frozenset(retry), held.broken, held.holds_stale & held.broken)


def last_good(
    modules: Sequence[str],
    broken: frozenset[str],
    known: Mapping[str, Sequence[PromptReport]],
    prompts: Sequence[PromptReport],
    owners: Mapping[str, str],
) -> LastGood:
    """After a load: each broken module shows its last good prompts (``known``), stale, except a prompt
    this load has current (it moved to another module); each healthy module's current prompts are its
    last good ones from now on, and a broken module keeps the ones it had.

    ``modules``: the discovered module names in order; ``prompts``: this load's current prompts;
    ``owners``: prompt id -> the module it was found in.
    """
    taken = {p["id"] for p in prompts} | set(owners)
    stale: list[tuple[str, PromptReport]] = []
    for name in modules:
        if name not in broken:
            continue
        for prompt in known.get(name, ()):
            if prompt["id"] in taken:
                continue
            taken.add(prompt["id"])
            stale.append((name, prompt))
    kept = {name: list(known[name]) for name in modules if name in broken and name in known}
    by_module: dict[str, list[PromptReport]] = {}
    for p in prompts:
        by_module.setdefault(owners.get(p["id"], ""), []).append(p)
    for name in modules:
        if name not in broken:
            kept[name] = by_module.get(name, [])
    return LastGood(tuple(stale), kept)
