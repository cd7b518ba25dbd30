"""Load errors say where and what to do, run through the real `check`: a wrong module name in
pyproject.toml, a relative import outside a package, a callback returning None, a file saved with
a byte-order mark, and a worker whose report user code has broken by monkeypatching. A project that
patches the worker is checked as a process (its patches stay in its worker process); the module name
in pyproject.toml in this process, with in-process workers (``cli_in_process``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cli_in_process import cli

COMMAND = str(Path(sys.executable).parent / "crux-devtools")
GOOD = "from crux_devtools import prompt\n\nfine = prompt('fine', system='Fine.')\n"


def check(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([COMMAND, "check", str(root), "--timeout", "5"], capture_output=True, text=True, timeout=60, check=False)


def test_a_wrong_module_name_in_pyproject_is_reported_there_with_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "prompts.py").write_text(GOOD, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.crux-devtools]\nmodules = [\n    "prompts",\n    "promts_typo",\n]\n', encoding="utf-8"
    )
    done = cli("check", str(tmp_path), "--timeout", "5")
    assert done.returncode == 1
    [line] = done.stdout.splitlines()
    assert line.startswith("pyproject.toml:7: ModuleNotFoundError: module 'promts_typo' listed in [tool.crux-devtools] modules was not found"), line
    assert "Fix the name in pyproject.toml" in line and "frozen" not in done.stdout
    assert "1 failure(s) in 1 prompt(s)" in done.stderr


@pytest.fixture(scope="module")
def mixed_check(tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    """One `check` of a project holding several of these mistakes, each in its own module."""
    root = tmp_path_factory.mktemp("mixed")
    (root / "agents").mkdir()
    (root / "agents" / "helpers.py").write_text("STYLE = 'Be brief.'\n", encoding="utf-8")
    (root / "agents" / "support.py").write_text(
        "from crux_devtools import prompt\n\nfrom .helpers import STYLE\n\nsupport = prompt('support', system=STYLE)\n", encoding="utf-8"
    )
    (root / "prompts.py").write_text(
        "from crux_devtools import context, prompt\n\n\n"
        "def tone(i):\n    if False:\n        return 'x'\n\n\n"
        "toned = context('toned', system=tone)\n"
        "silent = prompt(\n    'silent',\n    system=lambda i: None,\n    examples={\n        'one': {},\n    },\n)\n"
        "styled = prompt('styled', system='Hi.', use=[toned], examples={'one': {}})\n",
        encoding="utf-8",
    )
    (root / "bom.py").write_bytes(b"\xef\xbb\xbf" + GOOD.encode("utf-8"))
    (root / "b_patch.py").write_text(
        "import crux_devtools.inspector.worker.evaluate as evaluate\nfrom crux_devtools import prompt\n\n"
        "real = evaluate.prompt_report\n\n\n"
        "def patched(root, target, *args, **kwargs):\n"
        "    report = real(root, target, *args, **kwargs)\n"
        "    if target.id == 'victim':\n        del report['examples']\n    return report\n\n\n"
        "evaluate.prompt_report = patched\nvictim = prompt('victim', system='x')\n",
        encoding="utf-8",
    )
    return check(root)


def line_for(done: subprocess.CompletedProcess[str], prefix: str) -> str:
    [line] = [line for line in done.stdout.splitlines() if line.startswith(prefix)]
    return line


def test_a_relative_import_in_a_folder_without_init_file_imports_as_in_plain_python(mixed_check: subprocess.CompletedProcess[str]) -> None:
    # agents/ is a namespace package, so `from .helpers import STYLE` works as it does in plain Python
    assert "agents/support.py" not in mixed_check.stdout
    assert "crux_project" not in mixed_check.stdout


def test_a_callback_returning_none_is_reported_at_its_own_line(mixed_check: subprocess.CompletedProcess[str]) -> None:
    silent = line_for(mixed_check, "prompts.py:12:")
    assert silent.startswith("prompts.py:12: CallbackError: prompt 'silent' example 'one': 'silent': system callback returned NoneType"), silent
    toned = line_for(mixed_check, "prompts.py:4:")
    assert toned.startswith("prompts.py:4: CallbackError: prompt 'styled' example 'one': 'toned': system callback returned NoneType"), toned


def test_a_file_starting_with_a_byte_order_mark_is_discovered(mixed_check: subprocess.CompletedProcess[str]) -> None:
    # fine (bom.py), silent and styled (prompts.py), support (agents/support.py); victim fails to load.
    assert "3 failure(s) in 4 prompt(s)" in mixed_check.stderr, mixed_check.stdout + mixed_check.stderr


def test_a_report_broken_by_monkeypatching_the_inspector_is_a_load_error_not_a_traceback(mixed_check: subprocess.CompletedProcess[str]) -> None:
    assert mixed_check.returncode == 1
    assert "Traceback" not in mixed_check.stdout + mixed_check.stderr
    line = line_for(mixed_check, "b_patch.py:")
    assert line.startswith("b_patch.py:15: MalformedReport: the worker sent a malformed report of 'victim' (the report of 'victim' has no 'examples': expected a list of ExampleReport)"), line
    assert "monkeypatching" in line


def test_a_load_broken_by_monkeypatching_the_worker_is_a_load_error_not_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "patch.py").write_text(
        "import sys\nfrom crux_devtools import prompt\n\nworker = sys.modules['__main__']  # the worker runs as python -m\n"
        "send = worker.Channel.send\n"
        "worker.Channel.send = lambda self, message: None if message.get('event') == 'report' else send(self, message)\n"
        "worker.counted_texts = lambda tracked: 'not a dict'\n"
        "worker.library_modules = lambda root, names: [1, None]\n"
        "hidden = prompt('hidden', system='x')\n",
        encoding="utf-8",
    )
    done = check(tmp_path)
    assert "Traceback" not in done.stdout + done.stderr
    assert done.returncode == 1
    [line] = done.stdout.splitlines()
    assert line.startswith(".:0: MalformedReport: the worker sent a malformed load (it found 'hidden' but sent no report of it)"), line


def test_a_prompt_report_replaced_by_none_is_a_load_error(tmp_path: Path) -> None:
    (tmp_path / "patch.py").write_text(
        "import crux_devtools.inspector.worker.evaluate as evaluate\nfrom crux_devtools import prompt\n\n"
        "evaluate.prompt_report = lambda *args, **kwargs: None\nhidden = prompt('hidden', system='x')\n",
        encoding="utf-8",
    )
    done = check(tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stdout + done.stderr
    [line] = done.stdout.splitlines()
    assert line.startswith("patch.py:5: MalformedReport: the worker sent a malformed report of 'hidden'"), line
