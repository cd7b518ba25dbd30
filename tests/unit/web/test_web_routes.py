"""Route tests for the web inspector, through httpx against the ASGI app (no network)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from web_fakes import FakeSession, default_prompts, load_error, support_prompt

from crux_devtools.web.app import create_app


@pytest.fixture
def session(tmp_path: Path) -> FakeSession:
    return FakeSession(tmp_path, agent_ids=("support-reply",))


async def test_index_lists_every_prompt_with_status_tokens_and_where_it_is_defined(client: httpx.AsyncClient, session: FakeSession) -> None:
    r = await client.get("/")
    assert r.status_code == 200
    for p in session.report["prompts"]:
        assert f'href="/prompts/{p["id"]}"' in r.text
        assert f'>{p["total_tokens"]}<' in r.text
        assert f'{p["file"]}<span class="dim">:{p["line"]}<' in r.text
    assert "chip-fits" in r.text and "prompts.py<span" in r.text


async def test_index_shows_load_errors_with_file_and_line_and_a_stale_chip(client: httpx.AsyncClient, session: FakeSession) -> None:
    await session.fail(load_error("broken.py", 7, "invalid syntax"))
    r = await client.get("/")
    assert "broken.py:7" in r.text and "invalid syntax" in r.text
    assert "chip-stale" in r.text and "Stale report" in r.text


async def test_prompt_page_shows_each_part_with_its_source_and_the_user_prompt(client: httpx.AsyncClient) -> None:
    r = await client.get("/prompts/support-reply?example=billing")
    assert r.status_code == 200
    for source in ("&lt;prompt&gt;", "house-rules", "product-facts", "billing"):
        assert f'data-source="{source}"' in r.text
    assert "Charged twice on INV-1042?" in r.text
    assert "lookup_order" in r.text and "from <span class=\"mono\">billing</span>" in r.text


async def test_a_part_has_the_same_colour_in_the_text_and_the_token_bar(client: httpx.AsyncClient) -> None:
    import re

    sent = await client.get("/prompts/support-reply")
    seg = re.search(r'class="seg (c-\d+)"[^>]*data-source="house-rules"', sent.text)
    part = re.search(r'class="part sent-part (c-\d+) rung-full" data-source="house-rules"', sent.text)
    assert seg and part and seg.group(1) == part.group(1)
    resolved = await client.get("/prompts/support-reply?view=resolved")
    seg = re.search(r'class="seg (c-\d+) seg-active"[^>]*data-source="house-rules"', resolved.text)
    part = re.search(r'class="part (c-\d+)" data-source="house-rules"', resolved.text)
    assert seg and part and seg.group(1) == part.group(1)


async def test_a_budget_in_the_query_drops_the_lowest_priority_context(client: httpx.AsyncClient, session: FakeSession) -> None:
    r = await client.get("/prompts/support-reply?example=billing&budget=40&budget_for=system")
    assert session.evaluations[-1]["token_budget"] == 40
    assert 'id="dropped"' in r.text and "product-facts" in r.text.split('id="dropped"')[1]
    full = await client.get("/prompts/support-reply?example=billing")
    assert 'id="dropped"' not in full.text


async def test_an_htmx_request_gets_only_the_report_block(client: httpx.AsyncClient) -> None:
    r = await client.get("/prompts/support-reply?budget=40", headers={"HX-Request": "true"})
    assert r.text.lstrip().startswith('<div id="report"')
    assert "<html" not in r.text and 'id="controls"' not in r.text
    listing = await client.get("/", headers={"HX-Request": "true"})
    assert listing.text.lstrip().startswith('<div id="listing"')


async def test_the_example_picker_selects_another_example(client: httpx.AsyncClient) -> None:
    r = await client.get("/prompts/support-reply?example=french")
    assert '<option value="french" selected>' in r.text
    assert "Réponds en français." in r.text and "Bonjour" in r.text


async def test_a_custom_input_is_checked_field_by_field_against_the_schema(client: httpx.AsyncClient, session: FakeSession) -> None:
    bad = json.dumps({"lang": 3, "colour": "red"})
    r = await client.get("/prompts/support-reply", params={"input": bad})
    errors = r.text.split('id="input-errors"')[1]
    assert "message" in errors and "required field is missing" in errors
    assert "lang" in errors and "expected string, got integer" in errors
    assert "colour" in errors and "unknown field" in errors
    assert session.evaluations == []  # never sent to the worker


async def test_a_valid_custom_input_is_evaluated(client: httpx.AsyncClient, session: FakeSession) -> None:
    r = await client.get("/prompts/support-reply", params={"input": json.dumps({"message": "Hola", "lang": "fr"})})
    assert session.evaluations[-1]["input"] == {"message": "Hola", "lang": "fr"}
    assert "Hola" in r.text and "Réponds en français." in r.text


async def test_malformed_json_input_names_line_and_column(client: httpx.AsyncClient) -> None:
    r = await client.get("/prompts/support-reply", params={"input": '{"message": '})
    assert "not valid JSON" in r.text and "line 1, column" in r.text


async def test_a_non_numeric_budget_is_explained(client: httpx.AsyncClient) -> None:
    r = await client.get("/prompts/support-reply?budget=lots")
    assert r.status_code == 200 and "budget &#39;lots&#39; is not a whole number" in r.text


async def test_an_unknown_prompt_is_a_404_page(client: httpx.AsyncClient) -> None:
    r = await client.get("/prompts/nope")
    assert r.status_code == 404 and "No prompt or agent named" in r.text


async def test_planning_section_says_not_available_without_a_preview(client: httpx.AsyncClient, session: FakeSession) -> None:
    for example in next(p for p in session.report["prompts"] if p["id"] == "support-reply")["examples"]:
        example["preview"] = None
    r = await client.get("/prompts/support-reply")
    assert 'id="planning-unavailable"' in r.text
    assert 'id="sent-unavailable"' in r.text  # the main panel says so too, and points at the resolved view


async def test_diff_shows_the_change_after_a_save(client: httpx.AsyncClient, session: FakeSession) -> None:
    await session.replace([support_prompt("Never promise refunds. Always sign as Ari."), *default_prompts()[1:]])
    r = await client.get("/prompts/support-reply?example=billing")
    assert 'class="dl dl-add">+Never promise refunds. Always sign as Ari.' in r.text
    assert 'class="dl dl-del">-Never promise refunds.' in r.text


async def test_run_shows_each_step_with_tool_calls_results_and_offloads(client: httpx.AsyncClient, session: FakeSession) -> None:
    r = await client.post("/prompts/support-reply/run", data={"example": "billing"})
    assert r.status_code == 200
    assert session.run_calls == [{"prompt_id": "support-reply", "example": "billing", "input": None}]
    assert "step 0" in r.text and "step 1" in r.text and "lookup_order" in r.text
    assert "INV-1042" in r.text and "off_1" in r.text and "receipt req-2" in r.text


async def test_run_is_refused_for_a_prompt_without_a_model(client: httpx.AsyncClient) -> None:
    r = await client.post("/prompts/xss-probe/run", data={})
    assert r.status_code == 400 and "has no model" in r.text


async def test_api_lists_prompts_and_returns_one_whole_report(client: httpx.AsyncClient, session: FakeSession) -> None:
    listing = (await client.get("/api/prompts")).json()
    assert [p["id"] for p in listing] == ["support-reply", "xss-probe"]
    assert listing[0]["examples"] == ["billing", "french"] and listing[0]["status"] == "fits"
    one = (await client.get("/api/prompts/support-reply")).json()
    assert one["input_schema"]["title"] == "TicketInput" or "properties" in one["input_schema"]
    assert [e["name"] for e in one["examples"]] == ["billing", "french"]
    assert one["examples"][0]["inspection"]["parts"][0]["source"] == "<prompt>"
    assert one["errors"] == [] and one["version"] == session.version
    missing = await client.get("/api/prompts/nope")
    assert missing.status_code == 404 and "support-reply" in missing.json()["detail"]


async def test_static_assets_are_served_from_the_package(client: httpx.AsyncClient) -> None:
    css = await client.get("/static/app.css")
    assert css.status_code == 200 and ".tokenbar" in css.text
    page = await client.get("/")
    assert "/static/vendor/htmx.min.js" in page.text and "https://" not in page.text


async def test_the_budget_can_limit_the_whole_request_for_the_planner_instead(client: httpx.AsyncClient, session: FakeSession) -> None:
    r = await client.get("/prompts/support-reply?example=billing&budget=500")  # an agent: the planner's budget by default
    assert session.evaluations[-1]["input_budget"] == 500 and session.evaluations[-1]["token_budget"] is None
    assert '<option value="request" selected>' in r.text
    await client.get("/prompts/support-reply?example=billing&budget=500&budget_for=system")
    assert session.evaluations[-1]["token_budget"] == 500 and session.evaluations[-1]["input_budget"] is None


async def test_a_failing_example_shows_its_error_and_an_error_chip(tmp_path: Path) -> None:
    from crux_devtools import context, prompt

    def boom(_: object) -> str:
        raise RuntimeError("the catalog service is down")

    broken = prompt("broken", system="Hi.", use=[context("catalog", system=boom)], examples={"one": {}})
    app = create_app(FakeSession(tmp_path, [broken]))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://localhost") as c:
        listing = await c.get("/")
        assert "chip-error" in listing.text
        page = await c.get("/prompts/broken")
        assert "the catalog service is down" in page.text and 'class="chip chip-error"' in page.text


async def test_a_live_update_for_a_removed_prompt_says_it_is_gone(client: httpx.AsyncClient, session: FakeSession) -> None:
    await session.replace(default_prompts()[1:])
    r = await client.get("/prompts/support-reply?example=billing", headers={"HX-Request": "true"})
    assert r.status_code == 200 and r.text.lstrip().startswith('<div id="report">')
    assert 'id="missing"' in r.text and "support-reply" in r.text


async def test_a_memory_part_says_what_it_found_and_left_out_escaped(tmp_path: Path) -> None:
    from crux_devtools import MemoryStore, facts, memory, prompt

    store = MemoryStore(tmp_path / "memory.sqlite3")
    namespace = "<b>acme</b>"
    store.remember_many(namespace, [{"content": f"Acme export {i} fails on reports over 2 GB", "entry_type": "fact"} for i in range(10)])
    mem = memory("team-memory", store=store, namespace=namespace, query="export reports", blocks=[facts("facts", max_tokens=50)])
    session = FakeSession(tmp_path, [prompt("briefing", system="Brief the agent.", use=[mem])])
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(session)), base_url="http://127.0.0.1:4400") as c:
        r = await c.get("/prompts/briefing")
    store.close()
    assert r.status_code == 200
    assert "<b>acme</b>" not in r.text
    detail = "namespace &#39;&lt;b&gt;acme&lt;/b&gt;&#39;: facts: 10 matching facts, "
    assert r.text.count(detail) == 2  # on the part in the system text, and in the contributors list
    assert "left out by the 50-token budget" in r.text


async def test_a_context_defined_at_module_level_links_to_its_line(client: httpx.AsyncClient, session: FakeSession) -> None:
    prompt_report = next(p for p in session.report["prompts"] if p["id"] == "support-reply")
    prompt_report["contexts"] = [{"id": "house-rules", "kind": "context", "owner": "support-reply", "conditional": False, "priority": 50, "tools": [], "ladder": None, "file": "rules/house.py", "line": 7}]
    r = await client.get("/prompts/support-reply?example=billing")
    link = '<a class="mono src-link" href="/source?file=rules/house.py&amp;line=7" title="defined at rules/house.py:7">house-rules</a>'
    assert r.text.count(link) == 2  # its label in the system text, and its row in the contributors
    assert '<span class="mono">billing</span>' in r.text  # no known location: plain text


async def test_the_system_text_card_says_when_the_planner_adapted_the_request(tmp_path: Path) -> None:
    from crux_devtools import context, droppable, prompt

    big = context("sync-log", system="line of the sync log\n" * 400, priority=10)
    p = prompt("ladder", system="You answer.", use=[context("rules", system="Be brief."), droppable(big)])
    session = FakeSession(tmp_path, [p])
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(session)), base_url="http://127.0.0.1:4400") as c:
        plain = await c.get("/prompts/ladder?budget_for=request&view=resolved")
        tight = await c.get("/prompts/ladder?budget_for=request&budget=100&view=resolved")
        sent = await c.get("/prompts/ladder?budget_for=request&budget=100")
    assert 'id="planned-note"' not in plain.text
    assert 'id="planned-note"' in tight.text
    assert 'The planner adapted the request' in tight.text and '<span class="mono">sync-log</span> → <span class="tag">omitted</span>' in tight.text
    # The default view is the request as sent: the omitted log is listed as not sent, and its text is nowhere.
    assert 'id="not-sent"' in sent.text and "omitted by the planner" in sent.text
    assert "line of the sync log" not in sent.text.split('id="sent-system"')[1].split('id="not-sent"')[0]


async def test_the_run_address_opened_with_get_leads_to_the_prompts_page(client: httpx.AsyncClient) -> None:
    """Reloading (or bookmarking) the address a Run posted to shows the prompt, not "Not found"."""
    r = await client.get("/prompts/support-reply/run")
    assert r.status_code == 303 and r.headers["location"] == "/prompts/support-reply"
    page = await client.get("/prompts/support-reply/run", follow_redirects=True)
    assert page.status_code == 200 and "Not found" not in page.text and "support-reply" in page.text
    by_query = await client.get("/prompt/run", params={"id": "support-reply"})
    assert by_query.status_code == 303 and by_query.headers["location"] == "/prompts/support-reply"
    assert (await client.get("/prompts/no-such/run")).status_code == 404
