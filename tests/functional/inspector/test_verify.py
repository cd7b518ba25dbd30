"""At rest, the truth: whatever user code does at import, once the saves settle the report served
equals a fresh load of the same files (a new session, its own fresh worker). Each case is a change
the incremental update cannot see; a fresh load in the background (the verification) must correct it.
Real sessions and the real watcher; their workers answer in this process (``inprocess.in_process``:
each keeps its own project modules, as a worker process does), except where a case is about what
only a process keeps to itself (the skills it loaded, a thread user code started)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from crux_devtools.inspector.report_types import Report
from crux_devtools.inspector.session.service import ProjectSession
from crux_devtools.inspector.transport.inprocess import in_process
from crux_devtools.inspector.transport.pool import StartWorker

BOUND = 60.0  # seconds: only a failure bound, never a wait


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def comparable(report: Report | None) -> tuple[list[dict[str, Any]], list[tuple[Any, ...]]]:
    """What a report says (its current prompts and errors), not how or when it was made."""
    assert report is not None
    prompts = [{k: v for k, v in p.items() if k != "stale"} for p in report["prompts"] if not p.get("stale")]
    errors = [(e["file"], e["line"], e["type"], e["message"]) for e in report["errors"]]
    return prompts, errors


async def fresh(root: Path, transport: StartWorker | None) -> tuple[list[dict[str, Any]], list[tuple[Any, ...]]]:
    """A fresh full load of the files as they are now, in a session of its own."""
    async with ProjectSession(root, watch=False, history=False, transport=transport) as session:
        return comparable(session.report)


async def until(predicate: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + BOUND
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"not in {BOUND:.0f} s: {what}")
        await asyncio.sleep(0.05)


def system(report: Report | None, prompt_id: str) -> str:
    assert report is not None
    [prompt] = [p for p in report["prompts"] if p["id"] == prompt_id]
    return str(prompt["examples"][0]["inspection"]["system"])


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    write(root, {"pyproject.toml": '[project]\nname = "p"\nversion = "0"\n'})
    return root


@pytest.fixture
async def start(project: Path) -> AsyncIterator[Callable[[dict[str, str]], Any]]:
    sessions: list[ProjectSession] = []

    async def started(files: dict[str, str], transport: StartWorker | None = in_process) -> ProjectSession:
        """A session of ``files`` at rest, its workers in this process unless ``transport`` is None
        (worker processes: where what a process keeps to itself, or a thread of user code, is the case)."""
        write(project, files)
        session = ProjectSession(project, history=False, debounce=0.01, transport=transport)
        sessions.append(session)
        await session.start()
        await session.settled()
        return session

    yield started
    for session in sessions:
        await session.stop()


async def truth_at_rest(session: ProjectSession, change: Callable[[], None]) -> Report:
    """Make the change, then wait until the report served is verified and equals a fresh load."""
    change()
    expected = await fresh(session.root, session._pool.start)
    served = lambda: comparable(session.report) == expected and bool(session.report and session.report["verified"])  # noqa: E731
    await until(served, "the report served equals a fresh load of the same files, verified")
    await session.settled()
    assert comparable(session.report) == expected  # and stays so at rest
    assert session.report is not None and session.report["verified"]
    return session.report


PROMPT = "from crux_devtools import prompt\n"


async def test_a_module_appending_to_another_modules_list_at_import_shows_the_truth(start: Any) -> None:
    session = await start({
        "registry.py": "RULES = []\n",
        "a1.py": "import registry\nregistry.RULES.append('A1')\n",
        "show.py": PROMPT + "import registry\nimport a1  # noqa: F401\n\nshow = prompt('show', system='rules: ' + ','.join(registry.RULES))\n",
    })
    assert system(session.report, "show") == "rules: A1"
    report = await truth_at_rest(session, lambda: write(session.root, {"a1.py": "import registry\nregistry.RULES.append('A2')\n"}))
    assert system(report, "show") == "rules: A2"
    assert report["disagreements"] >= 1 and session.disagreements >= 1


async def test_a_module_changing_a_class_attribute_at_import_shows_the_new_value(start: Any) -> None:
    session = await start({
        "settings.py": "class Settings:\n    tone = 'kind'\n",
        "patch.py": PROMPT + "import settings\nsettings.Settings.tone = 'curt'\n",
        "show.py": PROMPT + "import settings\n\nshow = prompt('show', system=lambda _: 'Be ' + settings.Settings.tone + '.')\n",
    })
    assert system(session.report, "show") == "Be curt."
    report = await truth_at_rest(session, lambda: write(session.root, {"patch.py": PROMPT + "import settings\nsettings.Settings.tone = 'brief'\n"}))
    assert system(report, "show") == "Be brief."


async def test_a_module_imported_by_importlib_when_evaluated_shows_its_new_text(start: Any) -> None:
    session = await start({
        "texts.py": "TEXT = 'Text one.'\n",
        "show.py": PROMPT + "import importlib\n\nshow = prompt('show', system=lambda _: importlib.import_module('texts').TEXT)\n",
    })
    report = await truth_at_rest(session, lambda: write(session.root, {"texts.py": "TEXT = 'Text two.'\n"}))
    assert system(report, "show") == "Text two."


async def test_a_shared_module_imported_once_by_import_and_once_by_importlib_updates_both(start: Any) -> None:
    session = await start({
        "shared.py": "TEXT = 'Shared one.'\n",
        "a.py": PROMPT + "import shared\n\npa = prompt('pa', system=shared.TEXT)\n",
        "b.py": PROMPT + "import importlib\n\npb = prompt('pb', system=importlib.import_module('shared').TEXT)\n",
    })
    report = await truth_at_rest(session, lambda: write(session.root, {"shared.py": "TEXT = 'Shared two.'\n"}))
    assert system(report, "pa") == system(report, "pb") == "Shared two."


async def test_creating_a_module_an_import_error_was_caught_for_shows_it(start: Any) -> None:
    session = await start({
        "show.py": PROMPT + "try:\n    import extra_rules\n    RULE = extra_rules.RULE\nexcept ImportError:\n    RULE = 'no extra rules'\n\n"
        "show = prompt('show', system=RULE)\n",
    })
    assert system(session.report, "show") == "no extra rules"
    report = await truth_at_rest(session, lambda: write(session.root, {"extra_rules.py": "RULE = 'Strict rules.'\n"}))
    assert system(report, "show") == "Strict rules."


async def test_a_python_file_read_as_data_shows_its_new_text(start: Any) -> None:
    session = await start({
        "snippets/example.py": "print('one')\n",
        "show.py": PROMPT + "from pathlib import Path\n\n"
        "show = prompt('show', system=(Path(__file__).parent / 'snippets' / 'example.py').read_text())\n",
    })
    report = await truth_at_rest(session, lambda: write(session.root, {"snippets/example.py": "print('two')\n"}))
    assert system(report, "show") == "print('two')\n"


async def test_a_file_whose_existence_a_prompt_checks_is_seen_when_created(start: Any) -> None:
    session = await start({
        "show.py": PROMPT + "from pathlib import Path\n\n"
        "MODE = 'maintenance' if Path(__file__).with_name('MAINTENANCE').exists() else 'normal'\nshow = prompt('show', system=MODE)\n",
    })
    assert system(session.report, "show") == "normal"
    report = await truth_at_rest(session, lambda: write(session.root, {"MAINTENANCE": ""}))
    assert system(report, "show") == "maintenance"


READS = PROMPT + "from pathlib import Path\n\nshow = prompt('show', system=(Path(__file__).parent / {path!r}).read_text())\n"


async def test_re_pointing_a_symlink_a_prompt_reads_shows_the_new_target(project: Path, start: Any) -> None:
    write(project, {"v1.md": "Version one.", "v2.md": "Version two."})
    os.symlink("v1.md", project / "current.md")
    session = await start({"show.py": READS.format(path="current.md")})
    root = session.root
    assert system(session.report, "show") == "Version one."

    def re_point() -> None:
        os.symlink("v2.md", root / "current.tmp")
        os.replace(root / "current.tmp", root / "current.md")

    report = await truth_at_rest(session, re_point)
    assert system(report, "show") == "Version two."


async def test_a_file_behind_a_symlinked_folder_shows_its_new_text(project: Path, start: Any) -> None:
    write(project, {"assets/v1/persona.md": "Persona one."})
    os.symlink("assets/v1", project / "data")
    session = await start({"show.py": READS.format(path="data/persona.md")})
    assert system(session.report, "show") == "Persona one."
    report = await truth_at_rest(session, lambda: write(session.root, {"assets/v1/persona.md": "Persona two."}))
    assert system(report, "show") == "Persona two."


async def test_swapping_a_folder_the_prompts_read_shows_the_new_folder(start: Any) -> None:
    session = await start({"data/persona.md": "Old persona.", "new/data/persona.md": "New persona.", "show.py": READS.format(path="data/persona.md")})
    root = session.root

    def swap() -> None:
        (root / "data").rename(root / "data_old")
        (root / "new" / "data").rename(root / "data")

    report = await truth_at_rest(session, swap)
    assert system(report, "show") == "New persona."


async def test_two_prompts_reading_one_file_outside_the_project_show_one_version(project: Path, start: Any) -> None:
    outside = project.parent / "outside.md"
    outside.write_text("Outside one.", encoding="utf-8")
    reads = PROMPT + f"from pathlib import Path\n\n{{name}} = prompt({{name!r}}, system=Path({str(outside)!r}).read_text())\n"
    session = await start({"m1.py": reads.format(name="m1"), "m2.py": reads.format(name="m2")})

    def change_then_save_one() -> None:
        outside.write_text("Outside two.", encoding="utf-8")
        write(session.root, {"m1.py": reads.format(name="m1") + "# saved\n"})

    report = await truth_at_rest(session, change_then_save_one)
    assert system(report, "m1") == system(report, "m2") == "Outside two."


@pytest.mark.parametrize("path", [".env", "env/settings.txt"])
async def test_a_dotenv_file_or_a_file_in_an_env_folder_read_at_import_shows_its_new_text(start: Any, path: str) -> None:
    session = await start({path: "TONE=kind", "show.py": READS.format(path=path)})
    assert system(session.report, "show") == "TONE=kind"
    report = await truth_at_rest(session, lambda: write(session.root, {path: "TONE=curt"}))
    assert system(report, "show") == "TONE=curt"


SKILLS = (
    "from pathlib import Path\n"
    "from crux_devtools import ModelCapacityProfile, ScriptedModel, agent, prompt, skill, tool_call\n\n"
    "SKILLS = skill.from_folder(Path(__file__).parent / 'skills')\n"
    "ask = prompt('ask', system='Help.', prompt='A refund, please.', use=SKILLS)\n"
    "helper = agent('helper', prompt=ask, model=ScriptedModel([[tool_call('load_skill', {'name': 'refunds'})], 'Done.'],"
    " capacity=ModelCapacityProfile(100_000, 0, 'exact')))\n"
)


def skill_file(name: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: The {name} skill.\n---\n{body}\n"


async def test_a_removed_skill_is_not_loaded_by_a_run_after_the_change(start: Any) -> None:
    # Worker processes: the skills a process loaded are kept by name in that process.
    session = await start({"skills/refunds/SKILL.md": skill_file("refunds", "REFUND BODY"), "agents.py": SKILLS}, None)
    first = await session.run("helper")
    assert "REFUND BODY" in json.dumps(first["steps"])

    def rename() -> None:
        shutil.rmtree(session.root / "skills" / "refunds")
        write(session.root, {"skills/billing/SKILL.md": skill_file("billing", "BILLING BODY")})

    await truth_at_rest(session, rename)
    run = await session.run("helper")
    async with ProjectSession(session.root, watch=False, history=False) as other:
        expected = await other.run("helper")
    assert "REFUND BODY" not in json.dumps(run["steps"])
    assert "no skill named 'refunds'" in json.dumps(run["steps"]) and "no skill named 'refunds'" in json.dumps(expected["steps"])


GOOD = PROMPT + "good = prompt('good', system={text!r})\n"
OTHER = PROMPT + "other = prompt('other', system='Other one.')\n"


async def test_a_broken_module_keeps_its_last_good_prompts_stale_whatever_is_saved_after(start: Any) -> None:
    import httpx

    from crux_devtools.web.app import create_app

    session = await start({"good.py": GOOD.format(text="Good one."), "other.py": OTHER})
    root = session.root
    write(root, {"other.py": OTHER + "raise ValueError('broken on purpose')\n"})
    await until(lambda: bool(session.report and session.report["errors"]), "other.py's error is shown")
    write(root, {"good.py": GOOD.format(text="Good two.")})
    await until(lambda: system(session.report, "good") == "Good two.", "good.py's save is shown")

    def shown_stale() -> None:
        report = session.report
        assert report is not None
        prompts = {p["id"]: p for p in report["prompts"]}
        assert sorted(prompts) == ["good", "other"], sorted(prompts)
        assert prompts["other"]["stale"] and not prompts["good"]["stale"]
        assert system(report, "other") == "Other one."
        [error] = report["errors"]
        assert (error["file"], error["type"]) == ("other.py", "ValueError")

    shown_stale()  # the fast answer already
    app = create_app(session, manage_session=False)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as client:
        answer = await client.get("/api/prompts/other")
        assert answer.status_code == 200 and answer.json()["stale"] is True
        await session.settled()  # and once verified
        shown_stale()
        assert session.report is not None and session.report["verified"]
        assert session.disagreements == 0  # the fast answer was right: the verification only confirmed it
        assert comparable(session.report) == await fresh(root, in_process)
        answer = await client.get("/api/prompts/other")
        assert answer.status_code == 200 and answer.json()["stale"] is True
        listed = (await client.get("/api/prompts")).json()
        assert [(p["id"], p["stale"], p["verified"]) for p in listed] == [("good", False, True), ("other", True, True)]


async def test_the_web_pages_and_the_tui_status_line_say_whether_the_report_is_verified(project: Path) -> None:
    import httpx

    from crux_devtools.tui.widgets.status_line import status_text
    from crux_devtools.web.app import create_app

    write(project, {"good.py": GOOD.format(text="Good one.")})
    # A verification an hour after the last change: the fast answer stays unverified meanwhile.
    async with ProjectSession(project, history=False, debounce=0.01, verify_after=3600, transport=in_process) as session:
        app = create_app(session, manage_session=False)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as client:
            page = (await client.get("/")).text
            assert 'data-verified="yes"' in page and "✓ verified" in page  # the first load is a fresh full load
            write(project, {"good.py": GOOD.format(text="Good two.")})
            await until(lambda: system(session.report, "good") == "Good two.", "the save is shown")
            assert session.report is not None and (session.report["load"], session.report["verified"]) == ("incremental", False)
            page = (await client.get("/")).text
            assert 'data-verified="no"' in page and "verifying…" in page
            page = (await client.get("/prompts/good")).text
            assert 'data-verified="no"' in page
            assert (await client.get("/api/prompts/good")).json()["verified"] is False
        [prompt] = session.report["prompts"]
        line = status_text(prompt, None, [], None, False, None, verified=False).plain
        assert "◌ verifying" in line
        assert "verifying" not in status_text(prompt, None, [], None, False, None, verified=True).plain


async def test_files_the_projects_own_code_writes_at_import_or_later_never_verify_in_a_loop(start: Any) -> None:
    session = await start({
        "writer.py": PROMPT + "import threading\nimport time\nfrom pathlib import Path\n\n"
        "HERE = Path(__file__).parent\n(HERE / 'status.txt').write_text('imported')\n\n"
        "def beat():\n    for i in range(1, 10_000):\n        (HERE / 'heartbeat.txt').write_text(str(i))\n        time.sleep(0.05)\n\n"
        "threading.Thread(target=beat, daemon=True).start()\nwriter = prompt('writer', system='Writes.')\n",
    }, None)  # worker processes: the thread user code starts must end with its worker
    root = session.root
    verifications = session.verifications

    def beats() -> int:
        text = (root / "heartbeat.txt").read_text() if (root / "heartbeat.txt").exists() else ""
        return int(text) if text.isdigit() else 0

    seen = beats()
    await until(lambda: beats() >= seen + 40, "the thread user code started wrote 40 more times")
    await asyncio.wait_for(session.settled(), BOUND)  # a verification loop would never settle
    assert session.verifications - verifications <= 1  # at most one, before the worker said it wrote the file
    assert session.report is not None and session.report["verified"] and session.report["version"] == 1


def test_hidden_files_and_env_folders_are_watched_but_not_hidden_folders_or_virtual_environments(tmp_path: Path) -> None:
    from crux_devtools.inspector.session.watcher import is_relevant

    write(tmp_path, {"venvlike/pyvenv.cfg": "home = /usr\n", ".idea/workspace.xml": "<x/>"})
    for relevant in (".env", ".env.local", "env/settings.txt", "data/.hidden.md", "MAINTENANCE"):
        assert is_relevant(tmp_path, str(tmp_path / relevant)), relevant
    for ignored in (".idea", ".idea/workspace.xml", "venvlike/lib/x.py", "venvlike", ".DS_Store", ".#notes.md", "notes.md.swp"):
        assert not is_relevant(tmp_path, str(tmp_path / ignored)), ignored
