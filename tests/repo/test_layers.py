"""The layers import one way: core <- review <- inspector <- (web | tui), and web and tui never each other."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "crux_devtools"

FORBIDDEN = {
    "core": {"inspector", "review", "web", "tui", "cli"},
    "review": {"inspector", "web", "tui", "cli"},
    "inspector": {"web", "tui", "cli"},
    "web": {"tui", "cli"},
    "tui": {"web", "cli"},
}


def imported_layers(path: Path) -> set[tuple[str, int]]:
    """The crux_devtools sub-packages a module imports (absolute or relative), with the line."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
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


def test_the_checker_sees_relative_imports() -> None:
    sample = PACKAGE / "web" / "app.py"
    layers = {target for target, _line in imported_layers(sample)}
    assert "inspector" in layers or "core" in layers


def private_core_imports(path: Path) -> list[str]:
    """The underscore names a module outside the core imports from it (``from ..core.x import _y``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
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
# imports count (the graph of tests/repo/test_core_cycles.py); type-only imports do not.
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
    from test_core_cycles import core_modules

    stray = [name for name in core_modules() if len(name.split(".")) == 3 and name.split(".")[2] not in SHARED | set(STAGE_MAY_IMPORT)]
    assert stray == []
    assert {stage_of(name) for name in core_modules()} == set(STAGE_MAY_IMPORT)


def test_core_stages_import_only_earlier_stages() -> None:
    from test_core_cycles import import_graph

    offences = [
        f"{module} ({stage_of(module)}) imports {target} ({stage_of(target)})"
        for module, targets in sorted(import_graph().items())
        for target in sorted(targets)
        if stage_of(target) not in STAGE_MAY_IMPORT[stage_of(module)] and (module, target) not in STAGE_EXCEPTIONS
    ]
    assert offences == []


def test_stage_exceptions_are_still_needed() -> None:
    from test_core_cycles import import_graph

    graph = import_graph()
    assert [pair for pair in sorted(STAGE_EXCEPTIONS) if pair[1] not in graph.get(pair[0], set())] == []


def test_stage_packages_import_nothing() -> None:
    """The server process reads light modules of ``record`` and ``plan``: their ``__init__`` must
    not load anything (pydantic, the planner) on the way."""
    heavy = [
        f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"
        for stage in ("compose", "plan", "run", "record")
        for path in [PACKAGE / "core" / stage / "__init__.py"]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, (ast.Import, ast.ImportFrom))
    ]
    assert heavy == []
