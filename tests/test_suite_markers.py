"""The inner loop's list of slow tests names tests that exist (a stale name would quietly do nothing)."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import SLOW_MODULES, SLOW_TESTS

TESTS = Path(__file__).resolve().parent


def test_every_slow_module_and_test_named_in_conftest_exists() -> None:
    found = {path.name for path in TESTS.rglob("test_*.py")}
    assert sorted(SLOW_MODULES - found) == []
    for entry in SLOW_TESTS:
        module, name = entry.split("::")
        assert re.search(rf"^(async )?def {re.escape(name)}\(", (TESTS / module).read_text(), re.M), entry
