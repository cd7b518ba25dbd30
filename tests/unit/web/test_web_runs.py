"""Recorded runs in the web inspector, through httpx against the ASGI app.

The runs are real ``generate`` runs (ScriptedModel) written to a real ``.crux/runs.sqlite3`` file
with the real ``RunStore``; the session is the web tests' fake with that store.
"""

from __future__ import annotations

import html
import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import markupsafe
import pytest
from confirm_fake import FAKE_TOKEN
from web_fakes import FakeSession
from web_runs_fakes import XSS, RecordingSession, audit_run, many_runs, run_record

from crux_devtools import tool_call
from crux_devtools.core.plan.rungs import label
from crux_devtools.core.record.runstore import RunStore
from crux_devtools.web.app import create_app
from crux_devtools.web.routes import runs as runs_routes
from crux_devtools.web.views.runs import DISPLAY_CAP, PAGE_SIZE


@pytest.fixture
def session(tmp_path: Path) -> RecordingSession:
    return RecordingSession(tmp_path, agent_ids=("billing-agent",))


def rows(page: str) -> list[str]:
    """The run ids of the list's rows, top to bottom."""
    return re.findall(r'<tr class="run-row" data-id="([^"]+)"', page)


def esc(text: str) -> str:
    """Text as the templates write it (Jinja's autoescape)."""
    return str(markupsafe.escape(text))


def at(minutes: int) -> datetime:
    return datetime(2026, 3, 1, 9, 0, tzinfo=UTC) + timedelta(minutes=minutes)


# ---------------------------------------------------------------- the list


async def test_the_runs_page_lists_every_run_newest_first_with_what_happened(client: httpx.AsyncClient, session: RecordingSession) -> None:
    session.record(run_record(run_id="older", started_at=at(0), origin="inspector"))
    session.record(run_record(run_id="newer", started_at=at(5), usage={"input_tokens": 170, "output_tokens": 40}))
    r = await client.get("/runs")
    assert r.status_code == 200
    assert rows(r.text) == ["newer", "older"]
    newest = r.text[r.text.index('data-id="newer"'):r.text.index('data-id="older"')]
    summary = session.store.list(limit=1)[0]
    assert 'href="/runs/newer"' in newest and 'href="/prompts/billing-agent"' in newest
    assert "chip-fits" in newest and ">ok<" in newest and "origin-app" in newest and "scripted-billing" in newest
    assert f">{summary['step_count']}<" in newest
    assert f">{summary['input_tokens']:,}<" in newest  # our count, summed over the steps
    assert "340 <span" in newest and "80" in newest  # provider usage: 170 + 170 in, 40 + 40 out
    assert "42 ms" in newest
    assert "origin-inspector" in r.text
    assert '1–2 of <b class="mono">2</b> runs' in r.text


async def test_the_charts_of_one_run_speak_of_one_run(client: httpx.AsyncClient, session: RecordingSession) -> None:
    session.record(run_record(run_id="only", started_at=at(0)))
    tokens = session.store.list(limit=1)[0]["input_tokens"]
    charts = (await client.get("/runs")).text.split('id="run-charts"', 1)[1].split("</section>", 1)[0]
    assert f'<figcaption class="rc-note">{tokens:,} · the one run</figcaption>' in charts  # not "from N to N", not "the 1 runs"
    assert f"input tokens of 1 run, oldest first: {tokens:,}, the newest {tokens:,} (the one run)" in charts
    assert "cost: not known for this run: no price is known for its model, or it reported no usage." in charts
    assert "1 runs" not in charts and "these runs" not in charts


async def test_the_runs_page_filters_by_target_status_origin_and_text(client: httpx.AsyncClient, session: RecordingSession) -> None:
    session.record(run_record(run_id="a", started_at=at(1), answer="the parcel is lost"))
    session.record(run_record(run_id="b", started_at=at(2), target="support-reply", kind="prompt", origin="inspector"))
    session.record(run_record(run_id="c", started_at=at(3), steps=[[tool_call("lookup_order", {"order_id": "A"})]] * 3))  # max_steps
    assert rows((await client.get("/runs?target=support-reply")).text) == ["b"]
    assert rows((await client.get("/runs?origin=inspector")).text) == ["b"]
    assert rows((await client.get("/runs?status=max_steps")).text) == ["c"]
    assert rows((await client.get("/runs?q=parcel")).text) == ["a"]
    assert rows((await client.get("/runs?text=parcel")).text) == ["a"]  # the filter's other name
    page = (await client.get("/runs?q=nothing-like-this")).text
    assert rows(page) == [] and "No run matches these filters" in page
    # The form keeps the filters it shows.
    page = (await client.get("/runs?status=max_steps&origin=app")).text
    assert '<option value="max_steps" selected>' in page and '<option value="app" selected>' in page
    assert "chip-over" in page and "max steps" in page


async def test_an_unknown_filter_value_is_named_and_ignored(client: httpx.AsyncClient, session: RecordingSession) -> None:
    session.record(run_record(run_id="a"))
    page = (await client.get("/runs?status=done&origin=robot&page=x")).text
    assert "status &#39;done&#39; is not one of ok, error, max_steps" in page
    assert "origin &#39;robot&#39; is not one of" in page and "page &#39;x&#39; is not a whole number" in page
    assert rows(page) == ["a"]


async def test_the_list_is_paginated_so_ten_thousand_runs_are_never_all_rendered(client: httpx.AsyncClient, session: RecordingSession) -> None:
    ids = many_runs(session.store, PAGE_SIZE * 2 + 7)
    first = await client.get("/runs")
    assert rows(first.text) == ids[::-1][:PAGE_SIZE]
    assert "1–50 of <b class=\"mono\">107</b> runs" in first.text
    assert 'href="/runs?page=2" rel="next"' in first.text
    third = await client.get("/runs?page=3")
    assert rows(third.text) == ids[::-1][PAGE_SIZE * 2:]
    assert 'value="3"' in third.text and 'rel="prev"' in third.text
    past = await client.get("/runs?page=9")
    assert "page 9 is past the last page (3)" in past.text and rows(past.text) == rows(third.text)
    filtered = await client.get("/runs?status=ok&page=2")
    assert 'href="/runs?status=ok&amp;page=3"' in filtered.text  # the pages keep the filters


async def test_a_search_matching_more_runs_than_it_reads_says_more_than_and_whose_cost_it_shows(
    client: httpx.AsyncClient, session: RecordingSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runs_routes, "SEARCH_SCOPE", 5)  # a search reads 5 of its matches (and what its page needs)
    ids = many_runs(session.store, PAGE_SIZE + 10)
    first = (await client.get("/runs?q=answer")).text
    assert rows(first) == ids[::-1][:PAGE_SIZE]
    assert '1–50 of more than <b class="mono">50</b> runs' in first and 'data-more="1"' in first
    assert "cost of the last 5 recorded" in first
    assert 'href="/runs?q=answer&amp;page=2" rel="next"' in first
    assert "each of the last 5 recorded of more runs that match, oldest left" in first  # the charts say whose they are
    second = (await client.get("/runs?q=answer&page=2")).text
    assert rows(second) == ids[::-1][PAGE_SIZE:]
    assert '51–60 of <b class="mono">60</b> runs' in second and 'rel="next"' not in second and "data-more" not in second
    few = (await client.get("/runs?q=answer number 4")).text  # run 4 and runs 40 to 49: more than it reads, fewer than a page
    assert '1–11 of <b class="mono">11</b> runs' in few and "more than" not in few and "cost of the last 5 recorded" in few
    one = (await client.get("/runs?q=number 7")).text
    assert '1–1 of <b class="mono">1</b> run<' in one and "cost of the last" not in one


async def test_a_search_finds_the_runs_written_after_the_page_was_opened(client: httpx.AsyncClient, session: RecordingSession, tmp_path: Path) -> None:
    session.record(run_record(run_id="first", started_at=at(0), answer="the parcel is lost"))
    hx = {"HX-Request": "true"}
    assert rows((await client.get("/runs?q=parcel", headers=hx)).text) == ["first"]
    with RunStore.for_project(tmp_path) as other:  # another process's writer
        other.write(run_record(run_id="later", started_at=at(5), answer="a parcel was found"))
    block = (await client.get("/runs?q=parcel", headers=hx)).text
    assert rows(block) == ["later", "first"] and '1–2 of <b class="mono">2</b> runs' in block


async def test_an_htmx_refresh_gets_only_the_list_block(client: httpx.AsyncClient, session: RecordingSession) -> None:
    session.record(run_record(run_id="a"))
    r = await client.get("/runs?status=ok", headers={"HX-Request": "true"})
    assert r.text.lstrip().startswith('<div id="runs-list"') and "<html" not in r.text
    assert rows(r.text) == ["a"]


async def test_the_runs_page_is_live_on_the_runs_event(client: httpx.AsyncClient) -> None:
    page = (await client.get("/runs")).text
    hook = re.search(r'<div class="live-hook"[^>]*hx-trigger="sse:runs"[^>]*>', page)
    assert hook and 'hx-include="#run-filters"' in hook.group(0) and 'hx-target="#runs-list"' in hook.group(0)
    assert '<a href="/runs" id="nav-runs">Runs</a>' in page  # the header links here from every page


async def test_with_no_runs_the_page_says_how_to_record_them(client: httpx.AsyncClient, session: RecordingSession) -> None:
    page = (await client.get("/runs")).text
    assert "No runs recorded yet" in page and "record_runs(" in page and "CRUX_DEVTOOLS_RECORD=" in page


async def test_a_session_without_a_store_shows_a_banner_not_an_error(tmp_path: Path) -> None:
    app = create_app(FakeSession(tmp_path))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:4400") as c:
        page = await c.get("/runs")
        assert page.status_code == 200 and "No run history" in page.text
        api = await c.get("/api/runs")
        assert api.status_code == 503 and "cannot be opened" in api.json()["detail"]


async def test_a_corrupt_runs_file_is_a_banner_naming_the_file(tmp_path: Path) -> None:
    from crux_devtools.core.record.runstore import RunStore

    bad = tmp_path / "runs.sqlite3"
    bad.write_bytes(b"this is not a database" * 100)
    session = FakeSession(tmp_path)
    session.runs = lambda: RunStore(bad, create=False)  # type: ignore[method-assign]
    app = create_app(session)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:4400") as c:
        page = await c.get("/runs")
        assert page.status_code == 200 and "No run history" in page.text and "runs.sqlite3" in page.text
        assert (await c.get("/runs/x")).status_code == 503
        assert (await c.get("/api/runs")).status_code == 503


# ---------------------------------------------------------------- one run


async def test_a_step_shows_the_system_text_as_sent_part_by_part_with_its_rung(client: httpx.AsyncClient, session: RecordingSession) -> None:
    run_id = session.record(run_record())
    page = (await client.get(f"/runs/{run_id}")).text
    run = session.store.get(run_id)
    assert run is not None
    step = run["steps"][0]
    system = step["sent"]["system"]
    spans = [c for c in step["request"]["contributions"] if c["span"]]
    assert spans, "the recorded receipt has the system text's spans"
    first_step = page[page.index('id="step-0"'):page.index('id="step-1"')]
    for c in spans:
        start, end = c["span"]
        assert esc(system[start:end]) in first_step
        assert f'data-source="{esc(c["contributor"])}" data-rung="{c["representation"]}"' in first_step
    catalog = next(c for c in spans if c["contributor"] == "catalog")
    assert catalog["representation"] == "authored" and catalog["variant"] == "catalog-index"
    assert "variant <span class=\"mono\">catalog-index</span>" in first_step


async def test_an_offloaded_part_shows_its_preview_and_handle_and_a_budget_drop_is_listed(client: httpx.AsyncClient, session: RecordingSession) -> None:
    run_id = session.record(audit_run())
    page = (await client.get(f"/runs/{run_id}")).text
    step = session.store.get(run_id)["steps"][0]  # type: ignore[index]
    offloaded = next(c for c in step["request"]["contributions"] if c["representation"] == "offload")
    start, end = offloaded["span"]
    assert 'data-source="audit-log" data-rung="offload"' in page
    assert f'handle <span class="mono">{offloaded["handle"]}</span>' in page
    assert esc(step["sent"]["system"][start:end]) in page  # the preview exactly as the model got it
    assert "the preview the model saw; the full text stays behind the handle" in page
    assert '<span class="mono">old-notes</span> <span class="tag">not sent: dropped by the token budget (budget)</span>' in page
    assert "dropped by the token budget, before planning" in page and "token budget</dt><dd class=\"mono\">2,000" in page


async def test_a_step_shows_messages_tool_schemas_and_our_count_beside_the_providers(client: httpx.AsyncClient, session: RecordingSession) -> None:
    run_id = session.record(run_record(usage={"input_tokens": 999, "output_tokens": 12}))
    page = (await client.get(f"/runs/{run_id}")).text
    run = session.store.get(run_id)
    assert run is not None
    second = page[page.index('id="step-1"'):]
    step = run["steps"][1]
    roles = [m["role"] for m in step["sent"]["messages"]]
    assert roles[:2] == ["user", "assistant"] and "tool" in roles
    assert second.count('<div class="msg msg-') == len(roles)
    for t in step["sent"]["tools"]:
        tokens = step["request"]["tool_tokens"][t["name"]]
        assert re.search(rf'{t["name"]}</span> <span class="muted small">{re.escape(esc(t["description"]))}</span><span class="right mono muted small">{tokens} tok', second)
        assert esc(t["parameters"]["title"]) in second  # the JSON schema itself
    ours = step["request"]["input_tokens"]
    assert f'<b class="mono ours">{ours:,}</b> input tokens (ours)' in second
    assert '<b class="mono provider">999</b>' in second and f"{999 - ours:+d}" in second


async def test_a_step_shows_what_the_planner_decided_and_why(client: httpx.AsyncClient, session: RecordingSession) -> None:
    run_id = session.record(run_record())
    page = (await client.get(f"/runs/{run_id}")).text
    step = session.store.get(run_id)["steps"][0]  # type: ignore[index]
    rejected = [c for c in step["request"]["candidates"] if c["rejection_reason"]]
    assert rejected
    for c in rejected:
        assert f">{label(c['rejection_reason'])}</span>" in page  # the reason's word (over optimize_at, over-limit, ...)
        assert esc(c["detail"]) in page
    assert re.search(r'<span class="mono">catalog</span> → <span class="rung rung-authored">authored</span>', page)
    assert "max input" in page and "optimize at" in page


async def test_a_step_shows_tool_calls_results_what_the_model_saw_and_offloads(client: httpx.AsyncClient, session: RecordingSession) -> None:
    run_id = session.record(run_record())
    page = (await client.get(f"/runs/{run_id}")).text
    step = session.store.get(run_id)["steps"][0]  # type: ignore[index]
    history = next(r for r in step["tool_results"] if r["name"] == "order_history")
    assert "result (what the application got)" in page and "the model saw" in page
    assert esc(history["output"][:200]) in page  # the canonical output
    assert esc(history["model_output"][:120]) in page  # the preview the model got
    offload = step["offloads"][0]
    assert offload["handle"] in page and "offloaded" in page
    assert "{\n  &#34;order_id&#34;: &#34;INV-1042&#34;\n}" in page  # the arguments, pretty-printed


async def test_a_failed_run_shows_the_error_type_message_and_traceback(client: httpx.AsyncClient, session: RecordingSession) -> None:
    run = run_record(steps=[[tool_call("lookup_order", {"wrong": 1})]])
    assert run["status"] == "error"
    run_id = session.record(run)
    page = (await client.get(f"/runs/{run_id}")).text
    assert 'id="run-error"' in page and "InvalidToolArguments" in page and "chip-error" in page
    crash = run_record(steps=[[tool_call("lookup_order", {"order_id": "A"})]])
    crash["error"] = {"type": "ValueError", "message": "boom <b>", "traceback": 'Traceback (most recent call last):\n  File "agents.py", line 3\nValueError: boom <b>'}
    crash["status"] = "error"
    crash_id = session.record(crash)
    page = (await client.get(f"/runs/{crash_id}")).text
    assert "ValueError" in page and "boom &lt;b&gt;" in page and "<summary>traceback</summary>" in page and 'File &#34;agents.py&#34;, line 3' in page


async def test_a_huge_tool_output_is_shown_up_to_a_cap_with_the_rest_in_the_json(client: httpx.AsyncClient, session: RecordingSession) -> None:
    run = run_record()
    run["steps"][0]["tool_results"][0]["output"] = "x" * (DISPLAY_CAP + 5000)
    run_id = session.record(run)
    page = (await client.get(f"/runs/{run_id}")).text
    assert "5,000 more characters: the JSON has all of it" in page
    whole = (await client.get(f"/api/runs/{run_id}")).json()
    assert len(whole["steps"][0]["tool_results"][0]["output"]) == DISPLAY_CAP + 5000


async def test_an_unknown_run_is_a_404_page_that_says_so(client: httpx.AsyncClient) -> None:
    r = await client.get("/runs/no-such-run")
    assert r.status_code == 404
    assert "No recorded run with id" in r.text and "no-such-run" in r.text and 'href="/runs"' in r.text


async def test_an_xss_payload_in_a_runs_input_and_tool_output_stays_text(client: httpx.AsyncClient, session: RecordingSession) -> None:
    run_id = session.record(run_record(order="XSS", question=XSS, input={"question": XSS}, target="<b>t</b>"))
    for url in (f"/runs/{run_id}", "/runs", "/runs?q=" + "script", "/runs/recent?target=%3Cb%3Et%3C%2Fb%3E"):
        page = (await client.get(url)).text
        assert "<script>window.__xss" not in page and "<img src=x" not in page and "<b>t</b>" not in page, url
    page = (await client.get(f"/runs/{run_id}")).text
    assert "&lt;script&gt;window.__xss = 1&lt;/script&gt;" in page


# ---------------------------------------------------------------- open in the prompt view


async def test_open_in_the_prompt_view_loads_the_steps_input_as_the_custom_input(client: httpx.AsyncClient, session: RecordingSession) -> None:
    question = "Was INV-7 charged twice? \"quoted\" & <odd>"
    run_id = session.record(run_record(question=question, input={"question": question}))
    page = (await client.get(f"/runs/{run_id}")).text
    links = re.findall(r'<a class="button-link replay-link" href="([^"]+)"', page)
    assert len(links) == 2  # one per step
    href = html.unescape(links[1])
    assert href.startswith("/prompts/billing-agent?")
    assert json.loads(parse_qs(urlsplit(href).query)["input"][0]) == {"question": question}
    prompt_page = await client.get(href)
    assert prompt_page.status_code == 200
    textarea = re.search(r'<textarea id="input"[^>]*>(.*?)</textarea>', prompt_page.text, re.S)
    assert textarea and json.loads(html.unescape(textarea.group(1))) == {"question": question}
    assert session.evaluations[-1]["input"] == {"question": question}  # evaluated with that input
    assert esc(question) in prompt_page.text  # ... which is the user prompt shown


# ---------------------------------------------------------------- JSON


async def test_api_runs_lists_summaries_newest_first_with_the_filters(client: httpx.AsyncClient, session: RecordingSession) -> None:
    session.record(run_record(run_id="a", started_at=at(1)))
    session.record(run_record(run_id="b", started_at=at(2), target="support-reply", origin="inspector"))
    session.record(run_record(run_id="c", started_at=at(3), answer="the parcel is lost"))
    r = await client.get("/api/runs")
    assert r.status_code == 200 and r.headers["x-total-count"] == "3"
    body = r.json()
    assert [run["id"] for run in body] == ["c", "b", "a"]
    assert all("steps" not in run and run["step_count"] == 2 and run["input_tokens"] > 0 for run in body)
    assert body[0] == session.store.list(limit=1)[0]
    assert [x["id"] for x in (await client.get("/api/runs?target=support-reply")).json()] == ["b"]
    assert [x["id"] for x in (await client.get("/api/runs?origin=inspector")).json()] == ["b"]
    assert [x["id"] for x in (await client.get("/api/runs?status=ok&limit=2")).json()] == ["c", "b"]
    assert [x["id"] for x in (await client.get("/api/runs?limit=1&offset=1")).json()] == ["b"]
    assert [x["id"] for x in (await client.get("/api/runs?q=parcel")).json()] == ["c"]
    assert [x["id"] for x in (await client.get("/api/runs?text=parcel")).json()] == ["c"]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("limit=0", "limit must be a whole number from 1 to 1000, got '0'"),
        ("limit=ten", "limit must be a whole number from 1 to 1000, got 'ten'"),
        ("offset=-1", "offset must be a whole number from 0 to 1000000000000, got '-1'"),
        ("status=done", "status must be one of ok, error, max_steps, got 'done'"),
        ("origin=robot", "origin must be one of"),
    ],
)
async def test_api_runs_says_what_is_wrong_with_a_bad_query(client: httpx.AsyncClient, query: str, message: str) -> None:
    r = await client.get(f"/api/runs?{query}")
    assert r.status_code == 400 and message in r.json()["detail"]


async def test_api_run_is_the_whole_run_and_404_json_when_unknown(client: httpx.AsyncClient, session: RecordingSession) -> None:
    run = run_record()
    run_id = session.record(run)
    whole = (await client.get(f"/api/runs/{run_id}")).json()
    assert whole == session.store.get(run_id)
    assert [s["sent"]["system"] for s in whole["steps"]] == [s["sent"]["system"] for s in run["steps"]]
    for key in ("id", "target", "kind", "file", "line", "origin", "started_at", "duration_ms", "status", "error", "model", "input", "text", "usage", "steps"):
        assert key in whole
    missing = await client.get("/api/runs/nope")
    assert missing.status_code == 404 and "no recorded run with id 'nope'" in missing.json()["detail"]


# ---------------------------------------------------------------- the prompt page


async def test_the_prompt_page_lists_its_recent_runs_live(client: httpx.AsyncClient, session: RecordingSession) -> None:
    page = (await client.get("/prompts/billing-agent")).text
    hook = re.search(r'<div id="recent-runs"[^>]*>', page)
    assert hook and 'hx-get="/runs/recent?target=billing-agent"' in hook.group(0) and "sse:runs" in hook.group(0)
    assert "none recorded yet" in page  # rendered with the page: nothing shifts when it loads
    empty = (await client.get("/runs/recent?target=billing-agent")).text
    assert "none recorded yet" in empty
    for n in range(7):
        session.record(run_record(run_id=f"r{n}", started_at=at(n)))
    session.record(run_record(run_id="other", started_at=at(9), target="support-reply"))
    recent = (await client.get("/runs/recent?target=billing-agent")).text
    assert re.findall(r'class="recent-run" href="/runs/(r\d)"', recent) == ["r6", "r5", "r4", "r3", "r2"]
    assert 'href="/runs?target=billing-agent"' in recent and "all 7 →" in recent
    page = (await client.get("/prompts/billing-agent")).text
    assert re.findall(r'class="recent-run" href="/runs/(r\d)"', page) == ["r6", "r5", "r4", "r3", "r2"]
    block = (await client.get("/prompts/billing-agent", headers={"HX-Request": "true"})).text
    assert "recent-run" not in block  # a live report swap does not read the store


async def test_run_asks_first_for_an_agent_whose_model_is_not_scripted(client: httpx.AsyncClient, session: RecordingSession) -> None:
    agent = next(p for p in session.report["prompts"] if p["id"] == "billing-agent")  # type: ignore[index]
    agent["model_kind"] = "openai-compatible"
    first = await client.post("/prompts/billing-agent/run", data={"example": "refund"})
    assert first.status_code == 200 and 'id="run-confirm"' in first.text
    assert "Run with a real model? It costs money and runs real tools." in first.text
    # the worker's answer names the model it was about to call and the token that confirms that model
    assert "openai-compatible-model" in first.text
    assert f'hx-vals=\'{{"confirm": "{FAKE_TOKEN}"}}\'' in first.text and 'hx-post="/prompts/billing-agent/run"' in first.text and "<script" not in first.text and "hx-on" not in first.text
    assert session.run_calls == [] and session.store.list() == []  # nothing ran, nothing was spent
    stale = await client.post("/prompts/billing-agent/run", data={"example": "refund", "confirm": "yes"})  # not this model's token
    assert 'id="run-confirm"' in stale.text and session.run_calls == []
    second = await client.post("/prompts/billing-agent/run", data={"example": "refund", "confirm": FAKE_TOKEN})
    assert session.run_calls == [{"prompt_id": "billing-agent", "example": "refund", "input": None}]
    assert 'id="run-recorded"' in second.text


async def test_run_of_a_scripted_agent_runs_at_once_and_links_to_the_recorded_run(client: httpx.AsyncClient, session: RecordingSession) -> None:
    r = await client.post("/prompts/billing-agent/run", data={"example": "refund"})
    assert "run-confirm" not in r.text and len(session.run_calls) == 1
    stored = session.store.list(limit=1)[0]
    assert stored["origin"] == "inspector"
    assert f'id="run-recorded" href="/runs/{stored["id"]}"' in r.text
    assert (await client.get(f"/runs/{stored['id']}")).status_code == 200


async def test_the_run_links_to_where_its_target_is_defined_only_inside_the_project(client: httpx.AsyncClient, session: RecordingSession, tmp_path: Path) -> None:
    inside = run_record()
    inside["file"], inside["line"] = str(tmp_path / "agents.py"), 12
    page = (await client.get(f"/runs/{session.record(inside)}")).text
    assert 'href="/source?file=agents.py&amp;line=12"' in page
    outside = run_record()
    outside["file"] = "/elsewhere/app.py"
    page = (await client.get(f"/runs/{session.record(outside)}")).text
    assert "/elsewhere/app.py:12" in page and "/source?file=%2Felsewhere" not in page and 'title="defined outside the project folder"' in page
