"""``diff`` against an oracle (``benchmarks/bench_diff_oracle.py``): for each kind of edit, applied to a
real git repository, the status of every example equals what two plain ``inspect --json`` runs at the
two revisions say (literal request and status), and every changed example names its change.

Both commands run in this process with in-process workers (``cli_in_process``: the same answers as
worker processes, ``test_transport_parity.py``); ``diff`` as a process is ``test_diff_cli.py``'s and
``test_diff_repositories.py``'s."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from cli_in_process import cli

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
from bench_diff_oracle import GENERATED_EDITS, SAMPLE_EDITS, run_oracle  # noqa: E402

pytestmark = [pytest.mark.slow]

# edits whose answer depends on how a revision's files are read (names, submodules, files beside the code)
REPOSITORY_KINDS = {"non-ASCII file name", "submodule edit", "data file (skill)"}


def _check(tmp_path: Path, names: set[str]) -> None:
    outcomes = run_oracle(tmp_path, names, cli)
    assert {o.name for o in outcomes} == names
    wrong = {o.name: o.disagreements + [f"no named change: {u}" for u in o.unnamed] for o in outcomes if o.disagreements or o.unnamed}
    assert wrong == {}
    assert sum(o.changed for o in outcomes) > 0  # the edits did change requests


def test_diff_agrees_with_the_oracle_on_every_kind_of_prompt_edit(tmp_path: Path) -> None:
    names = {e.name for e in SAMPLE_EDITS + GENERATED_EDITS} - REPOSITORY_KINDS
    assert len(names) >= 20
    _check(tmp_path, names)


def test_diff_agrees_with_the_oracle_on_non_ascii_names_submodules_and_data_files(tmp_path: Path) -> None:
    _check(tmp_path, REPOSITORY_KINDS)
