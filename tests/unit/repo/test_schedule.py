"""The suite's files start longest first (``tests/schedule.py``), grouped, each file's own order kept."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import schedule

TESTS = Path(__file__).resolve().parents[2]


@dataclass
class Item:
    nodeid: str


def test_files_run_longest_first_and_keep_their_own_order() -> None:
    items = [Item(n) for n in (
        "tests/unit/core/test_a.py::one", "tests/functional/tui/test_b.py::one", "tests/unit/core/test_a.py::two",
        "tests/functional/typing/test_c.py::only", "tests/functional/tui/test_b.py::two",
    )]
    seconds = {"tests/functional/typing/test_c.py": 70.0, "tests/functional/tui/test_b.py": 9.0}
    got = [i.nodeid for i in schedule.longest_first(items, seconds)]
    assert got == [
        "tests/functional/typing/test_c.py::only",
        "tests/functional/tui/test_b.py::one", "tests/functional/tui/test_b.py::two",
        "tests/unit/core/test_a.py::one", "tests/unit/core/test_a.py::two",
    ]


def test_a_file_without_a_figure_is_guessed_from_its_tier_and_its_tests() -> None:
    items = [Item("tests/unit/core/test_u.py::x")] * 30 + [Item("tests/functional/cli/test_new.py::x"), Item("tests/functional/cli/test_known.py::x")]
    got = [i.nodeid for i in schedule.longest_first(items, {"tests/functional/cli/test_known.py": 1.0})]
    # the new functional file (one test: 2 s guessed), then 30 unit tests (1.5 s guessed), then the known 1 s one
    assert got == ["tests/functional/cli/test_new.py::x", *["tests/unit/core/test_u.py::x"] * 30, "tests/functional/cli/test_known.py::x"]


def test_the_figures_are_read_back_from_a_durations_log(tmp_path: Path) -> None:
    log = "\n".join([
        "============================== slowest durations ===============================",
        "12.50s call     tests/functional/tui/test_b.py::test_one",
        "0.70s setup    tests/functional/tui/test_b.py::test_one",
        "3.00s teardown tests/functional/cli/test_c.py::test_two[param::x]",
        "(12 durations < 0.005s hidden.)",
    ])
    seconds = schedule.seconds_from_log(log)
    assert seconds == {"tests/functional/tui/test_b.py": 13.2, "tests/functional/cli/test_c.py": 3.0}
    schedule.write_seconds(seconds, tmp_path / "s.txt")
    assert schedule.read_seconds(tmp_path / "s.txt") == seconds


def test_the_kept_figures_parse_and_name_test_files() -> None:
    seconds = schedule.read_seconds()
    assert seconds, "tests/file_seconds.txt is missing or empty: see tests/schedule.py to measure it"
    assert all(name.startswith("tests/") and name.endswith(".py") and value >= 0 for name, value in seconds.items())
