"""The layers import one way: core <- review <- inspector <- (web | tui) <- mcp_server <- cli, web and
tui never each other; inside the inspector, the transport and the worker keep to their side."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from test_import_cycles import parsed

PACKAGE = Path(__file__).resolve().parents[3] / "crux_devtools"

FORBIDDEN = {
    "core": {"inspector", "review", "web", "tui", "mcp_server", "cli"},
    "review": {"inspector", "web", "tui", "mcp_server", "cli"},
    "inspector": {"web", "tui", "mcp_server", "cli"},
    "web": {"tui", "mcp_server", "cli"},
    "tui": {"web", "mcp_server", "cli"},
    # The MCP server answers with the CLI's JSON documents, built by the CLI's own functions: it may
    # import those modules of cli/ (MCP_READS_FROM_CLI), never a command that starts it.
    "mcp_server": {"tui"},
    "cli": set(),  # on top: it may import every layer, and no layer imports it (but mcp_server, above)
}
MCP_READS_FROM_CLI = {"common", "diff", "cache", "replay"}

def imported_layers(path: Path) -> set[tuple[str, int]]:
    """The crux_devtools sub-packages a module imports (absolute or relative), with the line."""
    tree = parsed(path)
    package_parts = path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1]
    found: set[tuple[str, int]] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(package_parts[: len(package_parts) - node.level + 1])
                module = ".".join(base + ([node.module] if node.module else []))
                names = [module] + [f"{module}.{alias.name}" for alias in node.names] if not node.module else [module]
            else:
                names = [node.module or ""]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "crux_devtools" and len(parts) > 1:
                found.add((parts[1], node.lineno))
    return found


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_each_layer_imports_only_the_layers_below_it(layer: str) -> None:
    offences = [
        f"{path.relative_to(PACKAGE.parent)}:{line} imports crux_devtools.{target}"
        for path in sorted((PACKAGE / layer).rglob("*.py"))
        for target, line in sorted(imported_layers(path))
        if target in FORBIDDEN[layer]
    ]
    assert offences == []


def imported_modules_of(path: Path) -> set[tuple[str, int]]:
    """The crux_devtools modules (or packages) a module imports, absolute or relative, with the line;
    ``from .x import y`` names ``x`` and ``x.y`` (either may be the module)."""
    tree = parsed(path)
    package_parts = path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1]
    if path.name == "__init__.py":
        package_parts = path.relative_to(PACKAGE.parent).parts[:-1]
    found: set[tuple[str, int]] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package_parts[: len(package_parts) - node.level + 1])
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            names = [module, *(f"{module}.{alias.name}" for alias in node.names)]
        else:
            continue
        found |= {(name, node.lineno) for name in names if name.startswith("crux_devtools.")}
    return found


def test_the_mcp_server_reads_only_the_document_modules_of_the_cli() -> None:
    offences = [
        f"{path.relative_to(PACKAGE.parent)}:{line} imports {name}"
        for path in sorted((PACKAGE / "mcp_server").rglob("*.py"))
        for name, line in sorted(imported_modules_of(path))
        if name.startswith("crux_devtools.cli.") and name.split(".")[2] not in MCP_READS_FROM_CLI
        and (PACKAGE / "cli" / f"{name.split('.')[2]}.py").exists()
    ]
    assert offences == []
    reads = {name.split(".")[2] for path in (PACKAGE / "mcp_server").rglob("*.py") for name, _ in imported_modules_of(path) if name.startswith("crux_devtools.cli.")}
    assert MCP_READS_FROM_CLI <= reads, "a module of MCP_READS_FROM_CLI the MCP server no longer imports: drop it from the table"


# Inside the inspector, by what runs where. The transport starts and talks to worker processes: it
# knows nothing of the session that uses it or of the features. The worker runs in its own process:
# it never reaches back into the transport, and reads the session's modules only for the few things
# both processes read from the project folder (INSPECTOR_EXCEPTIONS). Features span both sides.
INSPECTOR_MUST_NOT = {
    "transport": {"session", "features"},
    "worker": {"session", "transport"},
    "features": {"transport"},
}
INSPECTOR_EXCEPTIONS = {
    # the worker's import graph records each file's (mtime, size) as the watcher compares them
    ("worker/graph.py", "session/watcher.py"),
    # the project's pyproject settings, read alike by the worker and the server
    ("worker/main.py", "session/discovery.py"),  # allow_network, in the worker before user code runs
    ("worker/planned.py", "session/discovery.py"),  # which modules, and the model profiles
    # the project's state folder (.crux), where the summaries store sits beside the history
    ("worker/planning.py", "session/history.py"),
    # the one check of a request against its op's shape, made by the sender and again by the worker
    ("worker/main.py", "transport/wire.py"),
}


def inspector_offences() -> list[tuple[str, str, int]]:
    """(importer, imported, line) for each import of INSPECTOR_MUST_NOT, paths relative to inspector/."""
    root = PACKAGE / "inspector"
    found = []
    for folder, banned in INSPECTOR_MUST_NOT.items():
        for path in sorted((root / folder).rglob("*.py")):
            for name, line in sorted(imported_modules_of(path)):
                parts = name.split(".")
                if parts[:2] != ["crux_devtools", "inspector"] or len(parts) < 3 or parts[2] not in banned:
                    continue
                target = root.joinpath(*parts[2:])
                where = f"{target.relative_to(root)}.py" if target.with_suffix(".py").exists() else (f"{target.relative_to(root)}/__init__.py" if target.is_dir() else None)
                if where is not None:
                    found.append((str(path.relative_to(root)), where, line))
    return found


def test_the_inspector_folders_keep_to_their_side() -> None:
    offences = [f"inspector/{a}:{line} imports inspector/{b}" for a, b, line in inspector_offences() if (a, b) not in INSPECTOR_EXCEPTIONS]
    assert offences == []


def test_inspector_exceptions_are_still_needed() -> None:
    used = {(a, b) for a, b, _ in inspector_offences()}
    assert sorted(INSPECTOR_EXCEPTIONS - used) == []


def test_the_inspector_checker_sees_an_import_against_the_rules() -> None:
    # the worker reads the history module for its state folder, inside a function
    found = {name for name, _ in imported_modules_of(PACKAGE / "inspector" / "worker" / "planning.py")}
    assert "crux_devtools.inspector.session.history" in found
    assert ("worker/planning.py", "session/history.py") in {(a, b) for a, b, _ in inspector_offences()}


def test_the_checker_sees_relative_imports() -> None:
    sample = PACKAGE / "web" / "app.py"
    layers = {target for target, _line in imported_layers(sample)}
    assert "inspector" in layers or "core" in layers


def private_core_imports(path: Path) -> list[str]:
    """The underscore names a module outside the core imports from it (``from ..core.x import _y``)."""
    tree = parsed(path)
    package_parts = path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1]
    found: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            module = ".".join([*package_parts[: len(package_parts) - node.level + 1], *([node.module] if node.module else [])])
        else:
            module = node.module or ""
        if module.split(".")[:2] != ["crux_devtools", "core"]:
            continue
        found += [f"{path.relative_to(PACKAGE.parent)}:{node.lineno} imports {module}.{a.name}" for a in node.names if a.name.startswith("_")]
    return found


def test_nothing_outside_the_core_imports_a_private_name_of_it() -> None:
    outside = [p for p in sorted(PACKAGE.rglob("*.py")) if p.relative_to(PACKAGE).parts[0] != "core"]
    assert [offence for path in outside for offence in private_core_imports(path)] == []


# Inside the core, the folders follow the data: compose -> plan -> run, and run hands each step to
# record. The shared modules at the top of the core are below every stage. Module-level and in-function
# imports count (the graph of tests/unit/repo/test_import_cycles.py); type-only imports do not.
SHARED = {"__init__", "errors", "contract", "tools", "tokens", "encoding_cache", "lazy_sqlite", "migrations"}
STAGE_MAY_IMPORT = {
    "shared": {"shared"},
    "compose": {"shared", "compose"},
    "memory": {"shared", "compose", "memory"},
    "plan": {"shared", "compose", "plan"},
    "record": {"shared", "compose", "plan", "record"},
    "run": {"shared", "compose", "plan", "record", "run"},
}
# Known imports against the order, each loaded inside one function only when it runs.
STAGE_EXCEPTIONS = {
    # a prompt's ``model=`` may be a ModelCapacityProfile: checked when the prompt is defined
    ("crux_devtools.core.compose.prompts", "crux_devtools.core.plan.budget"),
}


def stage_of(module: str) -> str:
    """``crux_devtools.core.plan.planner`` -> ``plan``; a module at the top of the core -> ``shared``."""
    parts = module.split(".")
    if len(parts) == 2:
        return "shared"
    if parts[2] in STAGE_MAY_IMPORT:
        return parts[2]
    assert len(parts) == 3 and parts[2] in SHARED, f"{module} is neither in a stage folder nor a shared module"
    return "shared"


def test_every_core_module_is_in_a_stage_or_shared() -> None:
    from test_import_cycles import core_modules

    stray = [name for name in core_modules() if len(name.split(".")) == 3 and name.split(".")[2] not in SHARED | set(STAGE_MAY_IMPORT)]
    assert stray == []
    assert {stage_of(name) for name in core_modules()} == set(STAGE_MAY_IMPORT)


def test_core_stages_import_only_earlier_stages() -> None:
    from test_import_cycles import import_graph

    offences = [
        f"{module} ({stage_of(module)}) imports {target} ({stage_of(target)})"
        for module, targets in sorted(import_graph().items())
        for target in sorted(targets)
        if stage_of(target) not in STAGE_MAY_IMPORT[stage_of(module)] and (module, target) not in STAGE_EXCEPTIONS
    ]
    assert offences == []


def test_stage_exceptions_are_still_needed() -> None:
    from test_import_cycles import import_graph

    graph = import_graph()
    assert [pair for pair in sorted(STAGE_EXCEPTIONS) if pair[1] not in graph.get(pair[0], set())] == []


def test_stage_packages_import_nothing() -> None:
    """The server process reads light modules of ``record`` and ``plan``: their ``__init__`` must
    not load anything (pydantic, the planner) on the way."""
    heavy = [
        f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"
        for stage in ("compose", "plan", "run", "record")
        for path in [PACKAGE / "core" / stage / "__init__.py"]
        for node in ast.walk(parsed(path))
        if isinstance(node, (ast.Import, ast.ImportFrom))
    ]
    assert heavy == []
