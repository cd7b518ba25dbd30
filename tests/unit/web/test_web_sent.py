"""The prompt page shows the request as sent (route tests through httpx, over the worker's own code)."""

from __future__ import annotations

import html

from markupsafe import escape
import json
import re
from pathlib import Path

import httpx
import pytest
from pydantic import BaseModel
from web_fakes import FakeSession

from crux_devtools import ScriptedModel, context, droppable, offloadable, prefer, prompt, summarizable, tool
from crux_devtools.web.app import create_app

LOG = "\n\n".join(f"Day {d}: the sync stalled at 03:{d:02d} after a token <expired>. It resumed. Nothing was lost." for d in range(80))


class Sku(BaseModel):
    sku: str


LOOKUP = tool("lookup_sku", description="Look up one <product> by SKU.", parameters=Sku, execute=lambda a: {"sku": a.sku})


def ladder_prompt(summary_model: object = None, on_miss: str = "skip") -> object:
    """``on_miss="skip"``: generate never prepares the summary itself, so the offload rung is sent
    until someone prepares it (the page's Prepare button)."""
    catalog = droppable(prefer(
        context("catalog", priority=70, tools=[LOOKUP], system="## Catalog\n" + "Pro 2 TB keeps 30 days of versions. " * 150),
        context("catalog-index", system="## Catalog index\nFree, Pro, Business."),
    ))
    log = offloadable(summarizable(context("sync-log", priority=50, system=LOG), model=summary_model, on_miss=on_miss), above_tokens=100)  # type: ignore[arg-type]
    notes = context("notes", priority=5, system="## Notes\nA low-priority note.")
    return prompt("ladders", system="You answer.", use=[catalog, log, notes], prompt="Why did it stop?",
                  examples={"one": {}}, token_budget=None)


@pytest.fixture
def session(tmp_path: Path) -> FakeSession:
    return FakeSession(tmp_path, [ladder_prompt()])


def the_preview(session: FakeSession, budget: int | None = None) -> dict:
    return session._example(session.prompts["ladders"], "one", {}, None, budget)["preview"]


def after(text: str, marker: str) -> str:
    return text.split(marker, 1)[1]


async def test_the_main_panel_shows_the_system_text_as_sent_part_by_part_with_each_rung(client: httpx.AsyncClient, session: FakeSession) -> None:
    r = await client.get("/prompts/ladders?budget_for=request&budget=1200")
    planned = the_preview(session, 1200)
    system = planned["sent"]["system"]
    body = after(r.text, 'id="sent-system"').split('id="not-sent"')[0]
    for c in planned["contributions"]:
        if c["span"]:
            assert f'data-source="{html.escape(c["contributor"])}" data-rung="{c["representation"]}"' in body
            assert str(escape(system[c["span"][0]:c["span"][1]])) in body
    rungs = {c["contributor"]: c["representation"] for c in planned["contributions"]}
    assert rungs["catalog"] == "authored" and ">authored: catalog-index</span>" in body
    assert 'the authored alternative <span class="mono">catalog-index</span> is sent in place of <span class="mono">catalog</span>' in body
    assert rungs["sync-log"] == "offload"
    handle = next(c["handle"] for c in planned["contributions"] if c["contributor"] == "sync-log")
    assert f'<span class="mono handle"' in body and handle in body
    assert "Pro 2 TB keeps 30 days" not in body  # the full catalog is not what was sent
    assert f'<b class="mono" id="sent-tokens">{planned["input_tokens"]}</b>' in r.text


async def test_every_offered_tool_shows_its_description_schema_and_cost(client: httpx.AsyncClient, session: FakeSession) -> None:
    r = await client.get("/prompts/ladders?budget_for=request&budget=1200")
    planned = the_preview(session, 1200)
    tools = after(r.text, 'id="sent-tools"')
    for t in planned["sent"]["tools"]:
        assert f'data-tool="{t["name"]}"' in tools
        assert f'{planned["tool_tokens"][t["name"]]} tok' in tools
        assert str(escape(json.dumps(t["parameters"], indent=2, ensure_ascii=False))) in tools
    assert "Look up one &lt;product&gt; by SKU." in tools
    assert {t["name"] for t in planned["sent"]["tools"]} == {"lookup_sku", "read_offload"}
    assert f'<b class="mono" id="sent-tool-tokens">{sum(planned["tool_tokens"].values())}</b>' in r.text


async def test_an_omitted_context_is_listed_as_not_sent_with_the_tools_that_left_with_it(client: httpx.AsyncClient, session: FakeSession) -> None:
    session.report["prompts"][0]["contexts"] = [{"id": "catalog", "kind": "context", "owner": "ladders", "conditional": False, "priority": 50, "tools": ["lookup_sku"], "ladder": None, "file": None, "line": None}]
    r = await client.get("/prompts/ladders?budget_for=request&budget=400")
    planned = the_preview(session, 400)
    assert ("catalog", "omitted") in {(a["contributor"], a["representation"]) for a in planned["adaptations"]}
    not_sent = after(r.text, 'id="not-sent"')
    assert "catalog" in not_sent and "omitted by the planner" in not_sent and "lookup_sku</span> are not offered" in not_sent
    assert 'data-tool="lookup_sku"' not in r.text.split('id="sent-tools"')[1] if 'id="sent-tools"' in r.text else True
    assert "lookup_sku" in after(r.text, 'id="unsent-tools"')


async def test_the_resolved_view_is_one_link_away_and_keeps_the_page_state(client: httpx.AsyncClient) -> None:
    r = await client.get("/prompts/ladders?budget_for=request&budget=1200")
    link = re.search(r'id="tab-resolved" class="tab" href="([^"]+)"', r.text)
    assert link and html.unescape(link.group(1)) == "/prompts/ladders?example=one&budget=1200&budget_for=request&view=resolved"
    assert '<input type="hidden" name="view" value="sent" form="controls">' in r.text
    resolved = await client.get(html.unescape(link.group(1)), headers={"HX-Request": "true"})
    assert resolved.text.startswith('<div id="report"') and 'data-view="resolved"' in resolved.text
    assert 'id="system-text"' in resolved.text and 'id="sent-system"' not in resolved.text
    assert "Pro 2 TB keeps 30 days" in resolved.text  # the resolved view shows every part in full
    assert '<input type="hidden" name="view" value="resolved" form="controls">' in resolved.text
    assert "no inline script" and "<script>" not in resolved.text and "hx-on" not in resolved.text


async def test_an_over_limit_plan_says_nothing_would_be_sent_and_shows_the_diagnostics(client: httpx.AsyncClient, session: FakeSession) -> None:
    r = await client.get("/prompts/ladders?budget_for=request&budget=30")
    planned = the_preview(session, 30)
    assert planned["status"] == "over-limit"
    banner = after(r.text, 'id="over-limit"')
    assert "Over limit: nothing would be sent" in banner and planned["error_code"] in banner
    for d in planned["diagnostics"]:
        assert str(escape(d["message"])) in banner
    assert "chip-over" in r.text.split('id="over-limit"')[0] and 'id="nothing-sent"' in r.text
    assert 'id="sent-tokens"' not in r.text


async def test_the_planning_panel_names_the_profile_and_never_prints_none_tokens(client: httpx.AsyncClient) -> None:
    r = await client.get("/prompts/ladders?budget_for=request&budget=1200")
    planning = after(r.text, 'id="planning"')
    assert "conservative 8k default: no model is named" in planning and 'id="profile-hint"' in planning
    assert re.search(r'data-limit="context_window">context window</dt><dd class="mono"[^>]*>8,192</dd>', planning)
    assert "not prepared" in planning
    text = re.sub(r"<[^>]+>", " ", r.text)
    assert not re.search(r"None\s+tok", text) and not re.search(r">\s*None\s*<", r.text)  # never "None tokens"


async def test_preparing_a_summary_from_the_page_makes_it_a_measured_rung_that_the_plan_sends(client: httpx.AsyncClient, session: FakeSession) -> None:
    page = await client.get("/prompts/ladders?budget_for=request&budget=2500")
    assert 'class="ghost small prepare-summary"' in page.text and 'value="sync-log"' in page.text
    assert 'data-source="sync-log" data-rung="offload"' in page.text
    form = {"example": "one", "budget": "2500", "budget_for": "request", "input": "", "view": "sent", "contributor": "sync-log"}
    r = await client.post("/prompts/ladders/summaries", data=form, headers={"HX-Request": "true", "Origin": "http://127.0.0.1:4400"})
    assert r.status_code == 200
    assert "Prepared the summary of <span class=\"mono strong\">sync-log</span>" in r.text
    assert (session.root / ".crux" / "summaries.sqlite3").is_file()
    assert session.report["prompts"][0]["examples"][0]["summaries"][0]["prepared"] is True
    planned = the_preview(session, 2500)
    assert ("sync-log", "summary") in {(a["contributor"], a["representation"]) for a in planned["adaptations"]}
    body = after(r.text, 'id="sent-system"')
    assert 'data-source="sync-log" data-rung="summary"' in body and "[summary of sync-log]" in body
    assert 'class="ghost small prepare-summary"' not in r.text  # nothing left to prepare


async def test_a_hierarchical_summary_needs_a_second_explicit_action_before_the_model_is_called(tmp_path: Path) -> None:
    summarizer = ScriptedModel(["The sync stalled at 03:xx every day; nothing was lost."] * 4, name="summarizer")
    session = FakeSession(tmp_path, [ladder_prompt(summary_model=summarizer)])
    headers = {"HX-Request": "true", "Origin": "http://127.0.0.1:4400"}
    form = {"example": "one", "budget": "2500", "budget_for": "request", "contributor": "sync-log"}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(session)), base_url="http://127.0.0.1:4400") as c:
        page = await c.get("/prompts/ladders?budget_for=request&budget=2500")
        assert "Prepare summary…" in page.text
        first = await c.post("/prompts/ladders/summaries", data=form, headers=headers)
        assert summarizer.requests == []
        assert "preparing it calls the model <span class=\"mono\">summarizer</span>" in first.text
        assert "Prepare with model (calls the model)" in first.text and "hx-vals='{\"allow_models\": \"1\"}'" in first.text
        second = await c.post("/prompts/ladders/summaries", data={**form, "allow_models": "1"}, headers=headers)
    assert len(summarizer.requests) >= 1
    assert 'data-source="sync-log" data-rung="summary"' in second.text
    assert "The sync stalled at 03:xx every day" in second.text


async def test_the_list_shows_each_prompts_planned_input_tokens(client: httpx.AsyncClient, session: FakeSession) -> None:
    r = await client.get("/")
    planned = session.report["prompts"][0]["examples"][0]["preview"]["input_tokens"]
    assert session.report["prompts"][0]["total_tokens"] == planned
    assert f'<td class="num mono">{planned}</td>' in r.text
    api = (await client.get("/api/prompts")).json()
    assert api[0]["total_tokens"] == planned
