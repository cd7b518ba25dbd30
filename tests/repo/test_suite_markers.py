"""The suite's layout holds: the inner loop's list of slow tests names tests that exist (a stale name
would quietly do nothing), and every test file sits in a layer folder under a name no other has."""

from __future__ import annotations

import re
from pathlib import Path
from types import ModuleType

import pytest

TESTS = Path(__file__).resolve().parents[1]


@pytest.fixture
def root_conftest(pytestconfig: pytest.Config) -> ModuleType:
    module = pytestconfig.pluginmanager.get_plugin(str(TESTS / "conftest.py"))
    assert isinstance(module, ModuleType)
    return module


def all_test_files() -> list[Path]:
    return [path for path in TESTS.rglob("test_*.py") if "projects" not in path.relative_to(TESTS).parts]


def test_every_slow_module_and_test_named_in_conftest_exists(root_conftest: ModuleType) -> None:
    found = {path.name: path for path in all_test_files()}
    assert sorted(root_conftest.SLOW_MODULES - found.keys()) == []
    for entry in root_conftest.SLOW_TESTS:
        module, name = entry.split("::")
        assert re.search(rf"^(async )?def {re.escape(name)}\(", found[module].read_text(), re.M), entry


def test_every_test_file_is_in_a_layer_folder_under_a_name_of_its_own(root_conftest: ModuleType) -> None:
    paths = all_test_files()
    outside = [str(path.relative_to(TESTS)) for path in paths if path.parent.parent != TESTS or path.parent.name not in root_conftest.LAYERS]
    assert outside == [], f"move these into one of the folders {root_conftest.LAYERS}"
    names = [path.name for path in paths]
    assert sorted({name for name in names if names.count(name) > 1}) == []
