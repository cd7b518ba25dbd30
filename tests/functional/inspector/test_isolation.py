"""Isolation per module, run for real: one module that hangs, exits or crashes the worker is named
with its file and line, and every other module's prompts are still evaluated and shown."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

COMMAND = [str(Path(sys.executable).parent / "crux-devtools")]
GOOD_A = "from crux_devtools import prompt\n\nalpha = prompt('alpha', system='Alpha.')\n"
GOOD_C = "from crux_devtools import prompt\n\ngamma = prompt('gamma', system='Gamma.')\n"


def crux(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*COMMAND, *args], capture_output=True, text=True, timeout=timeout, check=False)


FAULTS = {
    "hang": ("import crux_devtools\n\nwhile True:\n    pass\n", r"fault_hang.py:[34]: TimeoutError: user code did not finish within 1 s while importing fault_hang.py"),
    "os_exit": ("import os\nimport crux_devtools\n\nos._exit(7)\n", r"fault_os_exit.py:4: WorkerExited: user code called os\._exit\(7\)"),
    "segfault": ("import ctypes\nimport crux_devtools\n\nctypes.string_at(0)\n", "fault_segfault.py:4: WorkerExited: the worker process was killed by SIGSEGV"),
    "prints_then_hangs": (
        "import crux_devtools\n\nfor i in range(1000):\n    print('line', i)\nwhile True:\n    pass\n",
        r"fault_prints_then_hangs.py:[56]: TimeoutError: user code did not finish within 1 s while importing fault_prints_then_hangs.py",
    ),
    "closes_stderr_then_hangs": ("import os\nimport crux_devtools\n\nos.close(2)\nwhile True:\n    pass\n", r"fault_closes_stderr_then_hangs.py:[56]: TimeoutError"),
    "closes_every_file_then_hangs": (
        "import os\nimport crux_devtools\n\nos.closerange(3, 4096)\nwhile True:\n    pass\n",
        "fault_closes_every_file_then_hangs.py:1: WorkerExited: the worker process stopped answering and its exit status could not be read",
    ),
}


@pytest.fixture(scope="module")
def faulty_check(tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    """One `check` of a project with every fault in a module of its own, between two good modules."""
    root = tmp_path_factory.mktemp("faulty")
    (root / "a.py").write_text(GOOD_A, encoding="utf-8")
    for name, (text, _) in FAULTS.items():
        (root / f"fault_{name}.py").write_text(text, encoding="utf-8")
    (root / "z.py").write_text(GOOD_C, encoding="utf-8")
    return crux("check", str(root), "--timeout", "1")


@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_module_that_hangs_exits_or_crashes_the_worker_is_named_with_its_line(faulty_check: subprocess.CompletedProcess[str], fault: str) -> None:
    [line] = [line for line in faulty_check.stdout.splitlines() if line.startswith(f"fault_{fault}.py:")]
    assert re.match(FAULTS[fault][1], line), line


def test_every_other_module_is_still_checked(faulty_check: subprocess.CompletedProcess[str]) -> None:
    assert faulty_check.returncode == 1
    assert len(faulty_check.stdout.splitlines()) == len(FAULTS), faulty_check.stdout
    assert f"{len(FAULTS)} failure(s) in 2 prompt(s)" in faulty_check.stderr


def test_slow_imports_that_add_up_past_the_timeout_blame_nobody(tmp_path: Path) -> None:
    for i in range(6):
        (tmp_path / f"m_{i}.py").write_text(f"import time\nfrom crux_devtools import prompt\ntime.sleep(0.3)\np{i} = prompt('p{i}', system='x')\n", encoding="utf-8")
    done = crux("check", str(tmp_path), "--timeout", "1")
    assert done.returncode == 0, done.stdout
    assert "ok: 6 prompt(s)" in done.stdout


def test_a_callback_that_hangs_costs_only_its_prompt_even_after_a_crash_at_import(tmp_path: Path) -> None:
    """Two faults in one load, two fresh workers: a module that exits at import, then a prompt whose
    callback hangs; both named with their lines, and every other prompt (of the same module too) checked."""
    (tmp_path / "a.py").write_text("import os\nimport crux_devtools\nos._exit(3)\n", encoding="utf-8")
    (tmp_path / "b.py").write_text(
        "import time\nfrom crux_devtools import prompt\n\n\ndef slow(i):\n    while True:\n        time.sleep(0.01)\n\n\n"
        "before = prompt('before', system='fine')\nstuck = prompt('stuck', system=slow, examples={'one': {}})\n"
        "after = prompt('after', system='fine too')\n",
        encoding="utf-8",
    )
    (tmp_path / "c.py").write_text(GOOD_C, encoding="utf-8")
    done = crux("check", str(tmp_path), "--timeout", "1")
    assert done.returncode == 1
    first, second = done.stdout.splitlines()
    assert first.startswith("a.py:3: WorkerExited: user code called os._exit(3)"), first
    assert second.startswith("b.py:7: TimeoutError: user code did not finish within 1 s while evaluating prompt 'stuck' (example 'one')"), second
    assert "2 failure(s) in 3 prompt(s)" in done.stderr


# -- staleness per module, in a live session (the fork server and the primed spare, as `serve` runs) --
def greeting(name: str, text: str) -> str:
    return f"from crux_devtools import prompt\n\n{name} = prompt({name!r}, system={text!r})\n"


def system_of(report: dict[str, Any], prompt_id: str) -> tuple[str, bool]:
    [found] = [p for p in report["prompts"] if p["id"] == prompt_id]
    return found["examples"][0]["inspection"]["system"], found.get("stale", False)


async def front_ends_mark_only(session: Any, stale_id: str) -> None:
    """The web page's API and the TUI's tree mark the stale prompt only, not the whole report."""
    import httpx

    from crux_devtools.tui.report import prompt_status
    from crux_devtools.web.app import create_app

    transport = httpx.ASGITransport(app=create_app(session))
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:4400") as client:
        listed = (await client.get("/api/prompts")).json()
        page = (await client.get(f"/api/prompts/{stale_id}")).json()
    assert {p["id"]: p["stale"] for p in listed} == {p["id"]: p["id"] == stale_id for p in listed}
    assert page["stale"] is True
    report = session.report
    assert {p["id"]: prompt_status(p, report["stale"]) for p in report["prompts"]} == {
        p["id"]: "stale" if p["id"] == stale_id else "fits" for p in report["prompts"]
    }


async def test_a_broken_module_keeps_its_last_good_prompts_stale_while_edits_to_the_others_show(tmp_path: Path) -> None:
    from crux_devtools.inspector.session.service import ProjectSession

    (tmp_path / "a.py").write_text(greeting("alpha", "Alpha one."), encoding="utf-8")
    (tmp_path / "b.py").write_text(greeting("beta", "Beta one."), encoding="utf-8")
    async with ProjectSession(tmp_path, watch=False, history=False, timeout=1.0) as session:
        await session.settled()
        for broken in ("from crux_devtools import prompt\nbeta = prompt('beta', system='x'\n", "import crux_devtools\nwhile True:\n    pass\n"):
            (tmp_path / "b.py").write_text(broken, encoding="utf-8")
            (tmp_path / "a.py").write_text(greeting("alpha", f"Alpha {len(broken)}."), encoding="utf-8")
            await session.reload(["a.py", "b.py"])
            report = session.report
            assert report is not None
            assert system_of(report, "alpha") == (f"Alpha {len(broken)}.", False)  # the healthy module's edit shows
            assert system_of(report, "beta") == ("Beta one.", True)  # the broken one keeps its last good prompt
            assert report["stale"] is True
            [error] = report["errors"]
            assert error["file"] == "b.py" and error["type"] in ("SyntaxError", "TimeoutError")
            await front_ends_mark_only(session, "beta")
            # A stale prompt is still answered (budget, custom input) by the worker that loaded it.
            assert (await session.evaluate("beta"))["inspection"]["system"] == "Beta one."
            assert (await session.evaluate("alpha"))["inspection"]["system"] == f"Alpha {len(broken)}."
            await session.settled()
        (tmp_path / "b.py").write_text(greeting("beta", "Beta two."), encoding="utf-8")
        await session.reload(["b.py"])
        fixed = session.report
    assert fixed is not None and fixed["errors"] == [] and fixed["stale"] is False
    assert [system_of(fixed, p) for p in ("alpha", "beta")] == [(f"Alpha {len(broken)}.", False), ("Beta two.", False)]


async def test_a_module_that_kills_forked_workers_is_isolated_in_a_live_session(tmp_path: Path) -> None:
    """The same faults through the fork server (what `serve` and `tui` use): noisy, fd-closing, exiting."""
    from crux_devtools.inspector.session.service import ProjectSession

    (tmp_path / "a.py").write_text(GOOD_A, encoding="utf-8")
    faults = [
        ("import crux_devtools\nfor i in range(1000):\n    print('line', i)\nwhile True:\n    pass\n", "TimeoutError", (4, 5)),
        ("import os\nimport crux_devtools\nos.close(2)\nwhile True:\n    pass\n", "TimeoutError", (4, 5)),
        ("import os\nimport crux_devtools\nos._exit(9)\n", "WorkerExited", (3,)),
        ("import ctypes\nimport crux_devtools\nctypes.string_at(0)\n", "WorkerExited", (3,)),
    ]
    async with ProjectSession(tmp_path, watch=False, history=False, timeout=1.0) as session:
        for text, kind, lines in faults:
            (tmp_path / "b.py").write_text(text, encoding="utf-8")
            await session.reload(["b.py"])
            report = session.report
            assert report is not None
            [error] = report["errors"]
            assert (error["file"], error["type"]) == ("b.py", kind), error
            assert error["line"] in lines, error
            assert [p["id"] for p in report["prompts"]] == ["alpha"]
            await session.settled()


async def test_a_library_outside_the_project_is_shown_as_it_is_now_after_one_save(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The primed spare pre-imports the libraries the last load used; one that changed since is not reused."""
    from crux_devtools.inspector.session.service import ProjectSession

    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "house_style.py").write_text("TEXT = 'Old style.'\n", encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", str(lib))
    root = tmp_path / "project"
    root.mkdir()
    (root / "styled.py").write_text(
        "import house_style\nfrom crux_devtools import prompt\n\nstyled = prompt('styled', system=house_style.TEXT)\n", encoding="utf-8"
    )
    async with ProjectSession(root, watch=False, history=False) as session:
        await session.settled()  # the spare is primed: it has imported house_style
        (lib / "house_style.py").write_text("TEXT = 'The new house style.'\n", encoding="utf-8")
        await session.reload(["styled.py"])  # one save in the project
        assert session.report is not None
        assert system_of(session.report, "styled") == ("The new house style.", False)
