"""Run every benchmark in this folder, one after another: .venv/bin/python benchmarks/run.py [NAME ...]

Each benchmark prints ratios measured in its own run. Pass names (e.g. ``resolver planner``) to run
only those.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    wanted = set(argv)
    failures = 0
    for path in sorted(HERE.glob("bench_*.py")):
        name = path.stem.removeprefix("bench_")
        if wanted and name not in wanted:
            continue
        print(f"== {name} ==", flush=True)
        failures += subprocess.run([sys.executable, str(path)], cwd=HERE.parent).returncode != 0
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
