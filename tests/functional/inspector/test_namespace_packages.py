"""A folder without ``__init__.py`` is a namespace package in plain Python: ``from . import x`` in
``agents/support.py`` imports ``agents.x``. The inspector imports such a file the same way, with real
workers (the ``inspect`` command and a live session taking a save)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from crux_devtools.inspector.session.service import ProjectSession
from crux_devtools.inspector.transport.inprocess import in_process

CLI = str(Path(sys.executable).with_name("crux-devtools"))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "helpers.py").write_text("STYLE = 'Be brief.'\n")
    (tmp_path / "agents" / "other.py").write_text("from crux_devtools import prompt\n\nother = prompt('other', system='Other.')\n")
    (tmp_path / "agents" / "support.py").write_text(
        "from crux_devtools import prompt\n\nfrom .helpers import STYLE\nfrom . import other\n\n"
        "support = prompt('support', system=STYLE + ' Also see ' + other.other.id + '.')\n"
    )
    return tmp_path


def systems(report: dict) -> dict[str, str]:
    return {p["id"]: p["examples"][0]["inspection"]["system"] for p in report["prompts"]}


def test_plain_python_imports_it(project: Path) -> None:
    done = subprocess.run([sys.executable, "-c", "import agents.support as s; print(s.support.id)"], cwd=project, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "support", done.stderr


def test_a_relative_import_in_a_namespace_package_loads_as_in_plain_python(project: Path) -> None:
    done = subprocess.run([CLI, "inspect", str(project), "--json"], capture_output=True, text=True, timeout=120)
    report = json.loads(done.stdout)
    assert report["errors"] == [], report["errors"]
    # other.py is imported once (by the relative import and by discovery): one prompt, no duplicate id
    assert systems(report) == {"other": "Other.", "support": "Be brief. Also see other."}
    assert {p["id"]: p["file"] for p in report["prompts"]} == {"other": "agents/other.py", "support": "agents/support.py"}


async def test_a_save_of_the_imported_sibling_updates_the_importer(project: Path) -> None:
    async with ProjectSession(project, transport=in_process, watch=False, history=False, prewarm=False) as session:
        assert session.report is not None and systems(dict(session.report))["support"] == "Be brief. Also see other."
        (project / "agents" / "helpers.py").write_text("STYLE = 'Be warm.'\n")
        await session.reload(["agents/helpers.py"])
        assert session.report is not None and session.report["errors"] == []
        assert systems(dict(session.report))["support"] == "Be warm. Also see other."


def test_a_relative_import_at_the_top_of_the_project_still_says_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "top.py").write_text("from crux_devtools import prompt\nfrom . import nothing\n\ntop = prompt('top', system='x')\n")
    done = subprocess.run([CLI, "inspect", str(tmp_path), "--json"], capture_output=True, text=True, timeout=120)
    [error] = json.loads(done.stdout)["errors"]
    assert "a relative import (from . import ...) in top.py needs a package" in error["message"]
