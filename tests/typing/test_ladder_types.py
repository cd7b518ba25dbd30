"""Runs mypy on ``ladder_misuse.py``: every illegal ladder is a type error, every legal one is not."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
SAMPLE = HERE / "ladder_misuse.py"


def test_mypy_rejects_exactly_the_illegal_ladders() -> None:
    lines = SAMPLE.read_text().splitlines()
    expected = {n for n, line in enumerate(lines, start=1) if "# expect-error" in line}
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--follow-imports=silent", "--no-incremental", "--hide-error-context", "--no-error-summary", str(SAMPLE)],
        capture_output=True,
        text=True,
        cwd=HERE.parents[1],
        timeout=300,
    )
    reported = {int(m.group(1)) for m in re.finditer(r"ladder_misuse\.py:(\d+): error", proc.stdout)}
    assert expected, "the sample must mark some lines"
    assert reported == expected, proc.stdout + proc.stderr
