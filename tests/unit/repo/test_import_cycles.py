"""The modules of crux_devtools, every package of it, import each other without cycles.

The graph is built from the source by AST: every ``import`` and ``from ... import`` anywhere in a
module counts, including the ones inside functions (a function-level import is still a dependency;
it only hides the cycle from the interpreter until the function runs). Imports under
``if TYPE_CHECKING:`` are left out: they never run, and the core ``__init__`` names every module
there for type checkers only. For the cycle check, importing ``a.b.c`` from outside ``a.b`` also
counts as importing the packages ``a.b`` and ``a`` (their ``__init__`` runs first). A name looked up
by string (``importlib.import_module``, the CLI's command table) is no import: that is how the
CLI's group names its commands without depending on them.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "crux_devtools"
CORE = PACKAGE / "core"


@cache
def parsed(path: Path) -> ast.Module:
    """The syntax tree of a module of the package, parsed once per test process: every check here
    and in test_layers.py walks the same few hundred files, and none changes a tree."""
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def core_modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(CORE.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement in ``tree`` except those under ``if TYPE_CHECKING:``."""
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def imported_modules(path: Path, known: set[str]) -> set[str]:
    """The modules of ``known`` that ``path`` imports (``from . import x`` counts as importing submodule ``x``)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = parsed(path)
    out: set[str] = set()
    for node in _imports(tree):
        if isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        else:
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            candidates = [f"{target}.{alias.name}" for alias in node.names if f"{target}.{alias.name}" in known] or [target]
        for candidate in candidates:
            while candidate and candidate not in known:  # ``a.b.c`` where only ``a.b`` is a module
                candidate = candidate.rpartition(".")[0]
            if candidate and candidate != name:
                out.add(candidate)
    return out


@cache  # the checks only read the graph
def import_graph() -> dict[str, set[str]]:
    """The core's modules and what each imports (of the core, ``crux_devtools.shapes`` and the like)."""
    known = set(package_modules())
    return {name: imported_modules(path, known) for name, path in core_modules().items()}


@cache
def package_graph() -> dict[str, set[str]]:
    """Every module of the package and what it imports, the packages above an imported module
    included (``a.b.c`` brings ``a.b`` and ``a``) unless the importer is inside them already."""
    modules = package_modules()
    known = set(modules)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        direct = imported_modules(path, known)
        parents = {
            ".".join(target.split(".")[:i])
            for target in direct
            for i in range(1, target.count(".") + 1)
        }
        graph[name] = direct | {p for p in parents if p in known and p != name and not name.startswith(p + ".")}
    return graph


def cyclic_groups(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other round in a circle (the strongly connected
    components of more than one module, or of one that imports itself), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's algorithm
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1 or node in graph.get(node, ()):
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(groups)


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as ``[a, b, ..., a]``, or ``None`` when it is acyclic."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle is not None:
                    return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle is not None:
                return cycle
    return None


def test_the_core_modules_import_each_other_without_a_cycle() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle in crux_devtools.core: " + " -> ".join(cycle or [])


def test_the_whole_package_imports_without_a_cycle() -> None:
    graph = package_graph()
    groups = cyclic_groups(graph)
    shown = [" -> ".join(find_cycle({m: graph[m] & set(g) for m in g}) or g) for g in groups]
    assert shown == [], f"{len(groups)} group(s) of modules import each other in a circle: " + "; ".join(shown)


def test_the_package_graph_sees_the_cli_and_its_users() -> None:
    graph = package_graph()
    assert "crux_devtools.cli.common" in graph["crux_devtools.mcp_server.tools"]  # inside a method
    assert "crux_devtools.cli" in graph["crux_devtools.mcp_server.tools"]  # the package above it
    assert "crux_devtools.cli.common" in graph["crux_devtools.cli.inspect"]
    # The group lists its commands by name in a table: it imports none of their modules.
    assert {m for m in graph["crux_devtools.cli"] if m.startswith("crux_devtools.cli.")} == set()


def test_a_group_of_modules_that_import_each_other_is_found() -> None:
    graph = {"a": {"b"}, "b": {"c", "d"}, "c": {"a"}, "d": set(), "e": {"e"}, "f": {"d"}}
    assert cyclic_groups(graph) == [["a", "b", "c"], ["e"]]
    assert cyclic_groups({"a": {"b"}, "b": set()}) == []
    # A submodule that imports its own package (``from . import main``) while the package imports it
    # back at its bottom: the registration the CLI used to do.
    tree = {"pkg": {"pkg.diff"}, "pkg.diff": {"pkg"}}
    assert cyclic_groups(tree) == [["pkg", "pkg.diff"]]


def test_the_graph_counts_function_level_and_relative_imports() -> None:
    graph = import_graph()
    assert "crux_devtools.core.plan.planner" in graph["crux_devtools.core.run.runtime"]  # a module-level relative import
    assert "crux_devtools.core.record.recording" in graph["crux_devtools.core.run.runtime"]  # ``from . import recording``
    assert "crux_devtools.core.tokens" in graph["crux_devtools.core.memory.store"]  # ``from ..tokens import``
    # The core __init__ names every module only under TYPE_CHECKING (and loads them by string), so no edges.
    assert graph["crux_devtools.core"] == set()


def test_a_function_level_import_cycle_is_found_and_printed(tmp_path: Path) -> None:
    source = "def f():\n    from .b import g\n    return g\n"
    path = tmp_path / "a.py"
    path.write_text(source, encoding="utf-8")
    tree = ast.parse(source)
    assert [type(n).__name__ for n in _imports(tree)] == ["ImportFrom"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_type_checking_imports_are_left_out() -> None:
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .x import y\nelse:\n    from .z import w\n")
    assert [n.module for n in _imports(tree) if isinstance(n, ast.ImportFrom)] == ["typing", "z"]


def test_memory_assembly_reads_no_private_name_of_another_object() -> None:
    # It is handed a public ``Source`` (snapshot, scoring helper, counter) by the store, instead of
    # calling the store's private methods.
    path = CORE / "memory" / "assembly.py"
    tree = parsed(path)
    private = sorted(
        f"line {node.lineno}: .{node.attr}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
    )
    assert private == []
    assert "crux_devtools.core.memory.store" not in import_graph()["crux_devtools.core.memory.assembly"]
