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
