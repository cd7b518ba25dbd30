"""The reload rules as pure functions over frozen values: what a change calls for, and what stays
shown stale. No processes, no files: each case is a row of a table. The process tests
(test_incremental.py, test_isolation.py, test_verify.py) check that a live session applies them."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from crux_devtools.inspector.session.reload_rules import (
    Change,
    Changes,
    Decision,
    Full,
    Held,
    Incremental,
    VerifyOnly,
    concerns,
    decide,
    last_good,
    sort_changes,
    was_read,
)

HELD = Held(
    worker_alive=True,
    same_modules=True,
    has_report=True,
    module_files=frozenset({"alpha.py", "beta.py", "gamma.py", "reader.py"}),
    imported=frozenset({"alpha.py", "beta.py", "gamma.py", "reader.py", "common.py"}),
    watched={"notes/guide.md": ["reader"], "skills/": ["alpha"], ".env": ["alpha"]},
)
BETA_BROKEN = {"broken": frozenset({"beta"}), "holds_stale": frozenset({"beta"})}
BETA = frozenset({"beta"})

# case, changed files, what differs from HELD, the decision
DECISIONS: list[tuple[str, list[str], dict[str, Any], Decision]] = [
    ("a save to one module", ["beta.py"], {}, Incremental()),
    ("a shared module other modules import", ["common.py"], {}, Incremental()),
    ("a data file a module read at import", ["notes/guide.md"], {}, Incremental()),
    ("an entry of a folder a module listed", ["skills/billing"], {}, Incremental()),
    # the held worker then compares the libraries it imported with the disk and answers "load in full"
    ("a save while a library outside the project changed", ["beta.py"], {}, Incremental()),
    ("files no module imported or read", ["notes/other.md", "README.txt"], {}, VerifyOnly("no module imported or read notes/other.md, README.txt")),
    ("more than three of them", ["a.txt", "b.txt", "c.txt", "d.txt"], {}, VerifyOnly("no module imported or read a.txt, b.txt, c.txt…")),
    ("a new file a module's `try: import` was waiting for", ["extra_rules.py"], {}, VerifyOnly("no module imported or read extra_rules.py")),
    ("a .py file read as data (reads of .py files are not recorded)", ["template.py"], {}, VerifyOnly("no module imported or read template.py")),
    ("a new .py file while a module is broken: it may be what the module lacked", ["extra_rules.py"], BETA_BROKEN,
     Incremental(retry=BETA, keep_stale=BETA, protect=BETA)),
    ("a save to another module while one is broken: the broken one stays stale", ["alpha.py"], BETA_BROKEN,
     Incremental(keep_stale=BETA, protect=BETA)),
    ("the fix of a broken module the held worker holds the last good version of (the worker answers: load in full)",
     ["beta.py"], BETA_BROKEN, Incremental(keep_stale=BETA, protect=BETA)),
    ("a broken module saved again with an edit to a healthy one", ["alpha.py", "beta.py"], BETA_BROKEN,
     Incremental(keep_stale=BETA, protect=BETA)),
    ("the fix of a broken module an older worker holds the last good version of", ["beta.py"], {"broken": BETA},
     Incremental(keep_stale=BETA)),
    ("a healthy module's save with a broken module and a data file", ["alpha.py", "notes/guide.md"], {"broken": frozenset({"gamma"})},
     Incremental(keep_stale=frozenset({"gamma"}))),
    ("pyproject.toml", ["pyproject.toml", "alpha.py"], {}, Full("pyproject.toml changed")),
    ("a module added, removed or renamed", ["delta.py"], {"same_modules": False}, Full("a module was added, removed or renamed")),
    ("a module that hung or ended a worker", ["alpha.py"], {"faulted": BETA, "broken": BETA}, Full("beta hung or ended a worker")),
    ("an update that ended the worker: no worker holds the project", ["beta.py"], {"worker_alive": False}, Full("no worker holds the project")),
    ("no report shown yet", ["alpha.py"], {"has_report": False}, Full("no report is shown yet")),
    ("no file named (reload())", [], {}, Full("a full load was asked for")),
]


@pytest.mark.parametrize(("case", "files", "held", "expected"), DECISIONS, ids=[row[0] for row in DECISIONS])
def test_decide(case: str, files: list[str], held: dict[str, Any], expected: Decision) -> None:
    assert decide(Change(tuple(files)), dataclasses.replace(HELD, **held)) == expected


def test_a_full_load_asked_for_is_one_whatever_changed() -> None:
    assert decide(Change(("alpha.py",), full=True), HELD) == Full("a full load was asked for")


# case, the modules kept stale, the modules the update imported again, the modules still broken
STILL_BROKEN: list[tuple[str, frozenset[str], list[str], frozenset[str]]] = [
    ("a save to another module: the broken one stays broken", BETA, ["alpha"], BETA),
    ("a save that imports nothing again", BETA, [], BETA),
    ("the broken module imported again: its new result decides", BETA, ["beta", "alpha"], frozenset()),
    ("two broken, one imported again", frozenset({"beta", "gamma"}), ["gamma"], BETA),
    ("nothing broken", frozenset(), ["beta"], frozenset()),
]


@pytest.mark.parametrize(("case", "keep", "reimported", "expected"), STILL_BROKEN, ids=[row[0] for row in STILL_BROKEN])
def test_still_broken(case: str, keep: frozenset[str], reimported: list[str], expected: frozenset[str]) -> None:
    assert Incremental(keep_stale=keep).still_broken(reimported) == expected


def prompts(*ids: str) -> list[Any]:
    return [{"id": i, "line": n} for n, i in enumerate(ids, 1)]


OLD = {"a": prompts("alpha"), "b": prompts("beta", "beta2"), "c": prompts("gamma")}

# case, broken modules, this load's current prompts by module, expected stale (module, id), expected last good ids by
# module (of the modules a, b, c, d; d never had a prompt)
LAST_GOOD: list[tuple[str, set[str], dict[str, list[str]], list[tuple[str, str]], dict[str, list[str]]]] = [
    ("a healthy load: nothing stale, the current prompts are the last good ones",
     set(), {"a": ["alpha"], "b": ["beta"], "c": ["gamma", "delta"]}, [], {"a": ["alpha"], "b": ["beta"], "c": ["gamma", "delta"], "d": []}),
    ("a broken module shows its last good prompts, stale, and keeps them",
     {"b"}, {"a": ["alpha"], "c": ["gamma"]}, [("b", "beta"), ("b", "beta2")], {"a": ["alpha"], "b": ["beta", "beta2"], "c": ["gamma"], "d": []}),
    ("its prompt a healthy module has now is not shown twice",
     {"b"}, {"a": ["alpha", "beta2"], "c": ["gamma"]}, [("b", "beta")], {"a": ["alpha", "beta2"], "b": ["beta", "beta2"], "c": ["gamma"], "d": []}),
    ("a broken module that never loaded well shows nothing",
     {"d"}, {"a": ["alpha"], "b": ["beta"], "c": ["gamma"]}, [], {"a": ["alpha"], "b": ["beta"], "c": ["gamma"]}),
    ("every module broken (no worker finished): all last good prompts, in module order",
     {"a", "b", "c"}, {}, [("a", "alpha"), ("b", "beta"), ("b", "beta2"), ("c", "gamma")], {"a": ["alpha"], "b": ["beta", "beta2"], "c": ["gamma"], "d": []}),
    ("a fixed module's current prompts replace its last good ones",
     set(), {"a": ["alpha"], "b": ["beta3"], "c": ["gamma"]}, [], {"a": ["alpha"], "b": ["beta3"], "c": ["gamma"], "d": []}),
]


@pytest.mark.parametrize(("case", "broken", "current", "stale", "known"), LAST_GOOD, ids=[row[0] for row in LAST_GOOD])
def test_last_good(case: str, broken: set[str], current: dict[str, list[str]], stale: list[tuple[str, str]], known: dict[str, list[str]]) -> None:
    now = [p for ids in current.values() for p in prompts(*ids)]
    owners = {i: module for module, ids in current.items() for i in ids}
    found = last_good(["a", "b", "c", "d"], frozenset(broken), OLD, now, owners)
    assert [(module, p["id"]) for module, p in found.stale] == stale
    assert {module: [p["id"] for p in ps] for module, ps in found.known.items()} == known
    for module, p in found.stale:  # the last good report itself, not a copy
        assert any(p is q for q in OLD[module])


IGNORE = ["scratch/", "*.cache.txt", "*.toml"]
# case, changed files, files the worker's own code wrote, the sorted changes
SORTED: list[tuple[str, list[str], list[str], Changes]] = [
    ("a module", ["beta.py"], [], Changes(wanted=("beta.py",))),
    ("a new Python file", ["delta.py"], [], Changes(wanted=("delta.py",))),
    ("pyproject.toml, even when an ignore pattern matches it", ["pyproject.toml"], [], Changes(wanted=("pyproject.toml",))),
    ("a data file a module read, a folder's entry", ["notes/guide.md", "skills/new.md"], [], Changes(wanted=("notes/guide.md", "skills/new.md"))),
    ("a .env file read at import", [".env"], [], Changes(wanted=(".env",))),
    ("logs, databases, files no module read", ["app.log", "data.db", "notes/other.md"], [], Changes(unseen=("app.log", "data.db", "notes/other.md"))),
    ("a file a prompt checks exists, created; a symlink re-pointed", ["flags/beta.on", "current.md"], [],
     Changes(unseen=("flags/beta.on", "current.md"))),
    ("ignored files and folders", ["scratch/notes.py", "big.cache.txt", "other.toml"], [], Changes()),
    ("the echo of a file the worker's code wrote", ["status.txt", "cache.py", "README"], ["status.txt", "cache.py"], Changes(unseen=("README",))),
    ("an echo named with Windows separators", ["logs\\beat.txt"], ["logs/beat.txt"], Changes()),
]


@pytest.mark.parametrize(("case", "files", "echoes", "expected"), SORTED, ids=[row[0] for row in SORTED])
def test_sort_changes(case: str, files: list[str], echoes: list[str], expected: Changes) -> None:
    assert sort_changes(files, watched=HELD.watched, ignore=IGNORE, echoes=echoes) == expected


def test_a_file_in_a_listed_folder_counts_as_read() -> None:
    assert was_read("skills/new.md", HELD.watched) and was_read("notes/guide.md", HELD.watched)
    assert not was_read("notes/other.md", HELD.watched) and not was_read("top.md", HELD.watched)
    assert was_read("top.md", {"./": ["m"]})
    assert concerns("notes\\guide.md", HELD.watched, []) and not concerns("notes/guide.md", HELD.watched, ["notes/"])
