"""Incremental evaluation: a save re-imports and re-evaluates what it concerns, and only
files that can change a report are watched. Real files and the real watcher; the session's workers
answer in this process (``inprocess.in_process``: each keeps its own modules, as a worker process
does), except where the worker process is the subject: a library outside the project, an update that
ends or hangs the worker, the ops a worker process answers, its spare's priming."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from waits import WAIT, watcher_caught_up

from crux_devtools.inspector.api import SessionEvent
from crux_devtools.inspector.transport.inprocess import in_process
from crux_devtools.inspector.transport.process import SpawnedWorker
from crux_devtools.inspector.transport.wire import MalformedRequest
from crux_devtools.inspector.session.service import ProjectSession

LOGGED = "from pathlib import Path\n\nwith open(Path(__file__).with_name('imports.log'), 'a', encoding='utf-8') as _log:\n    _log.write({name!r} + '\\n')\n\n"

COMMON = LOGGED.format(name="common") + "from crux_devtools import context\n\ntone = context('tone', system={tone!r})\n"
ALPHA = LOGGED.format(name="alpha") + "from common import tone\nfrom crux_devtools import prompt\n\nalpha = prompt('alpha', system='Alpha.', use=[tone])\n"
GAMMA = LOGGED.format(name="gamma") + "import common\nfrom crux_devtools import prompt\n\ngamma = prompt('gamma', system='Gamma.', use=[common.tone])\n"
BETA = LOGGED.format(name="beta") + "from crux_devtools import prompt\n\nbeta = prompt('beta', system={text!r})\n"
READER = LOGGED.format(name="reader") + (
    "from crux_devtools import prompt\n\n"
    "GUIDE = (Path(__file__).parent / 'notes' / 'guide.md').read_text(encoding='utf-8')\n"
    "reader = prompt('reader', system=GUIDE)\n"
)
PYPROJECT = '[project]\nname = "p"\nversion = "0"\n\n[tool.crux-devtools]\nwatch_ignore = ["scratch/", "*.cache.txt"]\n'


def make_project(root: Path) -> Path:
    root.mkdir(exist_ok=True)
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    (root / "common.py").write_text(COMMON.format(tone="Be kind."), encoding="utf-8")
    (root / "alpha.py").write_text(ALPHA, encoding="utf-8")
    (root / "gamma.py").write_text(GAMMA, encoding="utf-8")
    (root / "beta.py").write_text(BETA.format(text="Beta one."), encoding="utf-8")
    (root / "notes").mkdir(exist_ok=True)
    (root / "notes" / "guide.md").write_text("Guide one.", encoding="utf-8")
    (root / "reader.py").write_text(READER, encoding="utf-8")
    return root


def system(session: ProjectSession, prompt_id: str) -> str:
    assert session.report is not None
    [prompt] = [p for p in session.report["prompts"] if p["id"] == prompt_id]
    return str(prompt["examples"][0]["inspection"]["system"])


def log_lines(root: Path) -> list[str]:
    return (root / "imports.log").read_text(encoding="utf-8").splitlines()


class Live:
    """A watching session and the report/error events it sent."""

    def __init__(self, session: ProjectSession) -> None:
        self.session = session
        self.events: asyncio.Queue[SessionEvent] = asyncio.Queue()
        session.subscribe(lambda e: self.events.put_nowait(e) if e.kind in ("report", "error") else None)

    async def next(self, timeout: float = WAIT) -> SessionEvent:
        return await asyncio.wait_for(self.events.get(), timeout)

    async def settled(self) -> None:
        """Wait until the session is at rest (its report verified), dropping the events until then."""
        await self.session.settled()
        while not self.events.empty():
            self.events.get_nowait()

    async def quiet(self) -> None:
        """Assert no report or error event came of any change made so far, once the watcher passed
        them all on and the session settled (``watcher_caught_up``; the mark matches ``*.cache.txt``)."""
        await watcher_caught_up(self.session, "watch-mark.cache.txt")
        assert self.events.empty(), self.events.get_nowait().summary


@pytest.fixture
async def live(tmp_path: Path) -> AsyncIterator[Live]:
    root = make_project(tmp_path / "project")
    session = ProjectSession(root, history=False, debounce=0.01, transport=in_process)
    await session.start()
    await session.settled()
    try:
        yield Live(session)
    finally:
        await session.stop()


async def until(predicate: Callable[[], bool], timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)


async def test_the_first_load_is_full_and_says_every_prompt_was_evaluated(live: Live) -> None:
    report = live.session.report
    assert report is not None and not report["errors"], report and report["errors"]
    assert report["load"] == "full"
    assert sorted(report["reevaluated"]) == ["alpha", "beta", "gamma", "reader"]
    assert sorted(log_lines(live.session.root)) == ["alpha", "beta", "common", "gamma", "reader"]


async def test_a_save_to_one_module_does_not_reimport_or_reevaluate_an_unrelated_module(live: Live) -> None:
    root = live.session.root
    before = live.session.report
    assert before is not None
    logged = len(log_lines(root))
    (root / "beta.py").write_text(BETA.format(text="Beta two."), encoding="utf-8")
    event = await live.next()
    assert event.kind == "report", event.summary
    assert (event.load, event.reevaluated) == ("incremental", ["beta"])
    report = live.session.report
    assert report is not None and (report["load"], report["reevaluated"]) == ("incremental", ["beta"])
    assert system(live.session, "beta") == "Beta two."
    assert log_lines(root)[logged:] == ["beta"]  # no other module's import-time code ran again
    old = {p["id"]: p for p in before["prompts"]}
    for prompt in report["prompts"]:
        if prompt["id"] != "beta":
            assert prompt == old[prompt["id"]]  # kept as it was
    assert "4 prompt(s)" in event.summary and "1 re-evaluated" in event.summary


async def test_a_change_to_a_shared_context_reevaluates_every_prompt_that_uses_it(live: Live) -> None:
    root = live.session.root
    logged = len(log_lines(root))
    (root / "common.py").write_text(COMMON.format(tone="Be very kind."), encoding="utf-8")
    event = await live.next()
    assert event.kind == "report", event.summary
    assert event.load == "incremental"
    assert sorted(event.reevaluated) == ["alpha", "gamma"]
    assert sorted(log_lines(root)[logged:]) == ["alpha", "common", "gamma"]  # beta and reader: not again
    assert system(live.session, "alpha").endswith("Be very kind.")
    assert system(live.session, "gamma").endswith("Be very kind.")
    assert sorted(event.changed_prompts) == ["alpha", "gamma"]


async def test_writing_logs_databases_tool_state_and_ignored_or_unread_files_reloads_nothing(live: Live) -> None:
    """Unread files are verified (a fresh load in the background) but re-evaluate nothing and change
    no report; ignored ones do not even do that."""
    root = live.session.root
    evaluations = live.session.evaluations
    version = live.session.report and live.session.report["version"]
    (root / "scratch").mkdir()
    writes = {
        "app.log": "a log line\n",
        "memory.sqlite3": "not really a database",
        "data.db": "x",
        ".crux/state.json": "{}",
        "scratch/notes.py": "x = 1\n",  # watch_ignore = ["scratch/", ...]
        "big.cache.txt": "cached",  # watch_ignore = [..., "*.cache.txt"]
        "notes/other.md": "no module read this file",
        "README.txt": "nor this one",
    }
    for name, text in writes.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    await live.quiet()
    await live.settled()
    assert live.session.evaluations == evaluations
    assert live.session.report is not None and live.session.report["version"] == version
    assert (live.session.verifications, live.session.disagreements) == (1, 0)  # notes/other.md, README.txt
    # The watcher is alive all along: a watched save is seen.
    (root / "beta.py").write_text(BETA.format(text="Beta three."), encoding="utf-8")
    event = await live.next()
    assert event.reevaluated == ["beta"] and live.session.evaluations == evaluations + 1


async def test_editing_a_data_file_a_module_read_at_import_reevaluates_that_modules_prompts(live: Live) -> None:
    root = live.session.root
    assert live.session.is_watched("notes/guide.md")
    logged = len(log_lines(root))
    (root / "notes" / "guide.md").write_text("Guide two.", encoding="utf-8")
    event = await live.next()
    assert event.kind == "report", event.summary
    assert (event.load, event.reevaluated) == ("incremental", ["reader"])
    assert system(live.session, "reader") == "Guide two."
    assert log_lines(root)[logged:] == ["reader"]


async def test_a_change_to_pyproject_toml_and_a_new_module_reload_in_full(live: Live) -> None:
    root = live.session.root
    (root / "pyproject.toml").write_text(PYPROJECT + 'default_model = "gpt-4o"\n', encoding="utf-8")
    event = await live.next()
    assert event.load == "full", event.summary
    assert sorted(event.reevaluated) == ["alpha", "beta", "gamma", "reader"]
    (root / "delta.py").write_text("from crux_devtools import prompt\n\ndelta = prompt('delta', system='Delta.')\n", encoding="utf-8")
    event = await live.next()
    assert event.load == "full", event.summary
    assert system(live.session, "delta") == "Delta."
    assert live.session.report is not None and len(live.session.report["prompts"]) == 5


async def test_a_library_outside_the_project_that_changed_is_shown_new_after_one_save(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "house_style.py").write_text("TEXT = 'Old style.'\n", encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", str(lib))
    root = make_project(tmp_path / "project")
    (root / "styled.py").write_text(
        "import house_style\nfrom crux_devtools import prompt\n\nstyled = prompt('styled', system=house_style.TEXT)\n", encoding="utf-8"
    )
    async with ProjectSession(root, history=False, debounce=0.01) as session:
        live = Live(session)
        await live.settled()
        assert system(session, "styled") == "Old style."
        (root / "beta.py").write_text(BETA.format(text="Beta two."), encoding="utf-8")
        assert (await live.next()).load == "incremental"  # the held worker is in use
        await live.settled()
        (lib / "house_style.py").write_text("TEXT = 'The new house style.'\n", encoding="utf-8")
        (root / "beta.py").write_text(BETA.format(text="Beta three."), encoding="utf-8")  # one save in the project
        event = await live.next()
        assert event.kind == "report", event.summary
        assert event.load == "full"
        assert system(session, "styled") == "The new house style."
        assert system(session, "beta") == "Beta three."


@pytest.mark.parametrize(
    ("fault", "kind"),
    [("import os\nos._exit(3)\n", "WorkerExited"), ("while True:\n    pass\n", "TimeoutError")],
)
async def test_an_update_that_ends_or_hangs_the_worker_falls_back_to_a_full_load_with_the_right_report(
    tmp_path: Path, fault: str, kind: str
) -> None:
    root = make_project(tmp_path / "project")
    async with ProjectSession(root, history=False, debounce=0.01, timeout=2.0) as session:
        live = Live(session)
        await live.settled()
        held = session._worker
        (root / "beta.py").write_text(BETA.format(text="Beta two.") + fault, encoding="utf-8")
        event = await live.next()
        assert event.kind == "error", event.summary
        assert session.fallbacks == 1 and event.load == "full"
        assert held is not None and not held.alive
        report = session.report
        assert report is not None
        [error] = report["errors"]
        assert (error["file"], error["type"]) == ("beta.py", kind), error
        prompts = {p["id"]: p for p in report["prompts"]}
        assert sorted(prompts) == ["alpha", "beta", "gamma", "reader"]
        assert prompts["beta"]["stale"] and not prompts["alpha"]["stale"]
        assert system(session, "beta") == "Beta one."  # its last good version, marked stale
        assert system(session, "alpha").endswith("Be kind.")
        # Fixed: back to normal, and the next save is incremental again.
        (root / "beta.py").write_text(BETA.format(text="Beta three."), encoding="utf-8")
        event = await live.next()
        assert event.kind == "report", event.summary
        assert system(session, "beta") == "Beta three."
        await live.settled()
        (root / "beta.py").write_text(BETA.format(text="Beta four."), encoding="utf-8")
        event = await live.next()
        assert (event.kind, event.load, event.reevaluated) == ("report", "incremental", ["beta"])


async def test_a_broken_module_in_an_update_keeps_its_last_good_prompt_stale_and_still_evaluates_it(live: Live) -> None:
    root = live.session.root
    (root / "beta.py").write_text(BETA.format(text="Beta two.") + "raise ValueError('broken on purpose')\n", encoding="utf-8")
    event = await live.next()
    assert (event.kind, event.load) == ("error", "incremental"), event.summary
    report = live.session.report
    assert report is not None
    [error] = report["errors"]
    assert (error["file"], error["type"]) == ("beta.py", "ValueError")
    prompts = {p["id"]: p for p in report["prompts"]}
    assert prompts["beta"]["stale"] and system(live.session, "beta") == "Beta one."
    answer = await live.session.evaluate("beta", token_budget=1000)
    assert answer["error"] is None and answer["inspection"]["system"] == "Beta one."
    # The fix loads in full: the held worker keeps beta's last good version, and an update that
    # crashed it would lose that; the next save is incremental again.
    (root / "beta.py").write_text(BETA.format(text="Beta five."), encoding="utf-8")
    event = await live.next()
    assert (event.kind, event.load) == ("report", "full"), event.summary
    assert system(live.session, "beta") == "Beta five." and not live.session.report["stale"]  # type: ignore[index]
    await live.settled()
    (root / "alpha.py").write_text(ALPHA.replace("Alpha.", "Alpha two."), encoding="utf-8")
    event = await live.next()
    assert (event.kind, event.load, event.reevaluated) == ("report", "incremental", ["alpha"])


async def test_a_bad_watch_ignore_is_a_config_error_at_its_line(tmp_path: Path) -> None:
    root = make_project(tmp_path / "project")
    (root / "pyproject.toml").write_text('[project]\nname = "p"\n\n[tool.crux-devtools]\nwatch_ignore = "*.csv"\n', encoding="utf-8")
    async with ProjectSession(root, history=False, watch=False, transport=in_process) as session:
        report = session.report
        assert report is not None
        [error] = report["errors"]
        assert (error["file"], error["line"], error["type"]) == ("pyproject.toml", 5, "ConfigError")
        assert "watch_ignore must be a list of glob patterns" in error["message"] and "'*.csv'" in error["message"]
        assert len(report["prompts"]) == 4  # the prompts are still shown


async def test_an_unknown_worker_op_lists_the_ops_of_the_table(tmp_path: Path) -> None:
    worker = await SpawnedWorker.start(tmp_path)
    try:
        answer: dict[str, Any] = await worker.send_unchecked({"op": "reticulate"}, 30)
        assert not answer["ok"]
        message = answer["error"]["message"]
        assert "unknown op 'reticulate'" in message
        for op in ("ping", "prime", "load", "update", "evaluate", "run", "prepare"):
            assert op in message
        # the worker checks a request on receipt too: a field of the wrong type is named, nothing runs
        answer = await worker.send_unchecked({"op": "prime", "root": str(tmp_path), "modules": "racy_style", "texts": []}, 30)
        assert not answer["ok"] and answer["error"]["type"] == "MalformedRequest"
        assert "malformed request to 'prime': request.modules is str, expected a list" in answer["error"]["message"]
        with pytest.raises(MalformedRequest, match=r"request to 'update': request.files is str, expected a list"):
            await worker.call("update", {"files": "a.py"}, 30)  # the sender refuses it before writing a line
        with pytest.raises(MalformedRequest, match=r"request.flies is not a field of UpdateRequest \(its fields: files, retry"):
            await worker.call("update", {"files": [], "flies": []}, 30)
        assert (await worker.call("ping", {}, 30))["ok"]  # and the worker still answers
        answer = await worker.call("update", {"files": []}, 30)
        assert not answer["ok"] and "send 'load' first" in answer["error"]["message"]
    finally:
        await worker.close()


async def test_a_library_saved_while_the_spare_imports_it_makes_the_spare_stale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The spare stamps a library's file before importing it: a save during the import is not missed."""
    lib = tmp_path / "lib"
    lib.mkdir()
    # Importing it stands for a save that lands while the spare imports it: the file changes meanwhile.
    (lib / "racy_style.py").write_text(
        "from pathlib import Path\nPath(__file__).write_text(\"TEXT = 'New style, saved during the import.'\\n\")\nTEXT = 'Old style.'\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("PYTHONPATH", str(lib))
    root = make_project(tmp_path / "project")
    worker = await SpawnedWorker.start(root)
    try:
        primed = await worker.call("prime", {"root": str(root), "modules": ["racy_style"], "texts": []}, 30)
        assert primed["ok"] and primed["result"]["modules"] == 1, primed
        answer = await worker.call("load", {"root": str(root), "modules": []}, 30)
        assert not answer["ok"]
        assert answer["error"]["type"] == "StaleWorker" and "racy_style.py changed" in answer["error"]["message"]
    finally:
        await worker.close()


async def test_a_file_a_module_reads_and_writes_at_import_is_not_watched(tmp_path: Path) -> None:
    """Reading and then rewriting a cache at import must not reload the module forever."""
    root = make_project(tmp_path / "project")
    (root / "cache.json").write_text("0", encoding="utf-8")
    (root / "cached.py").write_text(
        "from pathlib import Path\nfrom crux_devtools import prompt\n\n"
        "CACHE = Path(__file__).with_name('cache.json')\n"
        "count = int(CACHE.read_text()) + 1\nCACHE.write_text(str(count))\n"
        "cached = prompt('cached', system='Cached.')\n",
        encoding="utf-8",
    )
    async with ProjectSession(root, history=False, debounce=0.01, transport=in_process) as session:
        live = Live(session)
        await live.settled()
        assert not session.is_watched("cache.json") and session.is_watched("notes/guide.md")
        await live.quiet()
        assert (root / "cache.json").read_text() == "1"  # imported once


async def test_the_web_list_says_how_many_prompts_a_save_re_evaluated(live: Live) -> None:
    import httpx

    from crux_devtools.web.app import create_app

    app = create_app(live.session, manage_session=False)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as client:
        first = (await client.get("/")).text
        assert "evaluated in" in first and 'id="reevaluated"' not in first  # the first load is full
        (live.session.root / "beta.py").write_text(BETA.format(text="Beta three."), encoding="utf-8")
        assert (await live.next()).kind == "report"
        page = (await client.get("/")).text
    assert '">1 re-evaluated</span> in' in page
