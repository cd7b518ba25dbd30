"""The held report's merge rules as a pure value: what a load makes of the report shown. No
processes, no files: each load is a ``LoadOutcome`` written out here. The process tests
(test_session.py, test_incremental.py, test_verify.py) check that a live session applies them."""

from __future__ import annotations

from typing import Any, cast

import pytest

from crux_devtools.inspector.report_types import LoadErrorDict, PromptReport, Report
from crux_devtools.inspector.session.held_report import EMPTY_NOTICE, HeldReport, Merged
from crux_devtools.inspector.session.load import LoadOutcome

MODULES = ["alpha", "beta"]
NOW = "2026-01-01T00:00:00+00:00"


def prompt(prompt_id: str, line: int, system: str) -> PromptReport:
    return cast(PromptReport, {"id": prompt_id, "line": line, "file": f"{prompt_id}.py", "examples": [{"name": "empty", "system": system}]})


def error(file: str, message: str, traceback: str = "Traceback ...") -> LoadErrorDict:
    return cast(LoadErrorDict, {"file": file, "line": 2, "type": "ValueError", "message": message, "traceback": traceback})


def outcome(*prompts: PromptReport, broken: frozenset[str] = frozenset(), errors: list[LoadErrorDict] | None = None,
            kind: str = "full", owners: dict[str, str] | None = None) -> LoadOutcome:
    found = owners if owners is not None else {p["id"]: p["id"] for p in prompts}
    return LoadOutcome(list(prompts), errors or [], found, broken, None, duration_ms=12.0, kind=kind,  # type: ignore[arg-type]
                       reevaluated=[p["id"] for p in prompts])


def show(held: HeldReport, load: LoadOutcome, modules: list[str] = MODULES, **facts: Any) -> HeldReport:
    merged = held.merge(load, modules)
    return merged.shown(load, **{"project": "/p", "generated_at": NOW, "found_modules": True, "verified": True, "disagreements": 0, "imported_note": None, **facts})


def shown(held: HeldReport) -> Report:
    assert held.report is not None
    return held.report


def by_id(held: HeldReport) -> dict[str, dict[str, Any]]:
    return {p["id"]: cast(dict[str, Any], p) for p in shown(held)["prompts"]}


FIRST = outcome(prompt("beta", 3, "Beta one."), prompt("alpha", 9, "Alpha one."))


def test_the_first_load_is_version_one_in_module_order_and_nothing_is_stale() -> None:
    held = show(HeldReport(), FIRST)
    report = shown(held)
    assert (report["version"], report["stale"], report["errors"], report["load"], report["notice"]) == (1, False, [], "full", None)
    assert [(p["id"], p["stale"]) for p in report["prompts"]] == [("alpha", False), ("beta", False)]  # modules' order, not the load's
    assert held.known == {"alpha": [FIRST.prompts[1]], "beta": [FIRST.prompts[0]]}
    assert "stale" not in FIRST.prompts[0]  # the load's own reports are left as they are: the report shows copies


def test_a_broken_module_keeps_its_last_good_prompts_marked_stale() -> None:
    held = show(HeldReport(), FIRST)
    failed = outcome(prompt("alpha", 9, "Alpha two."), broken=frozenset({"beta"}), errors=[error("beta.py", "broken on purpose")])
    merged = held.merge(failed, MODULES)
    assert merged.stale == ("beta",)
    after = merged.shown(failed, project="/p", generated_at=NOW, found_modules=True, verified=False, disagreements=0, imported_note=None)
    prompts = by_id(after)
    assert prompts["beta"]["stale"] is True and prompts["beta"]["examples"][0]["system"] == "Beta one."
    assert prompts["alpha"]["stale"] is False and prompts["alpha"]["examples"][0]["system"] == "Alpha two."
    assert shown(after)["stale"] is True and [e["file"] for e in shown(after)["errors"]] == ["beta.py"]
    assert after.known["beta"] == [FIRST.prompts[0]]  # still its last good version
    # Broken again, whatever else is saved: still the same last good version.
    again = show(after, outcome(prompt("alpha", 9, "Alpha three."), broken=frozenset({"beta"}), errors=[error("beta.py", "still broken")]))
    assert by_id(again)["beta"]["examples"][0]["system"] == "Beta one." and by_id(again)["beta"]["stale"] is True


def test_a_fixed_module_replaces_its_stale_prompts_with_its_fresh_ones() -> None:
    broken = show(show(HeldReport(), FIRST), outcome(prompt("alpha", 9, "Alpha one."), broken=frozenset({"beta"}), errors=[error("beta.py", "x")]))
    fixed = show(broken, outcome(prompt("beta", 3, "Beta fixed."), prompt("alpha", 9, "Alpha one.")))
    prompts = by_id(fixed)
    assert (prompts["beta"]["stale"], prompts["beta"]["examples"][0]["system"]) == (False, "Beta fixed.")
    assert (shown(fixed)["stale"], shown(fixed)["errors"]) == (False, [])
    assert [p["examples"][0]["system"] for p in fixed.known["beta"]] == ["Beta fixed."]


def test_a_broken_module_that_never_loaded_shows_nothing_stale() -> None:
    held = show(HeldReport(), outcome(prompt("alpha", 9, "Alpha one."), broken=frozenset({"beta"}), errors=[error("beta.py", "x")]))
    assert [p["id"] for p in shown(held)["prompts"]] == ["alpha"] and not shown(held)["stale"]


def test_the_hash_changes_exactly_when_the_content_does_and_the_version_with_every_load_shown() -> None:
    one = show(HeldReport(), FIRST)
    same = show(one, outcome(prompt("beta", 3, "Beta one."), prompt("alpha", 9, "Alpha one.")))  # equal content, new objects
    assert shown(same)["hash"] == shown(one)["hash"] and shown(same)["version"] == 2
    assert same.merge(FIRST, MODULES).changed == []
    edit = outcome(prompt("beta", 3, "Beta two."), prompt("alpha", 9, "Alpha one."))
    merged = same.merge(edit, MODULES)
    assert merged.changed == ["beta"]  # only the prompt whose content changed
    edited = merged.shown(edit, project="/p", generated_at=NOW, found_modules=True, verified=True, disagreements=0, imported_note=None)
    assert shown(edited)["hash"] != shown(same)["hash"] and shown(edited)["version"] == 3
    # Not when or how fast: another time and duration, the same hash.
    later = show(edited, outcome(prompt("beta", 3, "Beta two."), prompt("alpha", 9, "Alpha one.")), generated_at="2027-01-01T00:00:00+00:00")
    assert shown(later)["hash"] == shown(edited)["hash"]


def test_an_error_changes_the_hash_but_names_no_changed_prompt() -> None:
    clean = show(HeldReport(), FIRST)
    failing = show(clean, outcome(*FIRST.prompts, errors=[error("alpha.py", "bad")]))
    assert shown(failing)["hash"] != shown(clean)["hash"]
    assert failing.merge(FIRST, MODULES).changed == []  # the prompts are equal: the errors differ


def test_a_prompt_report_an_update_hands_on_unchanged_keeps_its_copy_and_its_hash() -> None:
    one = show(HeldReport(), FIRST)
    alpha, beta = FIRST.prompts[1], prompt("beta", 3, "Beta two.")
    update = outcome(beta, alpha, kind="incremental")
    two = show(one, update)
    old_alpha = by_id(one)["alpha"]
    assert by_id(two)["alpha"] is old_alpha  # the same copy: hashed once
    assert two.hashes["alpha"] == one.hashes["alpha"] and two.hashes["beta"] != one.hashes["beta"]
    assert shown(two)["load"] == "incremental" and shown(two)["reevaluated"] == ["beta", "alpha"]
    assert set(two.hash_cache) == {id(p) for p in shown(two)["prompts"]}  # nothing older is kept


def test_merging_changes_no_held_value() -> None:
    one = show(HeldReport(), FIRST)
    known, hashes, report = dict(one.known), dict(one.hashes), dict(shown(one))
    show(one, outcome(prompt("alpha", 9, "Alpha two."), broken=frozenset({"beta"}), errors=[error("beta.py", "x")]))
    assert (dict(one.known), dict(one.hashes), dict(shown(one))) == (known, hashes, report)


def test_discovery_errors_come_before_the_loads_own_and_an_empty_project_says_how_to_add_a_prompt() -> None:
    load = outcome(prompt("alpha", 1, "A."), errors=[error("alpha.py", "from the load")])
    merged = HeldReport().merge(load, MODULES, [error("pyproject.toml", "from discovery")])
    assert [e["message"] for e in merged.errors] == ["from discovery", "from the load"]
    empty = show(HeldReport(), outcome(), modules=[], found_modules=False)
    assert shown(empty)["notice"] == EMPTY_NOTICE.format(root="/p") and shown(empty)["modules_found"] is False


def test_a_prompt_that_moved_out_of_a_broken_module_is_shown_once_current() -> None:
    one = show(HeldReport(), FIRST)
    moved = outcome(prompt("alpha", 9, "Alpha one."), prompt("beta", 20, "Beta moved."), broken=frozenset({"beta"}),
                    owners={"alpha": "alpha", "beta": "alpha"}, errors=[error("beta.py", "x")])
    held = show(one, moved)
    assert [(p["id"], p["stale"]) for p in shown(held)["prompts"]] == [("alpha", False), ("beta", False)]
    assert by_id(held)["beta"]["examples"][0]["system"] == "Beta moved."


def test_a_verification_that_agrees_keeps_the_version_and_the_hash_and_only_says_verified() -> None:
    update = outcome(*FIRST.prompts, kind="incremental")
    fast = show(HeldReport(), update, verified=False)
    fresh = outcome(prompt("beta", 3, "Beta one."), prompt("alpha", 9, "Alpha one."))
    merged: Merged = fast.merge(fresh, MODULES)
    assert merged.changed == []
    confirmed = merged.confirmed(fresh, verified=True, imported_note="3 files")
    report = shown(confirmed)
    assert (report["version"], report["hash"], report["verified"], report["load"], report["imported_note"]) == (1, shown(fast)["hash"], True, "full", "3 files")
    assert [p["id"] for p in report["prompts"]] == ["alpha", "beta"] and by_id(confirmed)["alpha"] is merged.prompts[0]
    with pytest.raises(ValueError, match="already shown"):
        HeldReport().merge(fresh, MODULES).confirmed(fresh, verified=True, imported_note=None)
