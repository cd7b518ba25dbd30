"""One answer: ``crux-devtools diff``, the page's ``/diff`` (and ``/diff.json``) and the list's marks
give the same document for the same revisions, on a git project built here with a git-ignored local
store, an untracked scratch file and an error quoting an absolute path; and the page runs another
revision's code only when asked from itself. Real git, the ASGI app through httpx; the command (in
this process, ``cli_in_process``), the page's sessions and the base evaluations with in-process
workers (``cli_in_process.in_process_pools``), which answer as worker processes do."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from cli_in_process import in_process_pools

from diff_helpers import commit_all, git, make_project  # noqa: E402
from test_diff_cli import as_json  # noqa: E402
from test_diff_repositories import with_memory_store  # noqa: E402

from crux_devtools.inspector.features.diff.live import LiveDiff  # noqa: E402
from crux_devtools.inspector.session.service import ProjectSession  # noqa: E402
from crux_devtools.web.app import create_app  # noqa: E402

ORIGIN = "http://127.0.0.1:4400"


@pytest.fixture(autouse=True)
def in_process_sessions() -> Any:
    with in_process_pools():
        yield


def without_timing(document: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in document.items() if k != "timing"}


def changed_ids(document: dict[str, Any]) -> list[str]:
    return [p["id"] for p in document["prompts"] if any(e["status"] != "unchanged" for e in p["examples"])]


async def page_answers(root: Path) -> tuple[dict[str, Any], list[str], set[str]]:
    """/diff.json, the list badge's ids and the prompts with rows on /diff, from a fresh session."""
    async with ProjectSession(root, watch=False, history=False, prewarm=False) as session:
        app = create_app(session, manage_session=False)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=ORIGIN) as client:
            answer = await client.get("/diff.json")
            assert answer.status_code == 200, answer.text
            badge = (await client.get("/diff/summary")).text
            found = re.search(r"data-ids='([^']*)'", badge)
            ids = json.loads(found.group(1)) if found else []
            rows = set(re.findall(r'data-prompt="([^"]+)"', (await client.get("/diff")).text))
            return answer.json(), ids, rows


def test_the_cli_the_diff_page_and_the_list_marks_give_one_document(tmp_path: Path) -> None:
    """Not a coroutine: the command sets its signal handlers, which only the main thread may do, and
    runs its own event loop; each page answer runs in one of its own."""
    root = make_project(tmp_path)
    (root / "broken.py").write_text("from pathlib import Path\n\nimport crux_devtools\n\n(Path(__file__).parent / 'missing.txt').read_text()\n")
    with_memory_store(root)  # a git-ignored store the app reads, filled after the commit
    # a clean HEAD: nobody sees a change
    cli = as_json(root)
    page, ids, rows = asyncio.run(page_answers(root))
    assert without_timing(cli) == without_timing(page)
    assert changed_ids(cli) == ids == [] and rows == set()
    # an edit, an untracked scratch file: the same answer everywhere
    (root / "scratch.py").write_text("x = 1\n")
    (root / "other.py").write_text((root / "other.py").read_text().replace("Sort the ticket.", "Sort the ticket by urgency."))
    cli = as_json(root)
    page, ids, rows = asyncio.run(page_answers(root))
    assert without_timing(cli) == without_timing(page)
    assert changed_ids(cli) == ids == ["triage"] and rows == {"triage"}
    assert str(root) not in json.dumps(cli)  # paths in messages are project-relative at both revisions


async def test_another_base_runs_only_on_a_post_from_the_page_itself(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    git(root, "branch", "other")
    (root / "other.py").write_text((root / "other.py").read_text().replace("Sort the ticket.", "Sort it."))
    commit_all(root, "second")
    async with ProjectSession(root, watch=False, history=False, prewarm=False) as session:
        app = create_app(session, manage_session=False)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=ORIGIN) as client:
            link = await client.get("/diff?base=other")  # a link any site can make: nothing runs
            assert link.status_code == 200 and 'id="diff-confirm"' in link.text and "Compare with other" in link.text
            assert (await client.get("/diff.json?base=other")).status_code == 409
            assert (await client.get("/diff/summary?base=other")).text == ""
            live: LiveDiff = app.state.live_diff
            assert live.base_evaluations == 0
            blind = await client.post("/diff", data={"base": "other"})  # a POST without the page's Origin
            assert 'id="diff-confirm"' in blind.text and live.base_evaluations == 0
            foreign = await client.post("/diff", data={"base": "other"}, headers={"Origin": "http://evil.example"})
            assert foreign.status_code == 403 and live.base_evaluations == 0
            confirmed = await client.post("/diff", data={"base": "other"}, headers={"Origin": ORIGIN})
            assert confirmed.status_code == 200 and 'data-prompt="triage"' in confirmed.text and live.base_evaluations == 1
            # evaluated once: now a link shows it (no code runs for it)
            again = await client.get("/diff?base=other")
            assert 'data-prompt="triage"' in again.text and live.base_evaluations == 1
            assert (await client.get("/diff.json?base=other")).json()["base"]["rev"] == "other"


async def test_a_revision_git_cannot_be_given_is_a_400(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    async with ProjectSession(root, watch=False, history=False, prewarm=False) as session:
        app = create_app(session, manage_session=False)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=ORIGIN) as client:
            for url in ("/diff?base=HEAD%00", "/diff.json?base=%01"):
                answer = await client.get(url)
                assert answer.status_code == 400 and "control character" in answer.text, (url, answer.text)
            assert (await client.get("/diff/summary?base=HE%0aAD")).status_code == 400
            posted = await client.post("/diff", data={"base": "HEAD\x00"}, headers={"Origin": ORIGIN})
            assert posted.status_code == 400 and "control character" in posted.text


async def test_the_live_page_keeps_a_few_base_reports_however_many_commits_are_compared(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    shas = []
    for n in range(5):
        (root / "other.py").write_text((root / "other.py").read_text().replace("Sort the ticket", f"Sort the ticket {n}"))
        commit_all(root, f"commit {n}")
        shas.append(git(root, "rev-parse", "HEAD").strip())
    async with ProjectSession(root, watch=False, history=False, prewarm=False) as session:
        live = LiveDiff(session, max_bases=3)
        for sha in shas:
            assert "error" not in await live.document(sha)
        assert live.cached_shas() == shas[-3:] and live.base_evaluations == 5
        await live.document(shas[2])  # kept: not evaluated again, and now the newest used
        assert live.base_evaluations == 5 and live.cached_shas()[-1] == shas[2]
