"""What the held worker loaded, as one value (``loaded.Loaded``): what a full load and an update leave
for the next change, what ``reload_rules.decide`` is handed, what primes the next spare, and which
store writes count. No processes: test_incremental.py and test_verify_stores.py check a live session."""

from __future__ import annotations

import os
from pathlib import Path
from typing import cast

from crux_devtools.inspector.report_types import LoadErrorDict, PromptReport, Report
from crux_devtools.inspector.session.discovery import ModuleRef
from crux_devtools.inspector.session.load import LoadOutcome
from crux_devtools.inspector.session.loaded import Loaded, keep_broken, module_files, store_states
from crux_devtools.inspector.session.reload_rules import Incremental

ROOT = Path("/project")
ALPHA = ModuleRef("alpha", str(ROOT / "alpha.py"))
BETA = ModuleRef("beta", str(ROOT / "pkg" / "beta.py"))
IMPORTED = ModuleRef("pkg.gamma", str(ROOT / "pkg" / "gamma.py"), package=True)


def outcome(*, worker: object = None, kind: str = "full", broken: frozenset[str] = frozenset(), errors: list[LoadErrorDict] | None = None,
            reimported: list[str] | None = None) -> LoadOutcome:
    return LoadOutcome(
        [], errors or [], {}, broken, worker, preload=["pydantic"], counted={"texts": ["t"], "separated": []}, kind=kind,  # type: ignore[arg-type]
        watched={"data.json": ["alpha"]}, imported=["alpha.py"], faulted=frozenset({"slow"}), reimported=reimported or [],
    )


def error(file: str) -> LoadErrorDict:
    return cast(LoadErrorDict, {"file": file, "line": 1, "type": "ImportError", "message": file})


def test_a_full_load_sets_the_module_list_faults_and_what_primes_the_spare() -> None:
    after = Loaded(ignore=["*.log"], note="two files").after(outcome(worker=object()), stores={}, full=[ALPHA, IMPORTED])
    assert after.modules == [ALPHA, IMPORTED] and after.faulted == {"slow"}
    assert after.files == [ALPHA.path]  # only the modules imported by path are compiled ahead
    assert (after.preload, after.counted) == (["pydantic"], {"texts": ["t"], "separated": []})
    assert (after.watched, after.imported) == ({"data.json": ["alpha"]}, frozenset({"alpha.py"}))
    assert (after.ignore, after.note) == (["*.log"], "two files")  # set before the load, kept


def test_a_full_load_no_worker_finished_keeps_the_last_libraries_and_counted_texts() -> None:
    before = Loaded(preload=["httpx"], counted=None)
    after = before.after(outcome(worker=None), stores={}, full=[ALPHA])
    assert (after.preload, after.counted, after.modules) == (["httpx"], None, [ALPHA])


def test_an_update_keeps_the_module_list_and_faults_of_the_last_full_load() -> None:
    before = Loaded(modules=[ALPHA], faulted=frozenset(), files=["x.py"], preload=["httpx"])
    after = before.after(outcome(worker=object(), kind="incremental", broken=frozenset({"alpha"})), stores={"s.db": None})
    assert (after.modules, after.faulted, after.files, after.preload) == ([ALPHA], frozenset(), ["x.py"], ["httpx"])
    assert after.broken == {"alpha"} and after.stores == {"s.db": None}
    assert before.broken == frozenset() and before.stores == {}  # a value: the state before is as it was


def test_what_the_rules_are_handed_compares_the_module_list_and_names_files_from_the_root() -> None:
    loaded = Loaded(modules=[ALPHA, BETA], imported=frozenset({"alpha.py"}), broken=frozenset({"beta"}))
    held = loaded.holding([ALPHA, BETA], ROOT, worker_alive=True, has_report=True, holds_stale=frozenset({"beta"}))
    assert held.same_modules and held.worker_alive and held.has_report and held.holds_stale == {"beta"}
    assert held.module_files == {"alpha.py", os.path.join("pkg", "beta.py")} and held.broken == {"beta"}
    assert not loaded.holding([ALPHA], ROOT, worker_alive=True, has_report=True, holds_stale=frozenset()).same_modules
    assert not Loaded().holding([], ROOT, worker_alive=False, has_report=False, holds_stale=frozenset()).same_modules  # nothing loaded yet
    assert module_files([ModuleRef("ns", "")], ROOT) == frozenset()  # a module with no file


def test_an_update_leaves_the_broken_modules_it_did_not_import_again_broken_with_their_errors() -> None:
    shown = cast(Report, {"errors": [error("alpha.py"), error(os.path.join("pkg", "beta.py"))]})
    decision = Incremental(keep_stale=frozenset({"alpha", "beta"}))
    fresh = error("gamma.py")
    kept = keep_broken(outcome(errors=[fresh], reimported=["beta"]), decision, [ALPHA, BETA], ROOT, shown)
    assert kept.broken == {"alpha"} and kept.errors == [error("alpha.py"), fresh]
    every = outcome(reimported=["alpha", "beta"])
    assert keep_broken(every, decision, [ALPHA, BETA], ROOT, shown) is every  # both imported again: the update as it is
    nothing_shown = outcome()
    assert keep_broken(nothing_shown, decision, [ALPHA, BETA], ROOT, None) is nothing_shown  # no report shown: no error to keep


def test_the_spare_is_primed_with_the_counted_texts_else_the_texts_of_the_report_shown() -> None:
    loaded = Loaded(preload=["pydantic"], files=["a.py"], counted={"texts": ["counted"], "separated": [["x", "\n"]]})
    assert loaded.prime_request(ROOT, None) == {
        "root": str(ROOT), "modules": ["pydantic"], "files": ["a.py"], "texts": ["counted"], "separated": [["x", "\n"]],
    }
    inspection = {"parts": [{"text": "Part."}], "system": "You help.", "prompt": ""}
    prompt = cast(PromptReport, {"id": "a", "examples": [{"name": "e", "inspection": inspection, "truncated": False}]})
    texts = Loaded().prime_request(ROOT, cast(Report, {"prompts": [prompt], "errors": []}))
    assert (texts["texts"], texts["separated"], texts["modules"]) == (["Part.", "You help."], [], [])
    assert Loaded().prime_request(ROOT, None)["texts"] == []


def test_a_store_the_project_reads_counts_when_written_not_when_only_opened(tmp_path: Path) -> None:
    (tmp_path / "notes.sqlite3").write_bytes(b"one")
    (tmp_path / "other.sqlite3").write_bytes(b"one")
    watched = {"notes.sqlite3": ["alpha"], "folder/": ["alpha"]}
    loaded = Loaded(watched=watched, stores=store_states(tmp_path, watched))
    assert list(loaded.stores) == ["notes.sqlite3"]  # a folder listed is not a store
    assert not loaded.reads_store(tmp_path, "notes.sqlite3")  # as loaded: opened and closed
    assert not loaded.reads_store(tmp_path, "other.sqlite3")  # no module read it
    (tmp_path / "notes.sqlite3").write_bytes(b"written")
    assert loaded.reads_store(tmp_path, "notes.sqlite3")
    assert not loaded.reads_store(tmp_path, "notes.sqlite3")  # said once per write
