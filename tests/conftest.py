"""Shared fixtures and the suite's layout. Each area keeps its own helpers in its own module; this file stays small.

The tests are in two tiers, each grouped by layer (``core``, ``review``, ``inspector``, ``web``,
``browser``, ``tui``, ``cli``, ``repo``, ``typing``):

- ``tests/unit/``: the inner loop (``pytest tests/unit``). A unit test starts no process, opens no
  socket and runs no Textual app, from its body, its fixtures or a thread: ``tier_guard.py`` refuses
  each, and the refusal says to move the test to the functional tier.
- ``tests/functional/``: everything that starts real parts: worker processes, the CLI in a
  subprocess, uvicorn, tmux, Chromium, mypy, a whole Textual app under a pilot. Each is marked
  ``slow`` here, so ``-m "not slow"`` is the unit tier too.

A folder's own ``conftest.py`` holds the fixtures only its tests use. The helpers every layer shares
(``waits``, the fakes, ``web_conftest_helpers``, ``web_client``) live here in ``tests/``. This
folder and every tier's layer folder are on ``sys.path``, so a helper, or a test module another
test borrows from (``from test_tui import settle``), is imported by its bare name from anywhere;
test file names are therefore unique across the folders.
"""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path

import pytest

import schedule
from tier_guard import no_processes_or_sockets

# Compiled modules are cached even where PYTHONDONTWRITEBYTECODE is set: otherwise each test process
# rewrites every test module's asserts anew (about 7 s of CPU), and each command or worker a test
# starts compiles the package again; with the cache they read it.
sys.dont_write_bytecode = False

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
TIERS = ("unit", "functional")
LAYERS = ("core", "review", "inspector", "web", "browser", "tui", "cli", "repo", "typing")
for _folder in (TESTS, *(TESTS / tier / layer for tier in TIERS for layer in LAYERS)):
    if str(_folder) not in sys.path:
        sys.path.append(str(_folder))

pytest_plugins = ("web_client",)  # the ``client`` fixture over a module's ``session``, in both tiers


def names_only_files(config: pytest.Config) -> bool:
    """Whether the command names test files (``tests/functional/core/test_tokens.py``, ``...::test_x``) and no folder."""
    root = config.invocation_params.dir
    return all((root / arg.split("::", 1)[0]).is_file() for arg in config.args)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """The whole suite, a layer or the inner loop run in the worker processes ``addopts`` asks for; a
    command naming single test files runs them in this process (starting the workers costs more than
    it saves), unless the command line itself says ``-n``."""
    explicit = any(arg.startswith(("-n", "--numprocesses")) for arg in config.invocation_params.args)
    if not explicit and not hasattr(config, "workerinput") and names_only_files(config):
        config.option.numprocesses = 0
        config.option.dist = "no"
        config.option.tx = []


def tier_of(item: pytest.Item) -> str | None:
    """``unit`` or ``functional``: the folder under ``tests/`` the item's file is in."""
    parts = item.path.relative_to(TESTS).parts if item.path.is_relative_to(TESTS) else ()
    return parts[0] if parts and parts[0] in TIERS else None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every functional test is ``slow`` (so ``-m "not slow"`` is the unit tier too); the files run
    longest first (``schedule.py``: a long file started last would end the run alone)."""
    for item in items:
        if tier_of(item) == "functional" and item.get_closest_marker("slow") is None:
            item.add_marker(pytest.mark.slow)
    items[:] = schedule.longest_first(items, schedule.read_seconds())


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection built (every test module, the package and its libraries imported) is moved out
    of the collector's sight: otherwise each full collection a test triggers walks that whole heap
    again (tens of milliseconds each, several per Textual app). What the tests make stays collected."""
    gc.collect()
    gc.freeze()


def guarded(item: pytest.Item) -> bool:
    """A unit test runs under the guard; ``CRUX_GUARD_ALL=1`` puts every test under it, to find the
    functional tests that could be unit tests (see ``_VIOLATED``)."""
    return tier_of(item) == "unit" or GUARD_ALL


GUARD_ALL = os.environ.get("CRUX_GUARD_ALL") == "1"
# With CRUX_GUARD_ALL=1, a file's first violation is written to CRUX_GUARD_LOG and the rest of the file
# is skipped (it is a functional file): the run then lists the files and takes minutes, not an hour.
_VIOLATED: set[Path] = set()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> object:
    report = yield
    if GUARD_ALL and call.excinfo is not None and "TierViolation" in str(call.excinfo.typename) + repr(call.excinfo.value):
        _VIOLATED.add(item.path)
        with open(os.environ.get("CRUX_GUARD_LOG", "/dev/null"), "a", encoding="utf-8") as log:
            log.write(f"{item.path}\t{item.nodeid}\t{call.excinfo.value}\n")
    return report


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> object:
    if not guarded(item):
        return (yield)
    if GUARD_ALL and item.path in _VIOLATED:
        pytest.skip("this file already started a process or opened a socket")
    with no_processes_or_sockets():
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> object:
    if not guarded(item):
        return (yield)
    with no_processes_or_sockets():
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> object:
    try:
        if not guarded(item):
            return (yield)
        with no_processes_or_sockets():
            return (yield)
    finally:
        forget_textual_renders()


def forget_textual_renders() -> None:
    """Let the test's Textual app go whole. Textual keeps the last 1,024 widget style caches of the
    process, with every line they rendered, in a cache of one method (``StylesCache.get_inner_outer``,
    keyed by the style cache itself): after a few apps that is some 400,000 objects that every full
    collection of a later test walks again."""
    styles_cache = sys.modules.get("textual._styles_cache")  # only where an app ran: imports nothing
    if styles_cache is not None:
        styles_cache.StylesCache.get_inner_outer.cache_clear()


@pytest.fixture
def repo_root() -> Path:
    return REPO
