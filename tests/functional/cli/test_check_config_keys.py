"""``crux-devtools check`` refuses a ``[tool.crux-devtools]`` it cannot fully understand: an unknown
key (a typo would otherwise be ignored, and the project planned against what the person did not
mean) and a ``default_model`` that names no profile. Run as the real command on a real project, in
this process with in-process workers (``cli_in_process``; ``test_check.py`` runs it as a process)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from cli_in_process import cli

GOOD = "from crux_devtools import prompt\n\nhello = prompt('hello', system='Hi.', examples={'one': {}})\n"


def check(project: Path) -> subprocess.CompletedProcess[str]:
    return cli("check", str(project))


def project(tmp_path: Path, pyproject: str) -> Path:
    (tmp_path / "prompts.py").write_text(GOOD, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    return tmp_path


def test_unknown_keys_of_the_tool_table_and_of_a_model_table_fail_check_with_a_did_you_mean(tmp_path: Path) -> None:
    root = project(tmp_path, (
        '[tool.crux-devtools]\n'
        'modles = ["prompts.py"]\n'
        'default_modle = "house"\n'
        'colour = "blue"\n'
        '\n'
        '[tool.crux-devtools.models.house]\n'
        'context_windw = 8192\n'
    ))
    done = check(root)
    assert done.returncode == 1, done
    lines = done.stdout.splitlines()
    assert "pyproject.toml:2: ConfigError: [tool.crux-devtools] has unknown key(s) modles (did you mean modules?); allowed: modules, default_model, " in done.stdout, lines
    assert "pyproject.toml:3: ConfigError: [tool.crux-devtools] has unknown key(s) default_modle (did you mean default_model?)" in done.stdout
    assert "pyproject.toml:4: ConfigError: [tool.crux-devtools] has unknown key(s) colour; allowed: " in done.stdout
    assert "pyproject.toml:7: ConfigError: [tool.crux-devtools.models.house] has unknown key(s) context_windw (did you mean context_window?)" in done.stdout


def test_a_default_model_naming_no_profile_fails_check_naming_the_known_profiles(tmp_path: Path) -> None:
    root = project(tmp_path, (
        '[tool.crux-devtools]\n'
        'default_model = "house"\n'
        '\n'
        '[tool.crux-devtools.models.house-large]\n'
        'context_window = 200000\n'
        '\n'
        '[tool.crux-devtools.models.house-small]\n'
        'context_window = 8192\n'
    ))
    done = check(root)
    assert done.returncode == 1, done
    [line] = [line for line in done.stdout.splitlines() if "ConfigError" in line]
    assert line.startswith("pyproject.toml:2: ConfigError: [tool.crux-devtools] default_model = 'house' names no model profile (known profiles: house-large, house-small)"), line
    assert "[tool.crux-devtools.models.house] with context_window = N" in line


def test_every_key_the_readme_documents_is_known_and_a_correct_table_passes(tmp_path: Path) -> None:
    root = project(tmp_path, (
        '[tool.crux-devtools]\n'
        'modules = ["prompts.py"]\n'
        'default_model = "house"\n'
        'watch_ignore = ["data/"]\n'
        'allow_network = false\n'
        'history_keep = 10\n'
        'history_max_mb = 5\n'
        '\n'
        '[tool.crux-devtools.models.house]\n'
        'context_window = 8192\n'
    ))
    done = check(root)
    assert done.returncode == 0, done
