"""The package as users get it: a light import, every public name exported, a wheel that installs."""

from __future__ import annotations

import json
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

import crux_devtools

REPO = Path(__file__).resolve().parents[1]
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


SPEC_NAMES_FOUNDATION = [
    "context", "prompt", "when", "match", "tool", "Context", "Prompt", "Tool", "Conditional", "Match",
    "Resolved", "Inspection", "Part", "Exclusion", "Drop", "RequestCompositionError", "Diagnostic",
    "TokenCounter", "TiktokenCounter", "default_counter",
]


@pytest.mark.parametrize("name", SPEC_NAMES_FOUNDATION)
def test_every_public_name_of_the_foundation_is_exported(name):
    assert hasattr(crux_devtools, name)
    assert name in crux_devtools.__all__


@pytest.mark.slow
def test_a_wheel_built_from_the_repo_installs_into_a_fresh_venv_and_runs(tmp_path):
    dist = tmp_path / "dist"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "--no-build-isolation", "-w", str(dist), "-q"],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-3000:]
    (wheel,) = dist.glob("crux_devtools-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "crux_devtools/py.typed" in names
    assert any(n.startswith("crux_devtools/templates/") for n in names), "templates are not bundled"
    assert any(n.startswith("crux_devtools/static/") for n in names), "static assets are not bundled"
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    install = subprocess.run([str(py), "-m", "pip", "install", "-q", str(wheel)], capture_output=True, text=True, timeout=600)
    assert install.returncode == 0, install.stderr[-2000:]
    help_out = subprocess.run([str(env_dir / "bin" / "crux-devtools"), "--help"], capture_output=True, text=True, timeout=120)
    assert help_out.returncode == 0, help_out.stderr
    assert "Usage: crux-devtools" in help_out.stdout
    count = subprocess.run(
        [str(py), "-c", "from crux_devtools import context, prompt; print(prompt('p', system='hi', use=[context('c', system='there')]).inspect().system_tokens)"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )
    assert count.returncode == 0, count.stderr
    assert int(count.stdout) > 0
