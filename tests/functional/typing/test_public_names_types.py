"""The public names derived from the core's one table keep their real types for type checkers,
strict ones included (``X as X`` re-exports), from ``crux_devtools`` as from ``crux_devtools.core``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from test_types import mypy_cache_dir, sample_file

REPO = Path(__file__).resolve().parents[3]


def test_strict_mypy_sees_every_public_name_with_its_type() -> None:
    import crux_devtools.core as core

    lines = ["import crux_devtools", "import crux_devtools.core"]
    lines += [f"reveal_type(crux_devtools.{name})" for name in core.__all__]
    lines += ["from crux_devtools import prompt", "wrong: int = prompt"]
    sample = sample_file("uses_public_names.py", "\n".join(lines) + "\n")
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", f"--cache-dir={mypy_cache_dir('test_public_names_types')}",
         "--no-error-summary", str(sample)],
        capture_output=True, text=True, cwd=REPO, timeout=600,
    )
    revealed = [line for line in proc.stdout.splitlines() if "Revealed type is" in line]
    assert len(revealed) == len(core.__all__), proc.stdout
    assert not [line for line in revealed if line.endswith('"Any"')], proc.stdout  # every name has its real type
    assert "does not explicitly export" not in proc.stdout
    assert 'Incompatible types in assignment (expression has type "def prompt(' in proc.stdout


def test_the_public_names_are_listed_once_in_the_cores_table() -> None:
    """Neither ``__init__`` spells ``__all__`` out: both derive it from ``_SOURCES``."""
    import ast

    import crux_devtools
    import crux_devtools.core as core

    for path in ("crux_devtools/__init__.py", "crux_devtools/core/__init__.py"):
        tree = ast.parse((REPO / path).read_text())
        literal = [
            node for node in ast.walk(tree)
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
            and isinstance(node.value, (ast.List, ast.Tuple))
        ]
        assert literal == [], path
    assert core.__all__ == [name for names in core._SOURCES.values() for name in names]
    assert crux_devtools.__all__ == core.__all__
