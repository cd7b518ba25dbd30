"""Skills from SKILL.md files: system text, the shared load_skill tool, folders, bad files."""

from __future__ import annotations

from pathlib import Path

import pytest

from crux_devtools import Skill, prompt, skill

REPO = Path(__file__).resolve().parents[3]


def write_skill(folder: Path, name: str, description: str = "Use it well.", body: str = "Step one. Step two.") -> Path:
    path = folder / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}\n", encoding="utf-8")
    return path


def test_a_skill_file_contributes_its_name_and_description_but_not_its_body(tmp_path: Path) -> None:
    s = skill.from_file(write_skill(tmp_path, "refunds", "How to handle refund requests.", "SECRET BODY"))
    assert isinstance(s, Skill) and (s.name, s.description) == ("refunds", "How to handle refund requests.")
    system = prompt("p", system="Help.", use=[s]).resolve({}).system
    assert "refunds" in system and "How to handle refund requests." in system
    assert 'load_skill(name="refunds")' in system
    assert "SECRET BODY" not in system


def test_the_load_skill_tool_returns_the_body(tmp_path: Path) -> None:
    s = skill.from_file(write_skill(tmp_path, "refunds", body="# Refunds\nCheck the invoice first."))
    load = prompt("p", use=[s]).resolve({}).tools["load_skill"]
    assert load.execute(load.parameters(name="refunds")) == "# Refunds\nCheck the invoice first."


def test_an_unknown_skill_name_answers_with_the_available_ones(tmp_path: Path) -> None:
    s = skill.from_file(write_skill(tmp_path, "known-skill"))
    load = s.tools[0]
    answer = load.execute(load.parameters(name="nope"))
    assert answer.startswith("error: no skill named 'nope'") and "known-skill" in answer


def test_a_folder_of_skills_loads_each_and_they_share_one_tool_in_a_prompt(tmp_path: Path) -> None:
    for name in ("zeta", "alpha", "mid"):
        write_skill(tmp_path / "skills", name, f"The {name} skill.", f"Body of {name}.")
    skills = skill.from_folder(tmp_path / "skills")
    assert [s.name for s in skills] == ["alpha", "mid", "zeta"]
    p = prompt("p", use=skills)
    inspection = p.inspect({})
    assert inspection.tools == ["load_skill"]
    assert [(part.source, part.kind) for part in inspection.parts[1:]] == [
        ("skill:alpha", "skill"),
        ("skill:mid", "skill"),
        ("skill:zeta", "skill"),
    ]
    assert all(part.tokens > 0 for part in inspection.parts[1:])
    load = p.resolve({}).tools["load_skill"]
    assert load.execute(load.parameters(name="mid")) == "Body of mid."


def test_the_sample_projects_escalation_skill_loads() -> None:
    s = skill.from_file(REPO / "sample_project" / "skills" / "escalation" / "SKILL.md")
    assert s.name == "escalation" and "billing" in s.description
    assert "Account risk" in s.body


def test_quoted_and_folded_front_matter_values_are_read(tmp_path: Path) -> None:
    path = tmp_path / "SKILL.md"
    path.write_text('---\nname: "quoted"\ndescription: >\n  Folded over\n  two lines.\n---\nBody.\n', encoding="utf-8")
    s = skill.from_file(path)
    assert (s.name, s.description) == ("quoted", "Folded over two lines.")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("no front matter here", "must start with front matter"),
        ("---\nname: x\ndescription: y\n", "no closing"),
        ("---\nname: x\n---\nBody", "missing description"),
        ("---\ndescription: y\n---\nBody", "missing name"),
        ("---\nname: x\ndescription: y\n---\n   ", "empty body"),
        ("---\nname: bad name!\ndescription: y\n---\nBody", "skill name must be"),
    ],
)
def test_a_bad_skill_file_raises_naming_the_file(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "SKILL.md"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=message) as info:
        skill.from_file(path)
    assert str(path) in str(info.value)


def test_missing_files_and_folders_raise_clearly(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="nothing.md"):
        skill.from_file(tmp_path / "nothing.md")
    with pytest.raises(NotADirectoryError, match="no-folder"):
        skill.from_folder(tmp_path / "no-folder")


def test_two_skills_with_one_name_in_a_folder_are_rejected(tmp_path: Path) -> None:
    write_skill(tmp_path / "a", "same")
    write_skill(tmp_path / "b", "same")
    with pytest.raises(ValueError, match="two skills are named 'same'"):
        skill.from_folder(tmp_path)


def test_an_inline_skill_works_like_a_file_skill() -> None:
    s = skill("inline-skill", description="Inline.", body="Do the thing.")
    load = prompt("p", use=[s]).resolve({}).tools["load_skill"]
    assert load.execute(load.parameters(name="inline-skill")) == "Do the thing."
