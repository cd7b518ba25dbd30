"""The suite's layout holds: every test file sits in a tier's layer folder under a name no other
has, the tiers are told apart by folder alone (no hand-kept list of slow tests to drift), and a
functional test is marked slow while a unit test is not."""

from __future__ import annotations

import re
from pathlib import Path
from types import ModuleType

import pytest

TESTS = Path(__file__).resolve().parents[2]


@pytest.fixture
def root_conftest(pytestconfig: pytest.Config) -> ModuleType:
    module = pytestconfig.pluginmanager.get_plugin(str(TESTS / "conftest.py"))
    assert isinstance(module, ModuleType)
    return module


def all_test_files() -> list[Path]:
    return [path for path in TESTS.rglob("test_*.py") if "projects" not in path.relative_to(TESTS).parts]


def test_every_test_file_is_in_a_tiers_layer_folder_under_a_name_of_its_own(root_conftest: ModuleType) -> None:
    paths = all_test_files()
    outside = [
        str(path.relative_to(TESTS)) for path in paths
        if path.parent.parent.parent != TESTS or path.parent.parent.name not in root_conftest.TIERS or path.parent.name not in root_conftest.LAYERS
    ]
    assert outside == [], f"move these into tests/<tier>/<layer>/, tier one of {root_conftest.TIERS}, layer one of {root_conftest.LAYERS}"
    names = [path.name for path in paths]
    assert sorted({name for name in names if names.count(name) > 1}) == []
    assert {path.parent.parent.name for path in paths} == set(root_conftest.TIERS)


def test_the_tiers_are_told_apart_by_folder_and_nothing_else(root_conftest: ModuleType) -> None:
    assert not hasattr(root_conftest, "SLOW_MODULES") and not hasattr(root_conftest, "SLOW_TESTS")
    marked = re.compile(r"^\s*(@pytest\.mark\.slow|pytestmark\b.*\bslow\b)", re.M)
    unit_markers = [str(p.relative_to(TESTS)) for p in (TESTS / "unit").rglob("test_*.py") if marked.search(p.read_text(encoding="utf-8"))]
    assert unit_markers == [], "a slow test belongs in tests/functional/"


def test_a_functional_test_is_slow_and_a_unit_test_is_not(request: pytest.FixtureRequest, root_conftest: ModuleType) -> None:
    assert request.node.get_closest_marker("slow") is None
    assert root_conftest.tier_of(request.node) == "unit"
