"""Discovery reads files only: configured modules win, else a scan for files importing crux_devtools."""

from __future__ import annotations

from pathlib import Path

import pytest

from crux_devtools.inspector.session.discovery import discover, file_ref

PROJECTS = Path(__file__).parents[2] / "projects"
USES = "from crux_devtools import prompt\n"


def write(path: Path, text: str = USES) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def names(root: Path) -> list[str]:
    return [str(Path(m.path).relative_to(root)) for m in discover(root).modules]


def test_scan_finds_only_files_that_import_crux_devtools(tmp_path: Path) -> None:
    write(tmp_path / "a.py")
    write(tmp_path / "b.py", "import crux_devtools as cd\n")
    write(tmp_path / "plain.py", "print('crux_devtools is mentioned, not imported')\n")
    assert names(tmp_path) == ["a.py", "b.py"]


def test_scan_skips_hidden_folders_venvs_caches_tests_and_node_modules(tmp_path: Path) -> None:
    write(tmp_path / "keep" / "ok.py")
    for skipped in (".hidden/x.py", "__pycache__/x.py", "tests/test_x.py", "node_modules/pkg/x.py", ".crux/x.py"):
        write(tmp_path / skipped)
    write(tmp_path / "myenv" / "pyvenv.cfg", "home = /usr\n")
    write(tmp_path / "myenv" / "lib" / "x.py")
    assert names(tmp_path) == ["keep/ok.py"]


def test_file_names_starting_with_digits_get_an_importable_private_name(tmp_path: Path) -> None:
    ref = file_ref(tmp_path, write(tmp_path / "01_contexts.py"))
    assert ref.name == "crux_project.01_contexts"
    assert ref.package is False


def test_files_inside_packages_keep_their_dotted_name(tmp_path: Path) -> None:
    write(tmp_path / "app" / "__init__.py", "")
    ref = file_ref(tmp_path, write(tmp_path / "app" / "prompts.py"))
    assert (ref.name, ref.package) == ("app.prompts", True)


def test_configured_modules_win_over_the_scan_and_keep_their_order() -> None:
    root = PROJECTS / "configured"
    found = discover(root)
    assert found.source == "config"
    assert [m.name for m in found.modules] == ["prompts.main", "crux_project.other_02_extra"]
    assert found.errors == []


def test_a_configured_file_that_does_not_exist_is_an_error_with_the_pyproject_line(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[project]\nname = 'x'\n\n[tool.crux-devtools]\nmodules = ['missing.py']\n")
    found = discover(tmp_path)
    assert found.modules == []
    [error] = found.errors
    assert (error["file"], error["line"], error["type"]) == ("pyproject.toml", 5, "ModuleNotFoundError")
    assert "missing.py" in error["message"]


def test_a_broken_pyproject_is_reported_and_the_scan_still_runs(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[tool.crux-devtools\nmodules = 1\n")
    write(tmp_path / "p.py")
    found = discover(tmp_path)
    assert [e["file"] for e in found.errors] == ["pyproject.toml"]
    assert found.errors[0]["line"] == 1
    assert [m.name for m in found.modules] == ["p"]


def test_modules_must_be_a_list_of_strings(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[tool.crux-devtools]\nmodules = 'prompts'\n")
    found = discover(tmp_path)
    assert found.errors[0]["type"] == "ConfigError"
    assert "list of module names" in found.errors[0]["message"]


def test_a_project_folder_that_does_not_exist_raises_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(NotADirectoryError, match="nope"):
        discover(tmp_path / "nope")


def test_a_file_saved_with_a_byte_order_mark_is_found(tmp_path: Path) -> None:
    (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbf" + USES.encode("utf-8"))
    assert names(tmp_path) == ["bom.py"]


def test_a_configured_module_name_keeps_its_line_in_pyproject(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[tool.crux-devtools]\nmodules = [\n    "one",\n    "two.three",\n]\n')
    assert [(m.name, m.line) for m in discover(tmp_path).modules] == [("one", 3), ("two.three", 4)]
