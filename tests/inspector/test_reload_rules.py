"""The reload decision as a pure function: what a change calls for, from a frozen picture of what the
session holds. No processes, no files."""

from __future__ import annotations

import dataclasses

from crux_devtools.inspector.reload_rules import Full, Held, Incremental, VerifyOnly, decide, was_read

HELD = Held(
    worker_alive=True,
    same_modules=True,
    has_report=True,
    module_files=frozenset({"alpha.py", "beta.py", "reader.py"}),
    imported=frozenset({"alpha.py", "beta.py", "reader.py", "common.py"}),
    watched={"notes/guide.md": ["reader"], "skills/": ["alpha"]},
    broken=frozenset({"beta"}),
)


def test_a_module_a_shared_file_or_a_file_a_module_read_is_an_update() -> None:
    for changed in (["alpha.py"], ["common.py"], ["notes/guide.md"], ["skills/billing"]):
        assert decide(changed, HELD) == Incremental(), changed


def test_a_python_file_no_module_imported_retries_the_broken_modules() -> None:
    assert decide(["extra_rules.py"], HELD) == Incremental(frozenset({"beta"}))
    healthy = dataclasses.replace(HELD, broken=frozenset())
    assert isinstance(decide(["extra_rules.py"], healthy), VerifyOnly)  # no update: a fresh load checks it


def test_a_file_no_module_imported_or_read_is_only_verified() -> None:
    decision = decide(["MAINTENANCE", "notes/other.md"], HELD)
    assert isinstance(decision, VerifyOnly) and "MAINTENANCE" in decision.reason


def test_what_the_held_worker_cannot_take_is_a_full_load() -> None:
    cases = {
        "pyproject.toml changed": (["pyproject.toml", "alpha.py"], HELD),
        "no worker holds the project": (["alpha.py"], dataclasses.replace(HELD, worker_alive=False)),
        "a module was added, removed or renamed": (["delta.py"], dataclasses.replace(HELD, same_modules=False)),
        "gamma hung or ended a worker": (["alpha.py"], dataclasses.replace(HELD, faulted=frozenset({"gamma"}))),
        "no report is shown yet": (["alpha.py"], dataclasses.replace(HELD, has_report=False)),
    }
    for reason, (files, held) in cases.items():
        assert decide(files, held) == Full(reason), reason
    assert decide(["alpha.py"], HELD, full=True) == Full("a full load was asked for")
    assert decide([], HELD) == Full("a full load was asked for")


def test_a_file_in_a_listed_folder_counts_as_read() -> None:
    assert was_read("skills/new.md", HELD.watched) and was_read("notes/guide.md", HELD.watched)
    assert not was_read("notes/other.md", HELD.watched) and not was_read("top.md", HELD.watched)
    assert was_read("top.md", {"./": ["m"]})
