"""Every file ``docs/ARCHITECTURE.md`` names exists: a path (``cli/runs.py``), a module bullet of its
"Modules" section under its folder's heading, a bare file name (``wire.py``), and a module named by
an attribute of it (``load.update_project``) when the name is one of the package's spellings."""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
DOC = REPO / "docs" / "ARCHITECTURE.md"
SKIP = {".git", ".venv", "node_modules", "__pycache__", ".mypy_cache", ".pytest_cache"}
PLACEHOLDERS = ("NAME", "KEY")  # a recipe's file to be written: ``cli/NAME.py``


@functools.cache
def repo_files() -> tuple[str, ...]:
    found: list[str] = []
    for folder, dirs, names in os.walk(REPO):
        dirs[:] = [d for d in dirs if d not in SKIP]
        base = Path(folder).relative_to(REPO).as_posix()
        found += [name if base == "." else f"{base}/{name}" for name in names]
    return tuple(found)


def quoted(text: str) -> list[str]:
    return re.findall(r"`([^`\n]+)`", text)


def test_every_path_the_architecture_names_exists() -> None:
    files = repo_files()
    missing = set()
    for token in quoted(DOC.read_text(encoding="utf-8")):
        for path in re.findall(r"[\w./-]*\w/[\w./-]*\.(?:py|md|html|txt|js|css|tcss)\b", token):
            if not any(p in path for p in PLACEHOLDERS) and not any(f == path or f.endswith("/" + path) for f in files):
                missing.add(path)
    assert sorted(missing) == [], sorted(missing)


def test_every_file_name_the_architecture_names_exists() -> None:
    names = {f.rsplit("/", 1)[-1] for f in repo_files()}
    missing = set()
    for token in quoted(DOC.read_text(encoding="utf-8")):
        missing.update(f"{n}.py" for n in re.findall(r"(?<![\w/.*])(\w+)\.py\b", token) if f"{n}.py" not in names and n not in PLACEHOLDERS)
    assert sorted(missing) == [], sorted(missing)


def test_every_module_of_the_modules_section_is_in_its_folder() -> None:
    files = set(repo_files())
    section = DOC.read_text(encoding="utf-8").split("\n## Modules\n", 1)[1].split("\n## ", 1)[0]
    folder, missing, previous = None, [], ""
    for line in section.splitlines():
        heading = re.match(r"^`([\w/]+/)`", line)
        if heading and not previous.strip():  # a folder's heading starts a paragraph
            folder = "crux_devtools/" if heading.group(1) == "crux_devtools/" else f"crux_devtools/{heading.group(1)}"
        bullet = re.match(r"^- `([^`]+)`:", line)
        if bullet and folder is not None:
            path = folder + bullet.group(1)
            if path not in files and not any(f.startswith(path) for f in files if path.endswith("/")):
                missing.append(path)
        previous = line
    assert folder is not None, "the Modules section has no folder headings"
    assert missing == [], missing


def test_every_module_named_by_one_of_its_attributes_exists() -> None:
    """``session_load.load_project`` once named a module that the package's folders have since renamed
    (``session/load.py``); a module spelled with an underscore before the dot must be a module or a
    folder of the package."""
    stems = set()
    for f in repo_files():
        if f.endswith(".py"):
            parts = f[:-3].split("/")
            stems.update(parts)
    missing = {m.group(1) for t in quoted(DOC.read_text(encoding="utf-8")) if "/" not in t
               for m in [re.match(r"^([a-z]\w*_\w*)\.[a-zA-Z_]", t)] if m and m.group(1) not in stems}
    assert sorted(missing) == [], sorted(missing)
