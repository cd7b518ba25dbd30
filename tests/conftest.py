"""Shared fixtures and the suite's layout. Each area keeps its own helpers in its own module; this file stays small.

The tests are grouped by layer, one folder each (``core``, ``review``, ``inspector``, ``web``,
``browser``, ``tui``, ``cli``, ``repo``, ``typing``); a folder's own ``conftest.py`` holds the fixtures
only its tests use. The helpers every layer shares (``waits``, the fakes, ``web_conftest_helpers``)
live here in ``tests/``. This folder and every layer folder are on ``sys.path``, so a helper, or a
test module another test borrows from (``from test_tui import settle``), is imported by its bare
name from anywhere; test file names are therefore unique across the folders.

``pytest -m "not slow"`` is the inner loop. It leaves out every test marked ``slow``: one that starts
worker processes, a CLI, tmux, a browser, mypy or a whole Textual app, and takes seconds. A module
whose tests all do is listed in ``SLOW_MODULES`` (one place, rather than a marker in each file);
a single slow test in a quick module carries ``@pytest.mark.slow`` itself or is in ``SLOW_TESTS``;
a ``browser`` test is always slow.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# Compiled modules are cached even where PYTHONDONTWRITEBYTECODE is set: otherwise each test process
# rewrites every test module's asserts anew (about 7 s of CPU), and each command or worker a test
# starts compiles the package again; with the cache they read it.
sys.dont_write_bytecode = False

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
LAYERS = ("core", "review", "inspector", "web", "browser", "tui", "cli", "repo", "typing")
for _folder in (TESTS, *(TESTS / layer for layer in LAYERS)):
    if str(_folder) not in sys.path:
        sys.path.append(str(_folder))

SLOW_MODULES = frozenset({
    # real worker processes (ProjectSession, WorkerProcess)
    "test_session.py", "test_session_runs.py", "test_incremental.py", "test_worker.py", "test_isolation.py",
    "test_report_contract.py", "test_report_sent.py", "test_orphans.py", "test_web_sse.py", "test_web_hostile_input.py",
    # the crux-devtools command in a subprocess
    "test_cli.py", "test_cli_sent.py", "test_cli_runs.py", "test_check.py", "test_load_errors.py", "test_record_demo.py",
    "test_history_unavailable.py", "test_expectations_cli.py", "test_pytest_plugin.py", "test_mcp.py", "test_mcp_http.py",
    # the Textual app under a pilot (some over a real session)
    "test_tui.py", "test_tui_markup.py", "test_tui_nav.py", "test_tui_request.py", "test_tui_runs.py",
    "test_tui_runs_layout.py", "test_tui_snapshots.py", "test_tui_real_session.py",
    # mypy over the package and the typing examples
    "test_types.py",
})
SLOW_TESTS = frozenset({
    # each starts Python or crux-devtools in other processes
    "test_readme.py::test_every_python_example_in_the_readme_runs_and_its_assertions_hold",
    "test_memory_store.py::test_two_processes_writing_a_thousand_entries_each_lose_nothing",
    "test_memory_scoring.py::test_get_context_on_two_connections_while_another_process_writes",
    "test_sample_project.py::test_crux_devtools_check_passes_on_the_sample_project",
    "test_sample_project.py::test_the_tour_cannot_drift_from_the_code",
    "test_sample_project.py::test_the_sample_examples_show_each_case_the_readme_tour_promises",
    "test_tokens.py::test_a_damaged_or_stale_cache_is_rebuilt_and_an_unwritable_one_is_skipped",
    "test_history.py::test_a_session_answers_the_previous_version_from_the_file_after_edits_back_and_forth",
    "test_recording.py::test_the_environment_variable_turns_recording_on_at_the_first_run_not_at_import",
    "test_runstore.py::test_three_writer_processes_at_once_lose_nothing",
    "test_tokens.py::test_a_cache_file_with_one_flipped_bit_falls_back_to_tiktoken_and_is_rewritten",
    "test_readme.py::test_the_readme_serve_command_serves_the_sample_project",
    "test_readme.py::test_the_readmes_inspect_example_runs_as_written",
    "test_memory_assembly.py::test_the_block_never_exceeds_the_budget_and_every_candidate_is_accounted_for",
    "test_vocabulary.py::test_the_web_panel_and_the_tui_panel_show_the_same_limit_rows_for_the_same_report",
})


def names_only_files(config: pytest.Config) -> bool:
    """Whether the command names test files (``tests/core/test_tokens.py``, ``...::test_x``) and no folder."""
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


def is_slow(item: pytest.Item) -> bool:
    if item.get_closest_marker("slow") is not None or item.get_closest_marker("browser") is not None:
        return True
    module = item.path.name
    return module in SLOW_MODULES or f"{module}::{item.name.split('[', 1)[0]}" in SLOW_TESTS


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if is_slow(item) and item.get_closest_marker("slow") is None:
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def repo_root() -> Path:
    return REPO
