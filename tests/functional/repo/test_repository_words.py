"""Every file says things in its own words: nothing cites a document or a ticket a user of the
repository does not have (a contract file, a numbered issue, a brief)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
# assembled, so that this file does not match itself
CONTRACT, ISSUE, BRIEF = "SP" + "EC", "iss" + "ue", "bri" + "ef"
CITATIONS = re.compile(
    rf"\b{CONTRACT}\.md\b|\b{CONTRACT} section\b|\bthe {CONTRACT}\b|\b{CONTRACT}'s\b"  # the contract file, by name
    rf"|(?i:\b{ISSUE}s? #?\d+\b)"  # a numbered ticket, with or without "#"
    rf"|(?i:\bthe {BRIEF}\b)",
)


def repository_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"], capture_output=True, text=True
    )
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    return [REPO / name for name in listed.stdout.split("\0") if name and (REPO / name).is_file()]


def test_no_file_cites_the_contract_file_an_issue_number_or_a_brief() -> None:
    found = []
    for path in repository_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:  # images and other binary files
            continue
        for number, line in enumerate(text.splitlines(), 1):
            match = CITATIONS.search(line)
            if match:
                found.append(f"{path.relative_to(REPO)}:{number}: {match.group(0)!r} in {line.strip()[:120]}")
    assert found == [], "say it in the file's own words:\n" + "\n".join(found)


@pytest.mark.parametrize(
    "line",
    [f"see {CONTRACT}.md", f"the JSON shape of {CONTRACT} section 8", f"exactly as the {CONTRACT} states", f"({ISSUE} 15)", f"{ISSUE.title()} #5", f"as the {BRIEF} says"],
)
def test_the_scan_catches_each_kind_of_citation(line: str) -> None:
    assert CITATIONS.search(line)


@pytest.mark.parametrize("line", ["spec = importlib.util.find_spec(name)", "INSPECTION = _record(", f"an {ISSUE} with the store", "SPEC_NAMES"])
def test_the_scan_leaves_ordinary_words_alone(line: str) -> None:
    assert not CITATIONS.search(line)
