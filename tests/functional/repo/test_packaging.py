"""The package as users get it: a light import, every public name exported, a wheel that installs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import crux_devtools

REPO = Path(__file__).resolve().parents[3]
UI_MODULES = ["textual", "fastapi", "uvicorn", "jinja2", "watchfiles", "starlette", "sse_starlette"]


def test_headless_import_does_not_load_the_ui():
    code = "import sys, json, crux_devtools; print(json.dumps(sorted(m.split('.')[0] for m in sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(json.loads(out.stdout))
    assert not loaded & set(UI_MODULES), f"import crux_devtools loaded {sorted(loaded & set(UI_MODULES))}"


def test_core_never_imports_the_inspector_or_the_front_ends():
    offenders = []
    for path in (REPO / "crux_devtools" / "core").rglob("*.py"):
        text = path.read_text()
        for banned in ("crux_devtools.inspector", "crux_devtools.web", "crux_devtools.tui", "from ..inspector", "from ..web", "from ..tui"):
            if banned in text:
                offenders.append(f"{path.relative_to(REPO)}: {banned}")
    assert offenders == []


FOUNDATION_NAMES = [
    "context", "prompt", "when", "match", "tool", "Context", "Prompt", "Tool", "Conditional", "Match",
    "Resolved", "Inspection", "Part", "Exclusion", "Drop", "RequestCompositionError", "Diagnostic",
    "TokenCounter", "TiktokenCounter", "default_counter",
]


@pytest.mark.parametrize("name", FOUNDATION_NAMES)
def test_every_public_name_of_the_foundation_is_exported(name):
    assert hasattr(crux_devtools, name)
    assert name in crux_devtools.__all__


@pytest.mark.slow
def test_a_wheel_built_from_a_clean_copy_installs_outside_the_repo_and_serves():
    """The CI step: clean copy -> python -m build -> fresh venv -> serve the sample project, fetch htmx."""
    done = subprocess.run([sys.executable, str(REPO / ".ci" / "check_wheel.py")], capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    assert "answered / and /static/vendor/htmx.min.js" in done.stdout


def test_a_recorded_wheel_verdict_holds_only_for_the_same_files(tmp_path, monkeypatch):
    """CI's first check records its verdict; the suite's check reuses it only while every file the
    check copies has the same name and bytes: one changed byte, one more file or a damaged record,
    and the check runs in full."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("check_wheel", REPO / ".ci" / "check_wheel.py")
    assert spec is not None and spec.loader is not None
    check_wheel = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check_wheel)
    monkeypatch.setattr(check_wheel, "REPO", tmp_path)
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "b.html").write_text("<p>b</p>\n")
    names = ["a.py", "b.html"]
    files = check_wheel.digest(names)
    record = tmp_path / "record.json"
    record.write_text(json.dumps({"files": files, "lines": ["check_wheel: ok (w.whl)"]}))
    assert check_wheel.recorded(record, check_wheel.digest(names)) == ["check_wheel: ok (w.whl)"]

    (tmp_path / "a.py").write_text("x = 2\n")
    assert check_wheel.recorded(record, check_wheel.digest(names)) is None
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "c.txt").write_text("")
    assert check_wheel.recorded(record, check_wheel.digest([*names, "c.txt"])) is None
    record.write_text("{not json")
    assert check_wheel.recorded(record, files) is None
    assert check_wheel.recorded(tmp_path / "missing.json", files) is None


def test_ci_builds_and_serves_the_wheel_before_the_tests():
    lines = [line.strip() for line in (REPO / ".ci" / "run").read_text().splitlines()]
    assert ".venv/bin/python .ci/check_wheel.py" in lines
    assert lines.index(".venv/bin/python .ci/check_wheel.py") < lines.index(".venv/bin/python -m pytest")


@pytest.mark.slow
def test_building_a_wheel_without_npm_fails_and_says_what_to_install(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "hatch_build.py", "README.md", "package.json", "package-lock.json"):
        shutil.copy2(REPO / name, src / name)
    for folder in ("crux_devtools", "templates"):
        shutil.copytree(REPO / folder, src / folder, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "static", src / "static", ignore=shutil.ignore_patterns("vendor"))
    no_npm = {**os.environ, "PATH": str(Path(sys.executable).parent)}  # the venv's tools only: no npm, no node
    built = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(tmp_path / "dist"), str(src)],
        capture_output=True, text=True, env=no_npm, timeout=600,
    )
    assert built.returncode != 0, "a wheel without htmx was built"
    assert "needs npm" in built.stdout + built.stderr
    assert not list(tmp_path.rglob("*.whl"))


def test_serve_tells_an_installed_user_to_reinstall_not_to_run_the_repos_setup(tmp_path, monkeypatch):
    """An installed package (no checkout around it) without its vendored files."""
    from click.testing import CliRunner

    from crux_devtools.cli import main
    from crux_devtools.web import paths

    package = tmp_path / "site-packages" / "crux_devtools"
    (package / "static").mkdir(parents=True)
    (package / "templates").mkdir()
    monkeypatch.setattr(paths, "package_dir", lambda: package)
    project = tmp_path / "project"
    project.mkdir()
    result = CliRunner().invoke(main, ["serve", str(project), "--no-open"])
    assert result.exit_code == 1
    assert "htmx.min.js" in result.output
    assert "Reinstall from a wheel built where Node.js/npm is available" in result.output
    assert ".ci/setup" not in result.output


def test_serve_in_a_checkout_without_the_files_points_at_the_setup_script(tmp_path, monkeypatch):
    from crux_devtools.web import paths

    checkout = tmp_path / "checkout"
    (checkout / "crux_devtools").mkdir(parents=True)
    (checkout / ".ci").mkdir()
    (checkout / ".ci" / "setup").write_text("")
    (checkout / "pyproject.toml").write_text("")
    (checkout / "static").mkdir()
    monkeypatch.setattr(paths, "package_dir", lambda: checkout / "crux_devtools")
    assert paths.vendor_missing() == ["htmx.min.js", "sse.min.js"]
    assert "bash .ci/setup" in paths.vendor_missing_message(paths.vendor_missing())
