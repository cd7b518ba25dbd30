"""At rest, the truth covers the SQLite stores the project reads: the application adds a memory fact
to the project's ``MemoryStore`` (a real SQLite file in WAL mode, written by another process's
connection, as an application would), and the served report shows it, verified, as a fresh load does.
Real session, real workers, the real watcher."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from waits import until_async

from crux_devtools import MemoryStore
from crux_devtools.inspector.report_types import Report
from crux_devtools.inspector.session.service import ProjectSession

PROJECT = '''
from pathlib import Path

from crux_devtools import MemoryStore, facts, memory, prompt

store = MemoryStore(Path(__file__).with_name("memory.sqlite3"))
customer = memory("customer-memory", store=store, namespace="user:dana", blocks=[facts("facts", max_tokens=200)], fact_tool=None)
ask = prompt("ask", system="You are support.", use=[customer], examples={"default": {}})
'''


def system_text(report: Report | None) -> str:
    assert report is not None
    prompt = next(p for p in report["prompts"] if p["id"] == "ask")
    return str(prompt["examples"][0]["inspection"]["system"])  # type: ignore[index]


@pytest.fixture
async def session(tmp_path: Path) -> AsyncIterator[ProjectSession]:
    seed = MemoryStore(tmp_path / "memory.sqlite3")
    seed.remember("user:dana", "Dana prefers email.")
    seed.close()
    (tmp_path / "app.py").write_text(PROJECT)
    project = ProjectSession(tmp_path, history=False, verify_after=0.2)
    await project.start()
    try:
        yield project
    finally:
        await project.stop()


async def test_a_fact_the_application_adds_to_a_memory_store_is_shown_and_verified(session: ProjectSession) -> None:
    assert "Dana prefers email." in system_text(session.report)
    assert session.is_watched("memory.sqlite3") and session.is_watched("memory.sqlite3-wal")
    application = MemoryStore(session.root / "memory.sqlite3")  # the application, with its own connection
    try:
        application.remember("user:dana", "Dana's plan renews on May 3.")
        await until_async(lambda: "Dana's plan renews on May 3." in system_text(session.report), "the served report shows the new fact")
        await until_async(lambda: bool(session.report and session.report["verified"]), "the report is verified again")
    finally:
        application.close()
    fresh = ProjectSession(session.root, watch=False, history=False, prewarm=False)
    async with fresh:
        assert system_text(fresh.report) == system_text(session.report)  # what a fresh inspect shows


async def test_a_store_the_project_writes_as_it_loads_is_not_watched(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(PROJECT.replace('blocks=', 'blocks=').replace(
        'ask = prompt(', 'store.remember("user:dana", "seen at import")\nask = prompt('))
    async with ProjectSession(tmp_path, watch=False, history=False, prewarm=False) as project:
        assert "seen at import" in system_text(project.report)
        assert not project.is_watched("memory.sqlite3")  # its own write would reload it forever
