"""Navigation in the web prompt list: search over id, module and file, one group per file,
status filters with counts, and the empty result; through httpx against the ASGI app.

The prompts are real (``Prompt.inspect`` through ``FakeSession``); each is placed in a module and file
of its own here, so the list has several groups, and its status comes from its own evaluation: a
prompt with a tiny ``token_budget`` is "over-budget", one whose example lacks a required field is "invalid-input".
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import BaseModel
from web_fakes import FakeSession

from crux_devtools import context, prompt
from crux_devtools.web.app import create_app

HOSTILE_MODULE = '<img src=x onerror="window.__xss=1">mod'
HOSTILE_ID = '<script>window.__xss=2</script>"id'


class Question(BaseModel):
    question: str


def plain(prompt_id: str) -> Any:
    return prompt(prompt_id, system=f"You answer as {prompt_id}.", input=Question, prompt=lambda i: i.question,
                  examples={"one": {"question": "Where is my order?"}})


def over_budget(prompt_id: str) -> Any:
    rules = context("rules", system="## Rules\n" + "Always be exact about amounts. " * 30, priority=100)
    return prompt(prompt_id, system="You audit refunds. " * 10, use=[rules], token_budget=5, examples={"one": {}})


def broken(prompt_id: str) -> Any:
    return prompt(prompt_id, system="You need a question.", input=Question, prompt=lambda i: i.question,
                  examples={"missing-question": {}})


# id -> (module, file, prompt factory)
PLACES: dict[str, tuple[str, str, Any]] = {
    "refund-reply": ("billing.refunds", "billing/refunds.py", plain),
    "refund-audit": ("billing.refunds", "billing/refunds.py", over_budget),
    "invoice-summary": ("billing.invoices", "billing/invoices.py", plain),
    "support-reply": ("support", "support.py", plain),
    "support-broken": ("support", "support.py", broken),
    "Greeter": ("onboarding", "onboarding/welcome.py", plain),
    HOSTILE_ID: (HOSTILE_MODULE, HOSTILE_MODULE + ".py", plain),
}


class PlacedSession(FakeSession):
    """The fake session with each prompt in its own module and file; ``stale_modules`` are shown
    from an earlier load (per-module staleness, as ``PromptReport["stale"]``)."""

    def __init__(self, root: Path) -> None:
        self.stale_modules: set[str] = set()
        super().__init__(root, [factory(pid) for pid, (_, _, factory) in PLACES.items()])

    def _rebuild(self) -> None:
        super()._rebuild()
        assert self._report is not None
        for entry in self._report["prompts"]:
            entry["module"], entry["file"], _ = PLACES[entry["id"]]
            entry["stale"] = entry["module"] in self.stale_modules


@pytest.fixture
def session(tmp_path: Path) -> PlacedSession:
    return PlacedSession(tmp_path)


def row_ids(page: str) -> list[str]:
    return [html.unescape(m) for m in re.findall(r'<tr class="prompt-row" data-id="([^"]*)"', page)]


def headings(page: str) -> list[tuple[str, str]]:
    """(module, count text) of each group heading, in order."""
    found = re.findall(r'<span class="mono strong group-name">(.*?)</span>.*?<span class="count group-count">(.*?)</span>', page, re.S)
    return [(text_of(m), c) for m, c in found]


def text_of(fragment: str) -> str:
    """The text a browser shows for an HTML fragment (tags such as <mark> dropped, entities decoded)."""
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def facet_counts(page: str) -> dict[str, int]:
    return {key or "all": int(n) for key, n in re.findall(r'data-status="([a-z-]*)"[^>]*>[^<]*<b class="mono">(\d+)</b>', page)}


def test_the_prompts_have_the_statuses_the_tests_rely_on(session: PlacedSession) -> None:
    statuses = {p["id"]: p["status"] for p in session.report["prompts"]}
    assert statuses["refund-audit"] == "over-budget" and statuses["support-broken"] == "invalid-input" and statuses["refund-reply"] == "fits"


async def test_without_a_filter_every_prompt_is_listed_under_its_file_heading_with_the_file_count(client: httpx.AsyncClient) -> None:
    page = (await client.get("/")).text
    assert headings(page) == [
        ("billing/refunds.py", "2"), ("billing/invoices.py", "1"), ("support.py", "2"), ("onboarding/welcome.py", "1"),
        (HOSTILE_MODULE + ".py", "1"),
    ]
    assert row_ids(page) == list(PLACES)
    # each row sits inside its own file's group
    support = page.split('data-group="support.py"')[1].split("</details>")[0]
    assert row_ids(support) == ["support-reply", "support-broken"]
    assert "7 found" in page and "in 5 files" in page


async def test_a_search_by_prompt_id_keeps_only_the_matching_rows_and_their_groups(client: httpx.AsyncClient) -> None:
    page = (await client.get("/", params={"q": "REFUND"})).text  # case does not matter
    assert row_ids(page) == ["refund-reply", "refund-audit"]
    assert headings(page) == [("billing/refunds.py", "2")]
    assert "<b>2</b> of 7 shown" in page
    assert 'value="REFUND"' in page  # the box shows the search on a reload or a shared link


async def test_a_search_by_module_name_lists_the_whole_module_and_says_how_many_of_it_match(client: httpx.AsyncClient) -> None:
    page = (await client.get("/", params={"q": "billing.invoices"})).text
    assert row_ids(page) == ["invoice-summary"]
    both = (await client.get("/", params={"q": "onboarding"})).text
    assert row_ids(both) == ["Greeter"]  # found by its module; "Greeter" itself does not say it
    partial = (await client.get("/", params={"q": "billing reply"})).text  # every word must match
    assert row_ids(partial) == ["refund-reply"]
    assert headings(partial) == [("billing/refunds.py", "1 of 2")]


async def test_a_search_by_file_path_finds_prompts_whose_module_and_id_do_not_say_it(client: httpx.AsyncClient) -> None:
    page = (await client.get("/", params={"q": "welcome.py"})).text
    assert row_ids(page) == ["Greeter"]
    folder = (await client.get("/", params={"q": "billing/"})).text
    assert row_ids(folder) == ["refund-reply", "refund-audit", "invoice-summary"]


async def test_the_status_filters_count_each_status_and_show_only_the_chosen_one(client: httpx.AsyncClient) -> None:
    page = (await client.get("/")).text
    assert facet_counts(page) == {"all": 7, "fits": 5, "over-budget": 1, "invalid-input": 1, "stale": 0}
    over = (await client.get("/", params={"status": "over-budget"})).text
    assert row_ids(over) == ["refund-audit"]
    assert 'aria-current="true">over budget' in over
    assert facet_counts(over) == facet_counts(page)  # the counts say what each filter would show
    errors = (await client.get("/", params={"status": "invalid-input"})).text
    assert row_ids(errors) == ["support-broken"]


async def test_the_status_counts_are_of_the_rows_the_search_matches_and_a_filter_keeps_the_search(client: httpx.AsyncClient) -> None:
    page = (await client.get("/", params={"q": "refund"})).text
    assert facet_counts(page) == {"all": 2, "fits": 1, "over-budget": 1, "stale": 0}  # a status no row has is not offered
    assert 'href="/?q=refund&amp;status=over-budget"' in page  # the filter link keeps the search
    both = (await client.get("/", params={"q": "refund", "status": "fits"})).text
    assert row_ids(both) == ["refund-reply"]


async def test_a_module_shown_from_an_earlier_load_counts_and_filters_as_stale(client: httpx.AsyncClient, session: PlacedSession) -> None:
    session.stale_modules = {"support"}
    await session.reload()
    page = (await client.get("/", params={"status": "stale"})).text
    assert row_ids(page) == ["support-reply", "support-broken"]
    assert facet_counts(page)["stale"] == 2 and facet_counts(page)["invalid-input"] == 1


async def test_a_search_that_matches_nothing_says_so_and_offers_to_clear_the_filter(client: httpx.AsyncClient) -> None:
    page = (await client.get("/", params={"q": "no-such-thing", "status": "over-budget"})).text
    assert row_ids(page) == [] and 'id="list-empty"' in page
    empty = page.split('id="list-empty"')[1].split("</div>")[0]
    assert "No prompt or agent matches" in empty and "no-such-thing" in empty and "over" in empty
    assert 'href="/" id="list-clear"' in empty and "show all 7" in empty
    assert "No prompts or agents found yet" not in page  # that sentence is for an empty project


async def test_a_hostile_module_name_and_prompt_id_are_escaped_in_the_heading_the_row_and_the_search_box(client: httpx.AsyncClient) -> None:
    page = (await client.get("/")).text
    assert '<span class="mono strong group-name">&lt;img src=x onerror=&#34;window.__xss=1&#34;&gt;mod.py</span>' in page
    for query in ({}, {"q": "onerror"}, {"q": "<script>"}, {"q": HOSTILE_MODULE}):
        page = (await client.get("/", params=query)).text
        assert "<img src=x" not in page and "<script>window" not in page
        assert (HOSTILE_MODULE + ".py", "1") in headings(page)
        assert 'data-group="&lt;img src=x onerror=&#34;window.__xss=1&#34;&gt;mod.py"' in page
        assert HOSTILE_ID in row_ids(page)
    marked = (await client.get("/", params={"q": "onerror"})).text
    assert '&lt;img src=x <mark>onerror</mark>=&#34;window.__xss=1&#34;&gt;mod.py</span>' in marked  # the mark is ours, the text escaped
    tag = (await client.get("/", params={"q": "<script>"})).text
    assert '<mark>&lt;script&gt;</mark>window.__xss=2&lt;/script&gt;&#34;id</a>' in tag
    searched = (await client.get("/", params={"q": HOSTILE_MODULE})).text
    assert 'value="&lt;img src=x onerror=&#34;window.__xss=1&#34;&gt;mod"' in searched


async def test_the_words_searched_for_are_marked_in_ids_file_headings_and_files(client: httpx.AsyncClient) -> None:
    page = (await client.get("/", params={"q": "Refund PY"})).text
    assert '><mark>refund</mark>-reply</a>' in page and '><mark>refund</mark>-audit</a>' in page
    assert '<span class="mono strong group-name">billing/<mark>refund</mark>s.<mark>py</mark></span>' in page
    assert 'billing/<mark>refund</mark>s.<mark>py</mark><span class="dim">:' in page
    plain = (await client.get("/")).text
    assert "<mark>" not in plain


async def test_the_search_is_a_plain_get_form_that_htmx_submits_in_place(client: httpx.AsyncClient) -> None:
    page = (await client.get("/", params={"status": "error"})).text
    form = page.split('<form id="list-filters"')[1].split("</form>")[0]
    assert 'action="/" method="get"' in form and 'name="q"' in form and 'type="submit"' in form
    assert 'hx-get="/"' in form and 'hx-target="#listing"' in form
    assert "press / to focus" in form  # the key's hint, in the placeholder
    # the status rides along with the form from inside the swapped list (form="list-filters")
    assert '<input type="hidden" id="list-status" name="status" value="error" form="list-filters">' in page
    assert 'hx-include="#list-filters"' in page.split('class="live-hook" hx-get="/"')[1].split(">")[0]


async def test_an_htmx_search_gets_the_list_block_and_the_address_of_its_state(client: httpx.AsyncClient) -> None:
    r = await client.get("/", params={"q": " refund  ", "status": "over-budget"}, headers={"HX-Request": "true"})
    assert r.text.lstrip().startswith('<div id="listing"') and "<html" not in r.text and "list-filters\"" in r.text
    assert r.headers["HX-Replace-Url"] == "/?q=refund&status=over-budget"
    cleared = await client.get("/", params={"q": "", "status": ""}, headers={"HX-Request": "true"})
    assert cleared.headers["HX-Replace-Url"] == "/"
    full = await client.get("/", params={"q": "refund"})
    assert "HX-Replace-Url" not in full.headers and "<html" in full.text


async def test_an_unknown_status_is_explained_and_every_status_is_shown(client: httpx.AsyncClient) -> None:
    r = await client.get("/", params={"status": "broken"})
    assert r.status_code == 200
    assert "status must be one of fits, over-optimize-at, not-checked, over-budget, over-limit, unmatched, invalid-input, error, stale, got &#39;broken&#39;" in r.text
    assert len(row_ids(r.text)) == 7


async def test_a_live_update_with_the_filter_in_its_query_renders_the_same_narrowed_list(client: httpx.AsyncClient, session: PlacedSession) -> None:
    await session.replace([factory(pid) for pid, (_, _, factory) in PLACES.items() if pid != "refund-audit"])
    r = await client.get("/", params={"q": "refund", "status": ""}, headers={"HX-Request": "true"})
    assert row_ids(r.text) == ["refund-reply"] and 'data-version="2"' in r.text
