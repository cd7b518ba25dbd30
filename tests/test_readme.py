"""The README's promises: its two opening commands, and CI running exactly the test command."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def opening_commands() -> list[str]:
    text = (REPO / "README.md").read_text()
    block = re.search(r"```bash\n(.*?)```", text, re.S)
    assert block, "README must open with a bash block holding the two commands"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_readme_opens_with_a_setup_and_serve_command_and_a_test_command():
    setup_and_serve, test = opening_commands()
    assert setup_and_serve == "bash .ci/setup && .venv/bin/crux-devtools serve sample_project"
    assert test == ".venv/bin/python -m pytest"


def test_ci_runs_the_setup_and_exactly_the_readme_test_command():
    _, test = opening_commands()
    lines = [line.strip() for line in (REPO / ".ci" / "run").read_text().splitlines()]
    assert "bash .ci/setup" in lines
    assert test in lines


def test_setup_script_installs_python_packages_npm_assets_and_chromium():
    setup = (REPO / ".ci" / "setup").read_text()
    assert "pip install" in setup and "-e '.[dev]'" in setup
    assert "npm ci" in setup and "static/vendor" in setup
    assert "apt-get install" in setup and "chromium" in setup
