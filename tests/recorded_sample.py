"""The sample project with the runs its ``record_demo.py`` records, for the tests that read, replay,
send or fork recorded runs (the CLI, the web page, the browser, the TUI, the session).

Recording costs a process and about a second of CPU, so it is done once per test process, by a real
process as a user runs it; each test gets its own copy, which it may change.
"""

from __future__ import annotations

import atexit
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from crux_devtools.core.record.runstore import RunStore

REPO = Path(__file__).resolve().parents[1]
_RECORDING: list[Path] = []  # the one recording of this test process, made by its first ``record_sample``


def recording() -> Path:
    """The sample project after a real process ran ``record_demo.py`` in it, recorded once per test
    process and removed when the process ends."""
    if not _RECORDING:
        folder = Path(tempfile.mkdtemp(prefix="crux-recorded-sample-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        project = folder / "sample"
        shutil.copytree(REPO / "sample_project", project, ignore=shutil.ignore_patterns(".crux", "__pycache__"))
        done = subprocess.run([sys.executable, str(project / "record_demo.py")], capture_output=True, text=True, timeout=300, cwd=folder)
        assert done.returncode == 0, done.stderr
        _RECORDING.append(project)
    return _RECORDING[0]


def record_sample(tmp_path: Path) -> Path:
    """A copy of the sample project with the runs ``record_demo.py`` records (its newest: two steps,
    tool traffic): the test's own copy of ``recording()``, at ``tmp_path / "sample"``."""
    project = tmp_path / "sample"
    shutil.copytree(recording(), project, ignore=shutil.ignore_patterns("__pycache__"))
    return project


def newest_run(project: Path) -> dict[str, Any]:
    """The run the project's store recorded last (``record_sample``'s: two steps, tool traffic)."""
    store = RunStore.for_project(project)
    run = store.get(str(store.list()[-1]["id"]))
    assert run is not None
    return run
