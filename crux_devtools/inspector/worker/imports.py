"""Importing a project's modules and collecting its prompts and agents. Runs only in the worker.

Modules are imported by file path (``importlib.util.spec_from_file_location``) with the project root
on ``sys.path``, so file names may start with digits. Each module-level ``Prompt`` or ``Agent`` is a
target; an object imported into several modules is reported once, where it is assigned. Module-level
contexts (memories and skills too) are located the same way, so a report can point at the line that
defines each one.

Each source file is parsed once: the same tree gives the module's code object and the lines of its
assignments and examples. A spare worker parses and compiles the project ahead of time
(``precompile``); a module whose source bytes are unchanged then skips both at load time.
"""

from __future__ import annotations

import ast
import importlib
import importlib.machinery
import importlib.util
import keyword
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType
from typing import Any, Literal

from ...core import Agent
from ...core.compose.contexts import Context
from ...core.compose.prompts import Prompt
from ..errors import LoadError, relative
from ..report_types import LoadErrorDict

Progress = Callable[..., None]  # ``Channel.emit``: progress events for the session (see ``wire.py``)


@dataclass(slots=True)
class Target:
    """A prompt or agent found in a module, with where it is defined."""

    id: str
    kind: Literal["prompt", "agent"]
    obj: Any
    module: str
    file: str
    line: int | None
    example_lines: dict[str, int] = field(default_factory=dict)
    ref: str = ""  # the name of the discovered module it was found in (``ModuleRef.name``)

    @property
    def prompt(self) -> Prompt:
        return self.obj if self.kind == "prompt" else self.obj.prompt


@dataclass(slots=True)
class LoadedProject:
    """The targets of a project in discovery order, and the errors met while importing it."""

    root: Path
    targets: list[Target] = field(default_factory=list)
    import_errors: list[LoadErrorDict] = field(default_factory=list)  # one per module that failed
    errors: list[LoadErrorDict] = field(default_factory=list)  # the others (duplicate ids)
    # id() of each context assigned at module level -> (file relative to the root, line)
    context_lines: dict[int, tuple[str, int]] = field(default_factory=dict)

    def find(self, target_id: str) -> Target:
        for target in self.targets:
            if target.id == target_id:
                return target
        known = ", ".join(t.id for t in self.targets) or "none"
        raise KeyError(f"no prompt or agent with id {target_id!r}; known ids: {known}")


@dataclass(frozen=True, slots=True)
class Compiled:
    """One source file, parsed and compiled once: its tree (for lines) and its code (to run it)."""

    source: bytes
    tree: ast.Module | None
    code: CodeType | None


# Path -> the latest parse of that file in this worker (a worker loads one project version).
_compiled: dict[str, Compiled] = {}


def compile_source(path: str, source: bytes) -> Compiled:
    """Parse and compile ``source`` of ``path``, reusing an earlier result for the same bytes."""
    known = _compiled.get(path)
    if known is not None and known.source == source:
        return known
    try:
        tree = ast.parse(source, path)
    except (SyntaxError, ValueError):
        # The import reports it (with its own compile); the lines of this file are unknown.
        compiled = Compiled(source, None, None)
    else:
        code = compile(tree, path, "exec", dont_inherit=True)
        compiled = Compiled(source, tree, code)
    _compiled[path] = compiled
    return compiled


def precompile(paths: list[str]) -> int:
    """Parse and compile project files ahead of a load (in a spare worker); returns how many."""
    done = 0
    for path in paths:
        try:
            compile_source(path, Path(path).read_bytes())
        except OSError:
            continue
        done += 1
    return done


class ProjectSourceLoader(importlib.machinery.SourceFileLoader):
    """Imports a project file through ``compile_source``: parsed once, compiled ahead when unchanged."""

    def source_to_code(self, data: Any, path: Any, *, _optimize: int = -1) -> CodeType:  # type: ignore[override]
        compiled = compile_source(str(path), bytes(data))
        if compiled.code is None:
            return super().source_to_code(data, path)  # raises the SyntaxError with its location
        return compiled.code


def _tree(path: str | None) -> ast.Module | None:
    if not path:
        return None
    try:
        return compile_source(path, Path(path).read_bytes()).tree
    except OSError:
        return None


# id(tree) -> (the tree, its assignment lines, {line: example lines}): a tree is kept per file while
# its source is unchanged, so an update collects the unchanged modules without walking them again.
_tree_facts: dict[int, tuple[ast.Module, dict[str, int], dict[int, dict[str, int]]]] = {}


def _facts(tree: ast.Module) -> tuple[ast.Module, dict[str, int], dict[int, dict[str, int]]]:
    known = _tree_facts.get(id(tree))
    if known is None or known[0] is not tree:
        known = _tree_facts[id(tree)] = (tree, assignment_lines(tree), {})
    return known


def example_lines(source: str | ast.Module | None, line: int | None) -> dict[str, int]:
    """Lines of the example names in ``examples={...}`` of the definition starting at ``line``."""
    if not source or line is None:
        return {}
    if isinstance(source, ast.Module):
        cache = _facts(source)[2]
        if line not in cache:
            cache[line] = _example_lines(source, line)
        return dict(cache[line])
    return _example_lines(source, line)


def _example_lines(source: str | ast.Module, line: int) -> dict[str, int]:
    try:
        tree = ast.parse(source) if isinstance(source, str) else source
    except SyntaxError:
        return {}
    found: dict[str, int] = {}
    for node in tree.body:
        if node.lineno != line:
            continue
        for call in ast.walk(node):
            if not isinstance(call, ast.Call):
                continue
            for keyword in call.keywords:
                if keyword.arg == "examples" and isinstance(keyword.value, ast.Dict):
                    for key in keyword.value.keys:
                        if isinstance(key, ast.Constant) and isinstance(key.value, str):
                            found.setdefault(key.value, key.lineno)
    return found


def assignment_lines(source: str | ast.Module | None) -> dict[str, int]:
    """Module-level names assigned in ``source`` and the line of their (first) assignment."""
    lines: dict[str, int] = {}
    if not source:
        return lines
    try:
        tree = ast.parse(source) if isinstance(source, str) else source
    except SyntaxError:
        return lines
    for node in tree.body:
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        for target in targets:
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    lines.setdefault(name.id, node.lineno)
    return lines


def namespace_name(root: Path | None, path: str) -> str | None:
    """The dotted name plain Python imports ``path`` by from the project root when a folder on the
    way has no ``__init__.py`` (a namespace package: ``agents/support.py`` is ``agents.support``), or
    ``None`` when it has none: a file at the top, a folder that is not an identifier, or a top name
    that is something else (an installed package or module, which Python would import instead)."""
    if root is None or not path:
        return None
    try:
        parts = Path(os.path.realpath(path)).relative_to(os.path.realpath(root)).with_suffix("").parts
    except ValueError:
        return None
    if len(parts) < 2 or not all(part.isidentifier() and not keyword.iskeyword(part) for part in parts):
        return None
    top = sys.modules.get(parts[0])
    if top is not None:
        locations = list(getattr(top, "__path__", None) or [])
    else:
        try:
            spec = importlib.util.find_spec(parts[0])
        except (ImportError, ValueError):
            return None
        locations = list(spec.submodule_search_locations or []) if spec is not None and spec.origin in (None, "namespace") else []
    if not any(_same_file(location, str(Path(root) / parts[0])) for location in locations):
        return None
    return ".".join(parts)


def import_module(ref: dict[str, Any], root: Path | None = None) -> Any:
    """Import one discovered module, freshly, by name or by file path (under its dotted name when it
    sits in a namespace package, so ``from . import x`` works as in plain Python)."""
    name, path = ref["name"], ref["path"]
    if ref.get("package"):
        return importlib.import_module(name)
    dotted = namespace_name(root, path)
    if dotted is not None:
        return _import_in_namespace(dotted, path)
    existing = sys.modules.get(name)
    if existing is not None:
        if _same_file(getattr(existing, "__file__", None), path):
            return existing  # already imported by another project module (``from shared import x``)
        # A project file named like an already imported module (json.py, tokens.py): keep both.
        name = f"crux_project.{name}"
    return _exec_file(name, path)


def _exec_file(name: str, path: str) -> Any:
    """Run the file ``path`` as the new module ``name`` (in ``sys.modules`` unless it raises)."""
    spec = importlib.util.spec_from_file_location(name, path, loader=ProjectSourceLoader(name, path))
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path!r}: not a Python source file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _import_in_namespace(name: str, path: str) -> Any:
    """Import ``path`` as ``name`` inside its (namespace) parent package, as the import system would."""
    existing = sys.modules.get(name)
    if existing is not None and _same_file(getattr(existing, "__file__", None), path):
        return existing  # already imported by a relative import of another project module
    parent, _, child = name.rpartition(".")
    package = importlib.import_module(parent)
    module = _exec_file(name, path)
    setattr(package, child, module)
    return module


def _same_file(a: str | None, b: str) -> bool:
    try:
        return a is not None and Path(a).resolve() == Path(b).resolve()
    except OSError:
        return False


def load_project(root: Path, modules: list[dict[str, Any]], *, skip: set[str] = frozenset(), progress: Progress | None = None) -> LoadedProject:  # type: ignore[assignment]
    """Import every module (but those named in ``skip``) and collect its targets; an error in one
    module does not stop the others. ``progress`` hears of each import as it starts and ends."""
    loaded, errors = import_modules(root, [ref for ref in modules if ref["name"] not in skip], progress=progress)
    project = collect_targets(root, loaded)
    project.import_errors = errors
    return project


def import_modules(
    root: Path, modules: list[dict[str, Any]], *, progress: Progress | None = None, tracker: Any = None
) -> tuple[list[tuple[dict[str, Any], Any]], list[LoadErrorDict]]:
    """Import these modules in order; returns ``(ref, module)`` of each that imported, and the errors
    of the others. ``tracker`` (``graph.Tracker``) is told which module is being imported."""
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    loaded: list[tuple[dict[str, Any], Any]] = []
    errors: list[LoadErrorDict] = []
    for ref in modules:
        file = relative(root, ref["path"]) if ref["path"] else None
        if progress is not None:
            progress("import", module=ref["name"])
        error = None
        before = set(sys.modules) if tracker is not None else set()
        if tracker is not None:
            tracker.current.append(ref["name"])
        try:
            module = import_module(ref, root)
        except (Exception, SystemExit, KeyboardInterrupt) as exc:  # noqa: BLE001 - user code may raise anything
            error = LoadError.from_import(root, exc, ref, file=file).to_dict()
            errors.append(error)
        else:
            loaded.append((ref, module))
            file = relative(root, getattr(module, "__file__", None)) or file
        finally:
            if tracker is not None:
                tracker.current.pop()
                tracker.imported_while(ref["name"], before)
        if progress is not None:
            progress("imported", module=ref["name"], file=file, error=error)
    return loaded, errors


# id(module) -> (the module, the tree of the source it was imported from): a module not imported again
# keeps the lines of the code it runs.
_module_trees: dict[int, tuple[Any, ast.Module | None]] = {}
_relative_paths: dict[str, dict[str, str]] = {}


# id(module) -> (the module, its module-level contexts, prompts and agents as (name, value)): what a
# collection looks at, found once per module object.
_module_items: dict[int, tuple[Any, list[tuple[str, Any]]]] = {}


def _items(module: Any) -> list[tuple[str, Any]]:
    known = _module_items.get(id(module))
    if known is None or known[0] is not module:
        items = [(attr, value) for attr, value in list(vars(module).items()) if isinstance(value, Context) or _kind(value) is not None]
        known = _module_items[id(module)] = (module, items)
    return known[1]


def _module_tree(module: Any, ref: dict[str, Any]) -> ast.Module | None:
    known = _module_trees.get(id(module))
    if known is None or known[0] is not module:
        known = _module_trees[id(module)] = (module, _tree(getattr(module, "__file__", None) or ref["path"]))
    return known[1]


def collect_targets(root: Path, loaded: list[tuple[dict[str, Any], Any]]) -> LoadedProject:
    """The targets and module-level contexts of imported modules, in module order (no user code runs)."""
    project = LoadedProject(root)
    seen: dict[int, Target] = {}
    by_id: dict[str, Target] = {}
    trees = {id(module): _module_tree(module, ref) for ref, module in loaded}
    # Keep only what the modules of this collection use: an old module object must not be kept alive.
    current = {id(module) for _, module in loaded}
    for cache in (_module_trees, _module_items):
        for key in [k for k in cache if k not in current]:
            del cache[key]
    kept = {id(tree) for tree in trees.values() if tree is not None}
    for key in [k for k in _tree_facts if k not in kept]:
        del _tree_facts[key]
    files = _relative_paths.setdefault(str(root), {})  # path -> relative to the root (resolving paths is slow)
    # Pass 1 claims objects for the module that assigns them; pass 2 takes the rest (re-exports).
    for claim_defined in (True, False):
        for ref, module in loaded:
            path = getattr(module, "__file__", None) or ref["path"]
            if path not in files:
                files[path] = relative(root, path) or ""
            tree = trees[id(module)]
            lines = _facts(tree)[1] if tree is not None else {}
            for attr, value in _items(module):
                if claim_defined and isinstance(value, Context) and attr in lines:
                    project.context_lines.setdefault(id(value), (files[path], lines[attr]))
                kind = _kind(value)
                if kind is None or id(value) in seen:
                    continue
                if claim_defined and attr not in lines:
                    continue
                target = Target(str(value.id), kind, value, module.__name__, files[path], lines.get(attr), ref=ref["name"])
                target.example_lines = example_lines(tree, target.line)
                if target.id in by_id:
                    first = by_id[target.id]
                    # The one whose module comes first (modules = [...] order, else file path order)
                    # is shown, whichever was written first; the error is at the one not shown.
                    message = (
                        f"two {kind}s share the id {target.id!r}: {first.file}:{first.line} is shown, "
                        f"{target.file}:{target.line} is not (the module that comes first in discovery "
                        f"order wins); ids must be unique: rename one"
                    )
                    project.errors.append(LoadError.plain("DuplicateIdError", message, file=target.file, line=target.line).to_dict())
                    seen[id(value)] = target
                    continue
                seen[id(value)] = target
                by_id[target.id] = target
                project.targets.append(target)
    order = {ref["name"]: i for i, (ref, _) in enumerate(loaded)}
    project.targets.sort(key=lambda t: (order.get(t.module, 0), t.line or 0))
    return project


def _kind(value: Any) -> Literal["prompt", "agent"] | None:
    if isinstance(value, Prompt):
        return "prompt"
    if isinstance(value, Agent):
        return "agent"
    return None
