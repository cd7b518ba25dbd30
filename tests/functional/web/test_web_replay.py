"""The Replay panel of /runs/{id}: a real session (real worker), real recorded runs, through httpx."""

from __future__ import annotations

import html
import re
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlencode

import httpx
import pytest
from markupsafe import escape

from recorded_sample import newest_run, record_sample

from crux_devtools.core.record.runstore import RunStore, child_runs
from crux_devtools.inspector.features.replay.document import step_messages
from crux_devtools.inspector.session.service import ProjectSession
from crux_devtools.web.app import create_app
from crux_devtools.inspector.transport.inprocess import in_process

@pytest.fixture
async def recorded(tmp_path: Path) -> AsyncIterator[tuple[httpx.AsyncClient, Path, str]]:
    project = record_sample(tmp_path)
    run_id = str(RunStore.for_project(project).list()[-1]["id"])  # stalled-sync: two steps, ladders adapted
    session = ProjectSession(project, transport=in_process, history=False, watch=False)
    await session.start()
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(session)), base_url="http://127.0.0.1:4400") as client:
            yield client, project, run_id
    finally:
        await session.stop()


def columns(page: str) -> list[str]:
    """The variant columns of a replay fragment (the recorded column excluded), as HTML."""
    return re.split(r'<div class="variant[^"]*" data-variant=', page)[1:]


async def test_every_step_of_a_run_has_a_replay_panel_with_its_overrides(recorded: tuple[httpx.AsyncClient, Path, str]) -> None:
    client, _project, run_id = recorded
    page = (await client.get(f"/runs/{run_id}")).text
    assert 'id="replay-0"' in page and 'id="replay-1"' in page
    form = page[page.index('id="replay-form-1"'):page.index('id="replay-out-1"')]
    assert 'name="max"' in form and 'name="optimize_at"' in form and 'name="model"' in form
    assert 'name="rung:catalog"' in form and 'value="authored:catalog-index"' in form
    assert 'name="drop" value="house-rules"' in form


async def test_a_plain_replay_is_identical_and_variants_sit_beside_it(recorded: tuple[httpx.AsyncClient, Path, str]) -> None:
    client, _project, run_id = recorded
    href = f"/runs/{run_id}/steps/1/replay"
    plain = await client.get(href)
    assert plain.status_code == 200
    assert len(columns(plain.text)) == 1 and "identical to the recorded request" in plain.text
    smaller = await client.get(href + "?" + urlencode([("v", ""), ("max", "2000"), ("add", "1")]))
    shown = columns(smaller.text)
    assert len(shown) == 2
    assert "identical to the recorded request" in shown[0]
    assert "example-replies is sent as omitted (was full)" in shown[1] and "context example-replies left the request (budget)" in shown[1]
    assert "cacheable prefix" in shown[1] and "max 2,000" in shown[1]
    kept = re.findall(r'<input type="hidden" name="v" value="([^"]*)" form="replay-form-1">', smaller.text)
    assert kept == ["", "max=2000"]
    more = [("v", v) for v in kept] + [("drop", "house-rules"), ("add", "1")]
    third = await client.get(href + "?" + urlencode(more))
    assert len(columns(third.text)) == 3 and "context house-rules left the request (removed)" in third.text
    fourth = await client.get(href + "?" + urlencode([("v", v) for v in ["", "max=2000", "drop=house-rules"]] + [("rung:catalog", "omitted"), ("add", "1")]))
    shown = columns(fourth.text)
    assert len(shown) == 3 and "as recorded" not in shown[0]  # at most 3 variants: the oldest went
    assert "catalog is sent as omitted" in shown[2]


async def test_bad_overrides_are_shown_in_the_panel_not_a_500(recorded: tuple[httpx.AsyncClient, Path, str]) -> None:
    client, _project, run_id = recorded
    href = f"/runs/{run_id}/steps/0/replay"
    illegal = await client.get(href + "?" + urlencode([("rung:sync-log", "authored"), ("add", "1")]))
    assert illegal.status_code == 200 and "its ladder allows: full, summary, offload" in illegal.text
    tight = await client.get(href + "?" + urlencode([("max", "300"), ("add", "1")]))
    panel = tight.text[tight.text.index('<section class="banner banner-error too-large"'):]  # the prompt page's panel
    assert "<h2>Over limit: nothing would be sent</h2>" in panel and '<span class="mono strong">REQUEST_TOO_LARGE</span>: no legal candidate fits max_input_tokens=300' in panel
    assert '<ul class="diagnostics"><li><span class="mono">&lt;prompt&gt;</span> <span class="mono">' in panel and "Raise max" in panel
    assert "left the request" not in panel and "no longer offered" not in panel  # nothing is sent, so nothing "left" it
    shown = columns(tight.text)[0]  # no smaller "input tokens" with a green delta, as if a smaller request were sent
    assert "the cheapest request needs about" in shown and "delta-down" not in shown
    words = await client.get(href + "?" + urlencode([("max", "lots"), ("add", "1")]))
    assert "max must be a whole number" in words.text
    missing = await client.get("/runs/nope/steps/0/replay")
    assert missing.status_code == 404 and "no recorded run" in missing.text


async def test_send_records_a_child_run_and_shows_its_answer(recorded: tuple[httpx.AsyncClient, Path, str]) -> None:
    client, project, run_id = recorded
    plain = await client.get(f"/runs/{run_id}/steps/1/replay?max=2000&add=1")
    assert 'hx-confirm="Send this replayed request' in plain.text
    sent = await client.post(f"/runs/{run_id}/steps/1/replay/send", data={"q": "max=2000"})
    assert sent.status_code == 200, sent.text
    children = child_runs(RunStore.for_project(project), run_id)
    assert len(children) == 1 and children[0]["fork_step"] == 1
    assert f'href="/runs/{children[0]["id"]}"' in sent.text and "tool calls: <span" in sent.text and " ms" in sent.text
    child_page = await client.get(f"/runs/{children[0]['id']}")
    assert child_page.status_code == 200
    replay_of = child_page.text[child_page.text.index('id="run-replay-of"'):]  # the child's page links back to the run it replays
    assert 'its last step asked for tools (<span class="mono">lookup_sku, fetch_sync_history, device_report</span>)' in child_page.text
    assert replay_of.split("</span>")[0].endswith(f'replay of step 1 of <a class="mono" href="/runs/{run_id}">{run_id}</a>')


async def test_the_runs_list_shows_a_replay_under_the_run_it_replays(recorded: tuple[httpx.AsyncClient, Path, str]) -> None:
    client, _project, run_id = recorded
    sent = await client.post(f"/runs/{run_id}/steps/0/replay/send", data={"q": ""})
    assert sent.status_code == 200, sent.text
    page = (await client.get("/runs")).text
    ids = re.findall(r'<tr class="run-row" data-id="([^"]+)"', page)
    child = re.search(r'<tr class="run-row" data-id="([^"]+)" data-status="[^"]*" data-parent="' + re.escape(run_id) + '"', page)
    assert child is not None
    assert ids.index(child.group(1)) == ids.index(run_id) + 1  # newest first, yet right under its parent
    assert f'replay of step 0 of <a class="mono" href="/runs/{run_id}">' in page


async def test_the_send_confirmation_shows_the_estimated_cost_or_unpriced(recorded: tuple[httpx.AsyncClient, Path, str]) -> None:
    client, project, run_id = recorded
    model = RunStore.for_project(project).get(run_id)["model"]  # type: ignore[index]
    unpriced = columns((await client.get(f"/runs/{run_id}/steps/1/replay")).text)[0]
    assert f'hx-confirm="Send this replayed request (unpriced: no price known for {model}' in unpriced
    with (project / "pyproject.toml").open("a", encoding="utf-8") as f:
        f.write(f'\n[tool.crux-devtools.models.{model}]\ncontext_window = 16384\ninput_price = 2.5\noutput_price = 10.0\n')
    priced = columns((await client.get(f"/runs/{run_id}/steps/1/replay")).text)[0]
    tokens = int(re.search(r'<b class="mono">([\d,]+)</b> input tokens', priced).group(1).replace(",", ""))  # type: ignore[union-attr]
    cost = f"${tokens * 2.5 / 1_000_000:.4g}"
    assert f'hx-confirm="Send this replayed request (estimated input cost {cost} ({tokens:,} input tokens, output extra))' in priced
    assert f'<span class="muted small send-estimate">estimated input cost {cost}' in priced


async def test_open_in_the_prompt_view_of_a_later_step_plans_it_with_that_steps_messages(recorded: tuple[httpx.AsyncClient, Path, str]) -> None:
    client, project, run_id = recorded
    run = RunStore.for_project(project).get(run_id)
    assert run is not None and len(run["steps"]) == 2
    page = (await client.get(f"/runs/{run_id}")).text
    links = [html.unescape(h) for h in re.findall(r'<a class="button-link replay-link" href="([^"]+)"', page)]
    assert len(links) == 2 and f"at_step={run_id}%3A1" in links[1]
    later = (await client.get(links[1])).text
    assert "Planned as step 1 of run " in later and "the tool traffic of the steps before it (3 tool calls and their results)" in later
    assert f'<input type="hidden" name="at_step" value="{run_id}:1" form="controls">' in later  # the slider keeps it
    recorded_messages = run["steps"][1]["sent"]["messages"]
    tool_result = next(m["content"] for m in recorded_messages if m["role"] == "tool")
    assert str(escape(tool_result[:60])) in later  # the tool traffic is in the request shown
    first = (await client.get(links[0])).text
    assert "the run input, no tool traffic (the first step)" in first


async def test_a_steps_messages_give_the_planned_request_exactly_its_recorded_messages(tmp_path: Path) -> None:
    project = record_sample(tmp_path)
    run = newest_run(project)
    store = RunStore.for_project(project)
    session = ProjectSession(project, transport=in_process, history=False, watch=False)
    await session.start()
    try:
        for step in run["steps"]:
            messages = step_messages(store, run, step["index"])
            report = await session.evaluate(run["target"], input=run["input"], messages=messages)
            assert report["preview"] is not None and report["preview"]["sent"]["messages"] == step["sent"]["messages"], step["index"]
            guessed = step_messages(None, run, step["index"])  # a run recorded before plan inputs: split at its last user message
            assert guessed is not None and messages is not None and (guessed["history"], guessed["turn"]) == (messages["history"], messages["turn"])
        without = await session.evaluate(run["target"], input=run["input"])
        assert without["preview"]["sent"]["messages"] == run["steps"][0]["sent"]["messages"] != run["steps"][1]["sent"]["messages"]
    finally:
        await session.stop()


def retarget(project: Path, run_id: str, target: str) -> None:
    """Make a recorded run's target one the source no longer has (its plan inputs stay)."""
    with sqlite3.connect(project / ".crux" / "runs.sqlite3") as db:
        db.execute("UPDATE runs SET target = ? WHERE id = ?", (target, run_id))
        db.execute("UPDATE run_summaries SET summary = json_set(summary, '$.target', ?) WHERE seq = (SELECT seq FROM runs WHERE id = ?)", (target, run_id))


async def test_a_run_recorded_before_plan_inputs_says_so_and_names_the_command_for_todays_source(recorded: tuple[httpx.AsyncClient, Path, str]) -> None:
    client, project, run_id = recorded
    store = RunStore.for_project(project)
    run = store.get(run_id)
    assert run is not None
    store.write({**run, "id": "old-run"})  # as an older release wrote it: no plan inputs
    column = columns((await client.get("/runs/old-run/steps/1/replay")).text)[0]
    assert "recorded before plan inputs were kept, so step 1 cannot be planned again from its recording" in column
    assert "--run old-run --step 1 --source current" in column and 'class="banner banner-error small replay-error"' in column


async def test_a_target_gone_from_the_source_replays_from_the_recording_and_a_send_says_why_nothing_went(recorded: tuple[httpx.AsyncClient, Path, str]) -> None:
    client, project, run_id = recorded
    retarget(project, run_id, "deleted-agent")
    replayed = (await client.get(f"/runs/{run_id}/steps/1/replay")).text
    assert "identical to the recorded request" in replayed  # the recording is enough to plan it
    sent = await client.post(f"/runs/{run_id}/steps/1/replay/send", data={"q": ""})
    assert sent.status_code == 502
    assert "the run&#39;s target &#39;deleted-agent&#39; no longer exists in the source; nothing was sent" in sent.text
    assert child_runs(RunStore.for_project(project), run_id) == []
