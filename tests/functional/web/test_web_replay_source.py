"""The Replay panel's "plan from: today's source": a real session, real recorded runs, compared with
what ``crux-devtools replay --source current`` prints for the same step and overrides (the command in
this process, ``cli_in_process``; the session's and the command's workers in-process, which answer as
worker processes do)."""

from __future__ import annotations

import html
import json
import re
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from cli_in_process import cli_beside_loop
from recorded_sample import record_sample

from crux_devtools.core.record.runstore import RunStore, child_runs
from crux_devtools.inspector.features.shown.sent import system_parts
from crux_devtools.inspector.session.service import ProjectSession
from crux_devtools.review.render import describe
from crux_devtools.web.app import create_app
from crux_devtools.inspector.transport.inprocess import in_process

OLD_RULE = "- Never ask for passwords or full card numbers.\\n"
NEW_RULE = "- Never ask for passwords, card numbers or one-time codes.\\n"


@pytest.fixture
async def recorded(tmp_path: Path) -> AsyncIterator[tuple[httpx.AsyncClient, ProjectSession, Path, str]]:
    project = record_sample(tmp_path)
    run_id = str(RunStore.for_project(project).list()[-1]["id"])  # two steps, ladders adapted
    session = ProjectSession(project, transport=in_process, history=False, watch=False)
    await session.start()
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(session)), base_url="http://127.0.0.1:4400") as client:
            yield client, session, project, run_id
    finally:
        await session.stop()


async def cli(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``crux-devtools replay PROJECT ARGS``, run while the session under test keeps answering."""
    return await cli_beside_loop("replay", str(project), *args)


async def cli_document(project: Path, *args: str) -> dict[str, Any]:
    done = await cli(project, *args, "--json")
    assert done.returncode == 0, done.stderr
    document: dict[str, Any] = json.loads(done.stdout)
    return document


def column(page: str, index: int = 1) -> str:
    """Variant column ``index`` (1 is the first after the recorded one) of a replay fragment, as HTML."""
    return re.split(r'<div class="variant[^"]*" data-variant=', page)[index]


def shown(col: str) -> dict[str, Any]:
    """What a column shows: its title, input tokens, changes and the replayed system text part by part."""
    tokens = re.search(r'<b class="mono">([\d,]+)</b> input tokens', col)
    return {
        "title": html.unescape(re.search(r"<h4[^>]*>(.*?)</h4>", col, re.S).group(1)),  # type: ignore[union-attr]
        "input_tokens": int(tokens.group(1).replace(",", "")) if tokens else None,
        "changes": [html.unescape(t) for t in re.findall(r'<li class="change change-[^"]*">(.*?)</li>', col, re.S)],
        "parts": [html.unescape(t) for t in re.findall(r'<pre class="part-text mono">(.*?)</pre>', col, re.S)],
    }


def cli_shown(document: dict[str, Any]) -> dict[str, Any]:
    """The same of the CLI's ``--json`` document."""
    replayed = document["replayed"]
    parts = system_parts({"sent": replayed["sent"], "contributions": replayed["contributions"]})
    return {"input_tokens": replayed["input_tokens"], "changes": [describe(c) for c in document["changes"]], "parts": [p.text for p in parts if p.text]}


async def test_todays_source_after_an_edit_shows_what_the_cli_shows(recorded: tuple[httpx.AsyncClient, ProjectSession, Path, str]) -> None:
    client, session, project, run_id = recorded
    shared = project / "shared.py"
    assert OLD_RULE in shared.read_text()
    shared.write_text(shared.read_text().replace(OLD_RULE, NEW_RULE))
    await session.reload()  # what the watcher does on a save
    href = f"/runs/{run_id}/steps/1/replay"
    page = (await client.get(href + "?" + urlencode([("source", "recorded"), ("add", "1")]))).text
    recorded_col = shown(column(page))
    assert recorded_col["title"] == "as recorded" and "one-time codes" not in "".join(recorded_col["parts"])  # the recording does not see the edit
    for fields, args in (([], []), ([("max", "2000")], ["--max", "2000"])):
        page = (await client.get(href + "?" + urlencode([*fields, ("source", "current"), ("add", "1")]))).text
        col = column(page)
        assert 'data-source="current"' in page
        web = shown(col)
        expected = cli_shown(await cli_document(project, "--run", run_id, "--step", "1", "--source", "current", *args))
        assert web["title"] == ("today's source" if not args else "today's source, max 2,000")
        assert (web["input_tokens"], web["changes"], web["parts"]) == (expected["input_tokens"], expected["changes"], expected["parts"])
        assert any("one-time codes" in p for p in web["parts"])
        line = next(n for n, row in enumerate(shared.read_text().splitlines(), 1) if row.startswith("house_rules = context("))
        assert "context house-rules changed" in " ".join(web["changes"]) and f"(shared.py:{line})" in " ".join(web["changes"])


async def test_a_run_recorded_before_plan_inputs_offers_todays_source(recorded: tuple[httpx.AsyncClient, ProjectSession, Path, str]) -> None:
    client, _session, project, run_id = recorded
    store = RunStore.for_project(project)
    run = store.get(run_id)
    assert run is not None
    store.write({**run, "id": "old-run"})  # as an older release wrote it: no plan inputs
    page = (await client.get("/runs/old-run/steps/1/replay")).text
    offer = re.search(r'class="replay-from-source" hx-get="([^"]+)"', page)
    assert offer is not None and "Plan from today's source</button>" in page
    planned = (await client.get(html.unescape(offer.group(1)))).text
    cols = re.split(r'<div class="variant[^"]*" data-variant=', planned)[1:]
    assert len(cols) == 1  # the column that could not be planned is replaced by the one from today's source
    web = shown(cols[0])
    expected = cli_shown(await cli_document(project, "--run", "old-run", "--step", "1", "--source", "current"))
    assert web["title"] == "today's source" and "identical to the recorded request" in cols[0]
    assert (web["input_tokens"], web["changes"], web["parts"]) == (expected["input_tokens"], expected["changes"], expected["parts"])


async def test_a_target_gone_from_the_source_says_what_the_cli_says(recorded: tuple[httpx.AsyncClient, ProjectSession, Path, str]) -> None:
    client, session, project, run_id = recorded
    agent_file = project / "05_agent.py"
    agent_file.write_text(agent_file.read_text().replace('agent(\n    "support-agent"', 'agent(\n    "renamed-agent"').replace('agent("support-agent"', 'agent("renamed-agent"'))
    await session.reload()
    page = (await client.get(f"/runs/{run_id}/steps/1/replay?" + urlencode([("source", "current"), ("add", "1")]))).text
    error = re.search(r'<p class="banner banner-error small replay-error">(.*?)</p>', column(page), re.S)
    done = await cli(project, "--run", run_id, "--step", "1", "--source", "current")
    assert done.returncode == 1 and error is not None
    assert done.stderr.strip() == f"Error: {html.unescape(error.group(1))}"
    assert "no longer exists in the source" in done.stderr and "renamed-agent" in done.stderr
    fine = (await client.get(f"/runs/{run_id}/steps/1/replay")).text  # the recording still plans it
    assert "identical to the recorded request" in column(fine)


async def test_a_bad_source_is_a_problem_in_the_panel(recorded: tuple[httpx.AsyncClient, ProjectSession, Path, str]) -> None:
    client, _session, _project, run_id = recorded
    page = await client.get(f"/runs/{run_id}/steps/1/replay?" + urlencode([("source", "yesterday"), ("add", "1")]))
    assert page.status_code == 200
    assert "plan from must be one of recorded, current; got &#39;yesterday&#39;" in page.text


async def test_a_send_from_todays_source_sends_that_request(recorded: tuple[httpx.AsyncClient, ProjectSession, Path, str]) -> None:
    client, session, project, run_id = recorded
    shared = project / "shared.py"
    shared.write_text(shared.read_text().replace(OLD_RULE, NEW_RULE))
    await session.reload()
    sent = await client.post(f"/runs/{run_id}/steps/1/replay/send", data={"q": "source=current"})
    assert sent.status_code == 200, sent.text
    children = child_runs(RunStore.for_project(project), run_id)
    assert len(children) == 1 and children[0]["fork_step"] == 1
    child = RunStore.for_project(project).get(str(children[0]["id"]))
    assert child is not None and "one-time codes" in child["steps"][0]["sent"]["system"]
