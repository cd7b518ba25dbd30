"""Each in-process worker keeps its own record of the libraries its ``prime`` imported, as a worker
process does: a library saved after one worker primed it makes that worker refuse its load (a fresh
worker must read the new source), and leaves another worker, which never imported it, loading."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from crux_devtools.inspector.transport.inprocess import InProcessWorker
from crux_devtools.inspector.worker import main as worker_main

PROJECTS = Path(__file__).resolve().parents[2] / "projects"
LIBRARY = "house_primed_library"


@pytest.fixture
def library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "site"
    folder.mkdir()
    source = folder / f"{LIBRARY}.py"
    source.write_text("GREETING = 'hello'\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    yield source
    sys.modules.pop(LIBRARY, None)


def load_request(root: Path) -> dict[str, object]:
    return {"root": str(root), "modules": [{"name": "prompts", "path": str(root / "prompts.py"), "package": False}]}


async def test_a_library_saved_after_one_worker_primed_it_stales_that_worker_only(tmp_path: Path, library: Path) -> None:
    root = tmp_path / "project"
    shutil.copytree(PROJECTS / "good", root)
    before = dict(worker_main._primed_files)
    primed, other = InProcessWorker(root), InProcessWorker(root)
    try:
        warmed = await primed.call("prime", {"root": str(root), "modules": [LIBRARY], "texts": []}, 30)
        assert warmed["ok"] and warmed["result"]["modules"] == 1, warmed
        assert worker_main._primed_files == before  # the test process's record is not the worker's

        library.write_text("GREETING = 'hello, and welcome'\n", encoding="utf-8")  # another size: changed on any clock

        stale = await primed.call("load", load_request(root), 30)
        assert not stale["ok"] and stale["error"]["type"] == "StaleWorker", stale
        assert LIBRARY in stale["error"]["message"] and "changed after this worker imported it" in stale["error"]["message"]
        fresh = await other.call("load", load_request(root), 30)
        assert fresh["ok"], fresh
    finally:
        await primed.close()
        await other.close()
