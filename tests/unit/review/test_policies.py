"""``--fail-on`` policies (``review/policies.py``): one table, from which parsing, the checks and the CLI's
help come (the README names a few, spelled as the table spells them); each policy met and not met on
a review document."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from click.testing import CliRunner
import pytest

from crux_devtools.review.policies import BY_NAME, NAMES, POLICIES, PolicyError, met, parse

README = Path(__file__).resolve().parents[3] / "README.md"


def document(*changes: dict[str, Any], status: str = "changed", cache_prefix: dict[str, Any] | None = None,
             expectations: list[dict[str, Any]] | None = None, head: str = "fits", base: str = "fits",
             failures: list[dict[str, Any]] = ()) -> dict[str, Any]:  # type: ignore[assignment]
    """A review document of one prompt ``reply`` with one example ``refund``."""
    example = {"name": "refund", "status": status, "changes": list(changes), "cache_prefix": cache_prefix,
               "expectations": expectations, "head": {"status": head}, "base": {"status": base}}
    return {"prompts": [{"id": "reply", "examples": [example]}], "failures": list(failures)}


UNCHANGED = document(status="unchanged")
# Each policy: its text, a document that meets it with the line it prints, and one close to it that does not.
CASES: dict[str, tuple[str, dict[str, Any], str, dict[str, Any]]] = {
    "error": ("error", document(head="over-budget"), "reply / refund: over budget at head", document(head="over-budget", base="over-limit")),
    "any": ("any", document(), "reply / refund: changed", UNCHANGED),
    "tokens": ("tokens:+10%", document({"kind": "tokens", "base": 100, "head": 120, "delta": 20, "percent": 20.0}),
               "reply / refund: input tokens 100 -> 120 (20.0%)",
               document({"kind": "tokens", "base": 100, "head": 105, "delta": 5, "percent": 5.0})),
    "dropped": ("dropped", document({"kind": "context-left", "id": "billing", "reason": "budget"}),
                "reply / refund: billing dropped for the budget", document({"kind": "context-left", "id": "billing", "reason": "policy"})),
    "context-left": ("context-left:billing", document({"kind": "context-left", "id": "billing", "reason": "policy"}),
                     "reply / refund: billing left (policy)", document({"kind": "context-left", "id": "notes", "reason": "policy"})),
    "tool-removed": ("tool-removed", document({"kind": "tool-removed", "name": "refund"}), "reply / refund: tool refund removed",
                     document({"kind": "tool-added", "name": "refund"})),
    "cache-prefix": ("cache-prefix:1000", document(cache_prefix={"common_tokens": 40, "broken_by": "tools"}),
                     "reply / refund: cacheable prefix 40 tokens (under 1000), broken by tools",
                     document(cache_prefix={"common_tokens": 1200, "broken_by": "tools"})),
    "expect": ("expect", document(expectations=[{"expect": "includes('brand')", "file": "p.py", "line": 3, "base": "held",
                                                 "head": "failed", "held": None, "reason": "not included"}]),
               "p.py:3: reply / refund: expect().includes('brand') held at base, failed at head; not included",
               document(expectations=[{"expect": "includes('brand')", "file": "p.py", "line": 3, "base": "failed",
                                       "head": "failed", "held": None, "reason": "not included"}])),
}


def test_every_policy_of_the_table_has_a_case_here() -> None:
    assert sorted(CASES) == sorted(BY_NAME), "add the new policy's case to CASES: its text, a document that meets it and one that does not"


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_policy_is_met_with_its_reason_and_not_met_by_a_near_miss(name: str) -> None:
    text, meets, reason, misses = CASES[name]
    policy = parse(text)
    assert policy.name == name and policy.text == text
    assert met(policy, meets) == [reason]
    assert met(policy, misses) == []
    assert met(policy, UNCHANGED) == []


def test_a_policy_reads_its_argument_and_an_unknown_one_names_every_form() -> None:
    assert parse(" tokens:+12.5% ").number == 12.5 and parse("tokens:3%").number == 3.0
    assert parse("cache-prefix:1024").number == 1024.0
    assert parse("context-left:billing notes").id == "billing notes"
    for bad in ("tokens:lots", "context-left:", "cache-prefix:-1", "errors", "Any"):
        with pytest.raises(PolicyError) as caught:
            parse(bad)
        assert str(caught.value) == f"unknown --fail-on policy {bad!r}; use one of: {', '.join(NAMES)}"


def test_every_policy_the_readme_names_is_spelled_as_the_table_spells_it() -> None:
    # the README shows a few policies and points at `diff --help` for all of them; a renamed or
    # reworded policy still breaks each place the README names it
    text = README.read_text(encoding="utf-8")
    section = text[text.index("- `--fail-on POLICY` (repeatable)"):]
    rows = re.findall(r"^  \| `([^`]+)` \| (.+) \|$", section[: section.index("\n- ")], re.M)
    assert rows, "README.md's --fail-on entry shows a few policies in a table of | `form` | description |"
    described = {kind.form: kind.description for kind in POLICIES}
    for form, description in rows:
        assert form in described, f"README.md's --fail-on table names {form!r}, which is no policy; the policies: {', '.join(NAMES)}"
        assert description == described[form], f"README.md's row of `{form}` must read: | `{form}` | {described[form]} |"
    written = re.findall(r"--fail-on[ =]([a-z][^\s`]*?)(?=:?[\s`]|$)", text, re.M)
    assert "any" in written and "error" in written  # the examples of the diff section
    for policy in written:
        try:
            parse(policy)
        except PolicyError as exc:
            pytest.fail(f"README.md writes --fail-on {policy}: {exc}")


def test_the_diff_help_lists_every_policy_with_what_it_fails_on() -> None:
    from crux_devtools.cli.diff import diff

    shown = " ".join(CliRunner().invoke(diff, ["--help"], terminal_width=100).output.split())
    for kind in POLICIES:
        assert f"{kind.form} {kind.description}" in shown, f"crux-devtools diff --help must list {kind.form!r} with its description"
