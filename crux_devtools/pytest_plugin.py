"""pytest plugin (entry point ``pytest11``): assert what a prompt's plan decides, with no model call.

- ``crux_plan(target, example=None, input=None, budget=None, model=None)`` (a fixture) plans one
  request and returns a frozen ``PlannedRequest``; ``target`` is a prompt or agent object, or an id
  found in the project at pytest's rootdir.
- ``@pytest.mark.crux_examples("ID")`` runs the test once per example of that target, with the
  fixture ``crux_example`` (``.name``, ``.input``).

It imports nothing of the library until a test uses one of them: a test suite that does not pays
only for reading this file.
"""

from __future__ import annotations

from typing import Any

import pytest

_PROJECT = pytest.StashKey[Any]()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "crux_examples(id): run the test once per example of that prompt or agent, with the crux_example fixture"
    )


def _project(config: pytest.Config) -> Any:
    project = config.stash.get(_PROJECT, None)
    if project is None:
        from crux_devtools.inspector.worker.planned import Project

        project = config.stash[_PROJECT] = Project(config.rootpath)
    return project


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    marker = metafunc.definition.get_closest_marker("crux_examples")
    if marker is None:
        return
    if len(marker.args) != 1 or not isinstance(marker.args[0], str):
        raise pytest.UsageError(f"{metafunc.definition.nodeid}: @pytest.mark.crux_examples takes one prompt or agent id, got {marker.args!r}")
    if "crux_example" not in metafunc.fixturenames:
        raise pytest.UsageError(f"{metafunc.definition.nodeid}: @pytest.mark.crux_examples({marker.args[0]!r}) needs the crux_example argument")
    target = marker.args[0]
    try:
        examples = _project(metafunc.config).examples(target)
    except LookupError as exc:
        raise pytest.UsageError(f"{metafunc.definition.nodeid}: {exc}") from None
    if not examples:
        reason = f"{target!r} has no examples (and its input has required fields): add examples={{...}} to its definition"
        metafunc.parametrize("crux_example", [pytest.param(None, marks=pytest.mark.skip(reason=reason))], ids=["no-examples"])
        return
    metafunc.parametrize("crux_example", examples, ids=[e.name for e in examples])


@pytest.fixture
def crux_example() -> Any:
    """One example of the target named by ``@pytest.mark.crux_examples("ID")`` (parametrized there)."""
    raise pytest.UsageError("the crux_example fixture comes with @pytest.mark.crux_examples(\"ID\") on the test")


@pytest.fixture
def crux_plan(request: pytest.FixtureRequest) -> Any:
    """``crux_plan(target, example=None, input=None, budget=None, model=None) -> PlannedRequest``."""
    project = _project(request.config)

    def plan(target: Any, example: Any = None, input: Any = None, budget: int | None = None, model: Any = None) -> Any:
        if example is not None and not isinstance(example, str):
            example = getattr(example, "name", example)  # a crux_example
        return project.plan(target, example=example, input=input, budget=budget, model=model)

    return plan
