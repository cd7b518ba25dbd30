"""What a loaded project depends on, recorded in the worker while user code runs. Runs only in the worker.

``Tracker`` records, for the project's own modules (files under the project root):

- the import graph: which project module imported which (a hook on ``builtins.__import__``, plus the
  modules that appeared in ``sys.modules`` while one was imported, for ``importlib.import_module``);
- the files user code opened for reading inside the project (``sys.addaudithook`` on ``"open"``),
  such as a ``skills/*/SKILL.md``, and the folders it listed (``os.listdir``, ``os.scandir``,
  ``glob``), each with the module whose code did it;
- the SQLite databases it connected to inside the project (the ``"sqlite3.connect"`` audit event),
  such as a ``MemoryStore`` file: the file and its ``-wal`` (where a WAL-mode commit lands first).
  SQLite reads them without ``open``, so without this a fact the application adds to a memory store
  would change what a fresh evaluation shows while no save is seen. A store that changed while the
  worker had it open (the project writes it as it loads) is not watched, as a written file is not:
  its own write would reload it forever.

``affected(files)`` is then the set of modules a save must re-import: the modules of the changed files,
the modules that read or listed them, and every module that (transitively) imports one of those.
An audit hook cannot be removed: it is installed once, and records only while ``active``.
"""

from __future__ import annotations

import builtins
import importlib.util
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..session.watcher import file_state

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_NOT_DATA = (".py", ".pyc", ".pyo", ".so", ".pyd")
# Audit events that change a file or folder, and the positions of the paths they change.
_CHANGES = {
    "os.rename": (0, 1), "os.remove": (0,), "os.rmdir": (0,), "os.mkdir": (0,), "os.symlink": (1,), "os.link": (1,),
    "os.truncate": (0,), "os.utime": (0,), "os.chmod": (0,), "shutil.rmtree": (0,), "shutil.move": (0, 1), "shutil.copyfile": (1,),
}
_NOT_PROJECT = tuple(f"{os.sep}{name}{os.sep}" for name in ("site-packages", ".venv", "venv", "node_modules", ".git"))


class Tracker:
    """The import graph and data-file reads of one worker's project (see the module docstring)."""

    def __init__(self) -> None:
        self.root = ""  # the project root with a trailing separator; empty: record nothing
        self.active = False
        self.edges: dict[str, set[str]] = {}  # importer module name -> imported module names
        self.reads: dict[str, set[str]] = {}  # absolute file path -> names of modules that read it
        self.listed: dict[str, set[str]] = {}  # absolute folder path -> names of modules that listed it
        self.written: set[str] = set()  # absolute paths user code opened for writing (never watched)
        self.current: list[str] = []  # the module being imported or whose target is evaluated, innermost last
        self.stores: dict[str, tuple[tuple[int, int] | None, tuple[int, int] | None]] = {}  # SQLite file -> (its stat, its -wal's) when first connected
        self._installed = False

    def install(self, root: Path) -> None:
        self.root = os.path.join(os.path.realpath(root), "")
        if self._installed:
            return
        self._installed = True
        original = builtins.__import__

        def tracked_import(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
            if self.active and globals is not None:
                self._record_import(name, globals, fromlist, level)
            return original(name, globals, locals, fromlist, level)

        builtins.__import__ = tracked_import
        sys.addaudithook(self._audit)

    # -- recording -------------------------------------------------------------------------------
    def in_project(self, path: str) -> bool:
        """A file of the project (not of a virtual environment or dependency kept inside it)."""
        return bool(self.root) and path.startswith(self.root) and not any(part in path for part in _NOT_PROJECT)

    def _record_import(self, name: str, globals: Any, fromlist: Any, level: int) -> None:
        try:
            importer = globals.get("__name__")
            file = globals.get("__file__")
            if not isinstance(importer, str) or not isinstance(file, str) or not self.in_project(file):
                return
            absolute = name
            if level:
                package = globals.get("__package__") or importer.rpartition(".")[0]
                absolute = importlib.util.resolve_name("." * level + name, package)
            found = self.edges.setdefault(importer, set())
            found.add(absolute)
            parts = absolute.split(".")
            for i in range(1, len(parts)):
                found.add(".".join(parts[:i]))
            for item in fromlist or ():
                if isinstance(item, str) and item != "*":
                    found.add(f"{absolute}.{item}")  # a submodule, or an attribute (no such module: ignored)
        except Exception:  # noqa: BLE001, S110 - recording must never break user code's import
            pass

    def _audit(self, event: str, args: tuple[Any, ...]) -> None:
        if event in _CHANGES:
            self._wrote(args, _CHANGES[event])
            return
        if event == "sqlite3.connect":
            if self.active:
                self._connected(args)
            return
        if event not in ("open", "os.listdir", "os.scandir") or not (self.active or event == "open"):
            return
        try:
            path = args[0]
            if isinstance(path, int) or path is None:
                return
            writes = event == "open" and (
                (isinstance(args[1], str) and any(c in args[1] for c in "wax+"))
                or (args[1] is None and isinstance(args[2], int) and bool(args[2] & _WRITE_FLAGS))
            )
            if not writes and not self.active:
                return
            full = os.path.realpath(os.path.abspath(os.fsdecode(path)))
            if writes:
                # A file user code writes is not watched, even if it reads it too: its own write
                # would re-import the module, which writes it again, forever. Recorded at any time
                # (a thread user code started may write later): the session takes the change of
                # such a file for its echo.
                if self.in_project(full):
                    self.written.add(full)
                return
            if not self.in_project(full) or full.endswith(_NOT_DATA) or f"{os.sep}__pycache__{os.sep}" in full:
                return
            if f"{os.sep}.crux{os.sep}" in full or full.endswith(f"{os.sep}.crux"):
                return
            module = self._reader()
            if module is None:
                return
            table = self.reads if event == "open" else self.listed
            table.setdefault(full, set()).add(module)
        except Exception:  # noqa: BLE001, S110 - an audit hook must never raise into user code
            pass

    def _connected(self, args: tuple[Any, ...]) -> None:
        """Record a SQLite database of the project user code connected to (and its ``-wal``) as read."""
        try:
            name = os.fsdecode(args[0]) if args and isinstance(args[0], (str, bytes, os.PathLike)) else ""
            if name.startswith("file:"):  # a URI filename: the path before its query
                name = name[len("file:"):].split("?", 1)[0]
            if not name or name == ":memory:":
                return
            full = os.path.realpath(os.path.abspath(name))
            if not self.in_project(full) or f"{os.sep}.crux{os.sep}" in full:
                return
            module = self._reader()
            if module is None:
                return
            self.stores.setdefault(full, (file_state(full), file_state(full + "-wal")))
            for path in (full, full + "-wal"):
                self.reads.setdefault(path, set()).add(module)
        except Exception:  # noqa: BLE001, S110 - an audit hook must never raise into user code
            pass

    def written_stores(self) -> set[str]:
        """The SQLite files (and their ``-wal``) that changed since user code first connected to them."""
        out: set[str] = set()
        for path, seen in self.stores.items():
            if (file_state(path), file_state(path + "-wal")) != seen:
                out.update((path, path + "-wal"))
        return out

    def _wrote(self, args: tuple[Any, ...], positions: tuple[int, ...]) -> None:
        """Record the project paths a file-changing call of user code names (see ``written``)."""
        try:
            for i in positions:
                path = args[i]
                if isinstance(path, int) or path is None:
                    continue
                full = os.path.join(os.path.realpath(os.path.dirname(os.path.abspath(os.fsdecode(path)))), os.path.basename(os.fsdecode(path)))
                if self.in_project(full):
                    self.written.add(full)
        except Exception:  # noqa: BLE001, S110 - an audit hook must never raise into user code
            pass

    def written_files(self) -> list[str]:
        """The project files and folders user code wrote, created, moved or removed (relative to the root)."""
        return sorted(os.path.relpath(path, self.root) for path in list(self.written) if path.startswith(self.root))

    def _reader(self) -> str | None:
        """The project module whose code is running (innermost frame in a project file), else the one
        being imported or evaluated."""
        frame = sys._getframe(1)
        while frame is not None:
            filename = frame.f_code.co_filename
            if self.in_project(filename):
                name = frame.f_globals.get("__name__")
                if isinstance(name, str):
                    return name
            frame = frame.f_back  # type: ignore[assignment]
        return self.current[-1] if self.current else None

    def imported_while(self, importer: str, before: Iterable[str]) -> None:
        """Record the project modules that appeared while ``importer`` was imported as its imports."""
        new = set(sys.modules) - set(before)
        if new:
            self.edges.setdefault(importer, set()).update(name for name in new if name != importer)

    def depends(self, importer: str, names: Iterable[str]) -> None:
        self.edges.setdefault(importer, set()).update(n for n in names if n != importer)

    def forget(self, names: Iterable[str]) -> None:
        """Drop what these modules imported and read: they are about to run again and record it anew."""
        gone = set(names)
        for name in gone:
            self.edges.pop(name, None)
        for table in (self.reads, self.listed):
            for path in list(table):
                table[path] -= gone
                if not table[path]:
                    del table[path]
        for path in [p for p in self.stores if p not in self.reads]:
            del self.stores[path]  # connected to again when they run: its state then is the new baseline

    # -- reading ---------------------------------------------------------------------------------
    def project_modules(self) -> dict[str, str]:
        """``module name -> real file path`` of every imported module that is a project file."""
        found: dict[str, str] = {}
        for name, module in list(sys.modules.items()):
            file = getattr(module, "__file__", None)
            # Project modules are imported from the resolved root (it is first on sys.path).
            if isinstance(file, str) and self.in_project(file):
                found[name] = os.path.normpath(file)
        return found

    def affected(self, files: Iterable[str], extra: Iterable[str] = ()) -> set[str]:
        """The project modules to re-import after ``files`` (absolute paths) changed, with ``extra``."""
        modules = self.project_modules()
        by_file: dict[str, set[str]] = {}
        for name, file in modules.items():
            by_file.setdefault(file, set()).add(name)
        direct = set(extra)
        for path in files:
            full = os.path.normpath(path)
            direct |= by_file.get(full, set())
            direct |= self.reads.get(full, set())
            direct |= self.listed.get(os.path.dirname(full), set())
        importers: dict[str, set[str]] = {}
        for importer, imported in self.edges.items():
            for name in imported:
                importers.setdefault(name, set()).add(importer)
        found: set[str] = set()
        todo = list(direct)
        while todo:
            name = todo.pop()
            if name in found:
                continue
            found.add(name)
            todo.extend(importers.get(name, ()))
        return found

    def watched(self) -> dict[str, list[str]]:
        """Data files (relative to the root) and folders (ending in ``/``) user code read, with the modules."""
        out: dict[str, list[str]] = {}
        written = self.written | self.written_stores()
        for path, names in self.reads.items():
            if path not in written:
                out[os.path.relpath(path, self.root)] = sorted(names)
        for path, names in self.listed.items():
            rel = os.path.relpath(path, self.root)
            out["./" if rel == "." else rel.rstrip(os.sep) + "/"] = sorted(names)
        return out


def changed_library(files: dict[str, tuple[int, int]]) -> str | None:
    """Which of these library files changed on disk since they were imported, said in words, or None."""
    for path, (mtime, size) in files.items():
        try:
            info = os.stat(path)
        except OSError:
            return f"{path} was removed after this worker imported it"
        if (info.st_mtime_ns, info.st_size) != (mtime, size):
            return f"{path} changed after this worker imported it"
    return None


tracker = Tracker()
