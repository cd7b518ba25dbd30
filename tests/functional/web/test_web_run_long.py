"""A run of many steps on ``/runs/{id}``: the page shows a window of whole step cards and every other
step as one compact row that loads its card from ``/runs/{id}/steps/{index}``.

Real ``generate`` runs (ScriptedModel), their steps repeated into long runs, written to a real run
store and served by the real app through httpx.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import httpx
import markupsafe
import pytest
from web_runs_fakes import XSS, RecordingSession, long_run, run_record

from crux_devtools.web.views.run import FULL_RUN_STEPS, WINDOW_HEAD, WINDOW_TAIL


@pytest.fixture
def session(tmp_path: Path) -> RecordingSession:
    return RecordingSession(tmp_path, agent_ids=("billing-agent",))


def section(page: str, marker: str, end: str = "</section>") -> str:
    start = page.index(marker)
    return page[start:page.index(end, start)]


def cards(page: str) -> list[int]:
    """The steps shown as whole cards, top to bottom."""
    return [int(n) for n in re.findall(r'<section class="card step-card[^"]*" id="step-(\d+)"', page)]


def compact(page: str) -> list[int]:
    """The steps shown as compact rows, top to bottom."""
    return [int(n) for n in re.findall(r'<section class="card step-row[^"]*" id="step-(\d+)"', page)]


async def test_a_500_step_page_is_bounded_and_does_not_grow_with_the_run(client: httpx.AsyncClient, session: RecordingSession) -> None:
    session.record(long_run(500, "long"))
    session.record(long_run(1000, "longer"))
    short = run_record(run_id="short")
    session.record(short)
    page = (await client.get("/runs/long")).text
    longer = (await client.get("/runs/longer")).text
    one_card = len((await client.get("/runs/long/steps/250")).text)
    assert len(page.encode()) < 2_000_000
    assert cards(page) == [*range(WINDOW_HEAD), *range(500 - WINDOW_TAIL, 500)]
    assert cards(longer) == [*range(WINDOW_HEAD), *range(1000 - WINDOW_TAIL, 1000)]
    # 500 more steps cost their compact rows and glance bars, far less than their cards would
    assert len(longer) < 1.8 * len(page)
    assert (len(longer) - len(page)) / 500 < one_card / 5
    assert "500 steps: the first 10, the last 10 are shown whole" in page


async def test_every_step_of_a_long_run_is_on_its_page_with_its_anchor_and_a_link_to_its_card(client: httpx.AsyncClient, session: RecordingSession) -> None:
    session.record(long_run(500, "long"))
    page = (await client.get("/runs/long")).text
    assert sorted(cards(page) + compact(page)) == list(range(500))
    for index in range(500):
        assert page.count(f'id="step-{index}"') == 1
        assert f'href="#step-{index}" class="step-bar"' in page  # the glance's bar reaches the step's anchor
    glance = section(page, 'id="run-glance"')
    for index in compact(page):
        assert f'href="/runs/long?step={index}#step-{index}" hx-get="/runs/long/steps/{index}">' in page
        assert f'data-step="{index}" hx-get="/runs/long/steps/{index}"' in glance  # its bar swaps its card in
    assert glance.count("hx-get=") == len(compact(page)) == 480
    row = re.search(r'<section class="card step-row" id="step-250".*?</section>', page, re.S)
    assert row is not None
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", row.group(0)))
    assert "Step 250" in text and "2 tool calls" in text and "155 tok" in text and "show step 250" in text
    assert 'class="step-nav"' not in page  # the rows are the steps' index; no wall of 500 pills


async def test_a_step_card_fetched_on_demand_is_the_card_the_page_shows(client: httpx.AsyncClient, session: RecordingSession) -> None:
    short = run_record(run_id="short")
    session.record(short)
    session.record(long_run(500, "long"))
    page = (await client.get("/runs/short")).text
    for step in short["steps"]:
        card = await client.get(f"/runs/short/steps/{step['index']}")
        assert card.status_code == 200
        assert card.headers["HX-Retarget"] == f"#step-{step['index']}" and card.headers["HX-Reswap"] == "outerHTML"  # in its row's place
        assert card.text.strip().startswith(f'<section class="card step-card" id="step-{step["index"]}"')
        assert card.text.strip() in page
    long_page = (await client.get("/runs/long")).text
    for index in (0, 499):  # shown whole by the page
        assert (await client.get(f"/runs/long/steps/{index}")).text.strip() in long_page
    card = (await client.get("/runs/long/steps/250")).text.strip()
    assert card not in long_page
    asked = (await client.get("/runs/long?step=250")).text
    assert card in asked and 250 in cards(asked) and 250 not in compact(asked)
    assert "and step 250 are shown whole" in asked


async def test_a_run_no_longer_than_the_window_renders_every_step_whole(client: httpx.AsyncClient, session: RecordingSession) -> None:
    session.record(long_run(FULL_RUN_STEPS, "fits"))
    session.record(long_run(FULL_RUN_STEPS + 1, "over"))
    page = (await client.get("/runs/fits")).text
    assert cards(page) == list(range(FULL_RUN_STEPS)) and compact(page) == []
    assert 'class="step-nav"' in page and 'id="step-window"' not in page and "/steps/" not in section(page, 'id="run-glance"')
    assert page == (await client.get(f"/runs/fits?step={FULL_RUN_STEPS - 1}")).text  # asking for a step shown whole changes nothing
    over = (await client.get("/runs/over")).text
    assert compact(over) == [WINDOW_HEAD] and len(cards(over)) == FULL_RUN_STEPS


async def test_a_step_that_is_not_there_is_said_clearly(client: httpx.AsyncClient, session: RecordingSession) -> None:
    session.record(long_run(500, "long"))
    missing = await client.get("/runs/long/steps/9999")
    assert missing.status_code == 404 and "run &#x27;long&#x27; has no step 9999: its steps are 0 to 499" in missing.text
    gone = await client.get("/runs/nothing-here/steps/1")
    assert gone.status_code == 404 and "no recorded run with id &#x27;nothing-here&#x27;" in gone.text
    for asked in ("9999", "abc"):
        page = await client.get(f"/runs/long?step={asked}")
        assert page.status_code == 200
        assert f"?step={asked} names no step of this run (it has steps 0 to 499): pass one of its step numbers" in html.unescape(page.text)
        assert len(cards(page.text)) == WINDOW_HEAD + WINDOW_TAIL


async def test_text_in_a_card_loaded_on_demand_is_escaped(client: httpx.AsyncClient, session: RecordingSession) -> None:
    run = long_run(500, "long")
    run["steps"][250]["response_text"] = XSS
    run["steps"][250]["tool_calls"] = []
    session.record(run)
    page = (await client.get("/runs/long")).text
    assert 250 in compact(page) and XSS not in page
    card = (await client.get("/runs/long/steps/250")).text
    assert XSS not in card and str(markupsafe.escape(XSS)) in card
    hostile = '<img src=x onerror="window.__xss = 3">'
    missing = await client.get(f"/runs/{hostile}/steps/1")
    assert missing.status_code == 404 and "step-missing" in missing.text
    assert hostile not in missing.text and html.escape(hostile) in missing.text
