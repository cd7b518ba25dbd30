"""The package type-checks: it ships py.typed, so its annotations are a promise to users."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_mypy_finds_no_errors_in_the_package() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--follow-imports=silent", "--no-incremental", "crux_devtools"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
