"""The order the suite's files start in: the longest first, so no long file starts last.

pytest-xdist gives each of its processes a whole file at a time (``--dist loadfile``), in the order
of the collection (``--no-loadscope-reorder``; by default it would order files by their number of
tests, which puts a one-test file that runs mypy for a minute at the very end). A long file that
starts last ends the run alone while the other processes wait. So the files are sorted by how long
each took when the suite last ran, kept in ``file_seconds.txt`` beside this module; a file missing
from it (new, or renamed) is guessed from its tier and its number of tests.

The figures only order the run: a stale one costs a little time, never a wrong result. To measure
them again, run the suite with ``--durations=0 --durations-min=0`` into a log and give the log to
this module::

    .venv/bin/python -m pytest --durations=0 --durations-min=0 > /tmp/suite.log
    .venv/bin/python tests/schedule.py /tmp/suite.log
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

HERE = Path(__file__).resolve().parent
SECONDS_FILE = HERE / "file_seconds.txt"
# a guess per test for a file the figures do not name: a functional test starts real parts
GUESS = {"functional": 2.0, "unit": 0.05}
_DURATION = re.compile(r"^\s*([\d.]+)s (?:setup|call|teardown)\s+(\S+?\.py)::")


class _Item(Protocol):
    nodeid: str


def read_seconds(path: Path = SECONDS_FILE) -> dict[str, float]:
    """``{"tests/functional/tui/test_tui.py": 39.3, ...}`` from ``file_seconds.txt`` (none if it is missing)."""
    if not path.exists():
        return {}
    seconds: dict[str, float] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            value, name = line.split(maxsplit=1)
            seconds[name.strip()] = float(value)
    return seconds


def file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def longest_first(items: Sequence[_Item], seconds: dict[str, float]) -> list[_Item]:
    """``items`` grouped by file (each file's own order kept), the files in descending expected time."""
    counts = Counter(file_of(item.nodeid) for item in items)

    def expected(name: str) -> float:
        if name in seconds:
            return seconds[name]
        tier = name.split("/")[1] if name.count("/") >= 2 else "unit"
        return GUESS.get(tier, GUESS["functional"]) * counts[name]

    first_seen = {name: i for i, name in reversed(list(enumerate(file_of(item.nodeid) for item in items)))}
    ordered_files = sorted(counts, key=lambda name: (-expected(name), first_seen[name]))
    place = {name: i for i, name in enumerate(ordered_files)}
    return sorted(items, key=lambda item: place[file_of(item.nodeid)])  # sorted() is stable


def seconds_from_log(text: str) -> dict[str, float]:
    """Each file's total of setup, call and teardown times in a ``--durations=0`` log."""
    totals: Counter[str] = Counter()
    for line in text.splitlines():
        match = _DURATION.match(line)
        if match:
            totals[match.group(2)] += float(match.group(1))
    return dict(totals)


def write_seconds(seconds: dict[str, float], path: Path = SECONDS_FILE) -> None:
    lines = ["# seconds per test file when the suite last ran (tests/schedule.py): only the order of the run depends on it"]
    lines += [f"{value:8.1f} {name}" for name, value in sorted(seconds.items(), key=lambda kv: (-kv[1], kv[0])) if value >= 0.5]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: tests/schedule.py SUITE_LOG (a pytest log written with --durations=0 --durations-min=0)")
    measured = seconds_from_log(Path(sys.argv[1]).read_text(encoding="utf-8"))
    if not measured:
        raise SystemExit(f"{sys.argv[1]} holds no durations: run pytest with --durations=0 --durations-min=0")
    write_seconds(measured)
    print(f"{len(measured)} files, {sum(measured.values()):.0f} s in all, written to {SECONDS_FILE}")
