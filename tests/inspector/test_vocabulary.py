"""One rung vocabulary (core/plan/rungs.py) and one limits panel (inspector/features/shown/limits.py), read by every surface.

The planner is run on real cases that produce every rung and every rejection reason; the web page
(the real template through the real app) and the TUI (the real app through ``run_test``) show each
with the vocabulary's label, and the same limits rows for the same report.
"""

from __future__ import annotations

import html
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

sys.path.insert(0, str(Path(__file__).parents[1]))
from test_tui import detail_lines, settle  # noqa: E402
from tui_fakes import FakeSession as TuiSession  # noqa: E402
from web_fakes import FakeSession as WebSession  # noqa: E402

from crux_devtools import (  # noqa: E402
    InputBudget,
    ModelCapacityProfile,
    ScriptedModel,
    SummaryStore,
    context,
    droppable,
    offloadable,
    prefer,
    preview,
    prompt,
    summarizable,
    tool,
)
from crux_devtools.core.plan import rungs  # noqa: E402
from crux_devtools.core.plan.summaries import artifact_key, summarize  # noqa: E402
from crux_devtools.inspector.features.shown.limits import LIMITS, MISSING, limit_rows  # noqa: E402
from crux_devtools.tui import make_tui  # noqa: E402
from crux_devtools.tui.widgets import PromptTree  # noqa: E402
from crux_devtools.tui.widgets.planning import render_planning  # noqa: E402
from crux_devtools.web.app import create_app, make_templates  # noqa: E402
from crux_devtools.web.views.planning import planning_view  # noqa: E402


class Sku(BaseModel):
    sku: str


LOOKUP = tool("lookup_sku", description="Look up a SKU", parameters=Sku, execute=lambda p: {"sku": p.sku})


def big(label: str, n: int) -> str:
    return f"{label}: " + " ".join(f"{label.lower()} line {i} says something useful, number {i}." for i in range(n))


def model() -> ScriptedModel:
    return ScriptedModel(["ok"], name="vocab-test", capacity=ModelCapacityProfile(1_000_000, 0, "exact"))


def planner_cases() -> list[dict[str, Any]]:
    """Real plans that between them emit every rung and every rejection reason."""
    catalog = context("catalog", system=big("Catalog", 200), tools=[LOOKUP], priority=80)
    index = context("catalog-index", system="Catalog index: SKUs A1 to A200.")
    examples = context("examples", system=big("Example", 60), priority=10)
    shop = prompt("shop", system="You help.", use=[droppable(prefer(catalog, index)), droppable(examples)])
    plans = [
        # full over the limit, authored chosen, omitted a lower fidelity / a required tool
        preview(shop, input={}, model=model(), input_budget=InputBudget(max=400), active_tools=["lookup_sku"]),
        preview(shop, input={}, model=model(), input_budget=InputBudget(max=1200)),
        # full fits max but not optimize_at, and authored fits under it
        preview(shop, input={}, model=model(), input_budget=InputBudget(optimize_at=400, max=100_000)),
    ]
    doc = context("doc", system=big("Doc", 100))
    store = SummaryStore()
    strategy = summarize.extractive()
    store.put(artifact_key(doc.system, strategy, None), strategy, None, "Doc: short summary.")  # type: ignore[arg-type]
    summarized = prompt("summarized", use=[droppable(summarizable(doc))])
    plans.append(preview(summarized, input={}, model=model(), input_budget=InputBudget(max=100), summary_store=store))  # summary
    plans.append(preview(summarized, input={}, model=model(), input_budget=InputBudget(max=100), summary_store=SummaryStore()))  # unprepared
    small = context("small", system="A short log line.")
    log = context("log", system="\n".join(f"12:{i:02d} INFO request {i} ok" for i in range(2000)))
    offloaded = prompt("offloaded", use=[droppable(offloadable(small, above_tokens=1000)), offloadable(log)])
    plans.append(preview(offloaded, input={}, model=model(), input_budget=InputBudget(max=600)))  # offload, below-floor
    return [p.to_dict() for p in plans]


@pytest.fixture(scope="module")
def plans() -> list[dict[str, Any]]:
    return planner_cases()


def emitted(plans: list[dict[str, Any]]) -> tuple[set[str], set[str]]:
    candidates = [c for plan in plans for c in plan["candidates"]]
    names = {c["representation"] for c in candidates} | {a["representation"] for plan in plans for a in plan["adaptations"]}
    reasons = {c["rejection_reason"] for c in candidates if c["rejection_reason"] is not None}
    return names, reasons


def test_every_rung_and_reason_the_planner_emits_is_in_the_vocabulary_and_every_word_is_emitted(plans: list[dict[str, Any]]) -> None:
    names, reasons = emitted(plans)
    assert names == set(rungs.RUNGS)
    assert reasons == set(rungs.REJECTION_REASONS)


def test_the_vocabulary_is_ordered_by_fidelity_and_each_word_has_a_label_and_a_description() -> None:
    assert rungs.RUNGS == ("full", "authored", "summary", "offload", "omitted")
    assert [rungs.rung_rank(name) for name in rungs.RUNGS] == list(range(len(rungs.RUNGS)))
    assert rungs.rung_rank("some-future-rung") == len(rungs.RUNGS)  # an unknown name sorts last
    for name in (*rungs.RUNGS, *rungs.REJECTION_REASONS):
        assert rungs.label(name) and rungs.description(name)
    assert rungs.label("not-a-word") == "not-a-word" and rungs.label(None) == ""


def test_the_planner_lists_each_contributors_rungs_in_the_vocabulary_order(plans: list[dict[str, Any]]) -> None:
    for plan in plans:
        by_contributor: dict[str, list[str]] = {}
        for c in plan["candidates"]:
            by_contributor.setdefault(c["contributor"], []).append(c["representation"])
        for names in by_contributor.values():
            assert names == sorted(names, key=rungs.rung_rank)


@pytest.fixture
def relabelled(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Every word gets a label that differs from its name, so a surface showing the raw name fails."""
    shown: dict[str, str] = {}
    for table in (rungs.RUNG_TERMS, rungs.REASON_TERMS):
        for name, term in list(table.items()):
            shown[name] = f"L<{name}>"
            monkeypatch.setitem(table, name, rungs.Term(name, shown[name], f"what {name} means"))
    return shown


def example_of(plans: list[dict[str, Any]]) -> dict[str, Any]:
    """One example report whose plan holds the candidates of every case (each case's contributor ids
    prefixed with its number, so they stay distinct)."""
    plan = dict(plans[0])
    plan["candidates"] = [{**c, "contributor": f"{i}-{c['contributor']}"} for i, p in enumerate(plans) for c in p["candidates"]]
    plan["adaptations"] = [{**a, "contributor": f"{i}-{a['contributor']}"} for i, p in enumerate(plans) for a in p["adaptations"]]
    return {"name": "all", "preview": plan, "preview_error": None, "summaries": []}


def plain_tui(example: dict[str, Any]) -> str:
    from rich.console import Console

    console = Console(width=1000, record=True, color_system=None)
    console.print(render_planning(example, None))
    return console.export_text()


def web_planning(example: dict[str, Any]) -> str:
    from types import SimpleNamespace

    view = SimpleNamespace(planning=planning_view(example, None), prompt=SimpleNamespace(id="p"))
    return make_templates().env.get_template("_panel_planning.html").render(view=view)


def test_the_web_page_and_the_tui_show_every_rung_and_reason_with_the_vocabularys_label(
    plans: list[dict[str, Any]], relabelled: dict[str, str]
) -> None:
    example = example_of(plans)
    page = html.unescape(web_planning(example))
    tui = plain_tui(example)
    for c in example["preview"]["candidates"]:
        rung, reason = c["representation"], c["rejection_reason"]
        tui_row = next(
            line for line in tui.splitlines()
            if line.split()[:1] == [c["contributor"]] and relabelled[rung] in line
            and (c["variant"] is None or c["variant"] in line)
        )
        if c["selected"]:
            assert "selected" in tui_row
        else:
            assert f"rejected: {relabelled[reason]}" in tui_row
        block = page.split(f'data-contributor="{c["contributor"]}"', 1)[1].split("</table>", 1)[0]
        row = next(r for r in block.split("<tr")[1:] if f'data-rung="{rung}"' in r and (c["variant"] is None or c["variant"] in r))
        assert f">{relabelled[rung]}" in row and f'title="what {rung} means"' in row
        if not c["selected"]:
            assert f">{relabelled[reason]}</span>" in row
    for a in example["preview"]["adaptations"]:
        assert f"{a['contributor']} → {relabelled[a['representation']]}" in tui
        assert f">{relabelled[a['representation']]}</span>" in page


def test_the_web_page_lists_each_contributors_rungs_in_the_vocabulary_order_whatever_order_they_come_in(plans: list[dict[str, Any]]) -> None:
    example = example_of(plans)
    example["preview"]["candidates"] = list(reversed(example["preview"]["candidates"]))
    for contributor in planning_view(example, None).contributors:
        names = [r.representation for r in contributor.rows]
        assert names == sorted(names, key=rungs.rung_rank)


# --- the limits panel -------------------------------------------------------------------------


def test_limit_rows_follow_the_one_list_and_write_missing_values_as_a_dash(plans: list[dict[str, Any]]) -> None:
    rows = limit_rows(plans[0], {"profile": "pyproject.toml:13"})
    assert [(r.key, r.label, r.hint) for r in rows] == [(key, label, hint) for key, label, _write, hint in LIMITS]
    by_key = {r.key: r.value for r in rows}
    assert by_key["context_window"] == "1,000,000" and by_key["max_input_tokens"] == f"{plans[0]['max_input_tokens']:,}"
    assert by_key["capacity_source"] == "pyproject.toml:13"  # the pyproject line a profile came from, when one did
    empty = limit_rows({}, None)
    assert [r.value for r in empty] == [MISSING] * len(LIMITS)
    assert all("None" not in r.value for r in limit_rows({**plans[0], "tier": None}, None))


def ladder_prompt() -> Any:
    catalog = droppable(prefer(
        context("catalog", priority=70, tools=[LOOKUP], system="## Catalog\n" + "Pro 2 TB keeps 30 days of versions. " * 150),
        context("catalog-index", system="## Catalog index\nFree, Pro, Business."),
    ))
    log = offloadable(summarizable(context("sync-log", priority=50, system=big("Log", 120))), above_tokens=100)
    return prompt("ladders", system="You answer.", use=[catalog, log], prompt="Why did it stop?", examples={"one": {}}, model="gpt-4o")


@pytest.fixture
def web_session(tmp_path: Path) -> WebSession:
    return WebSession(tmp_path, [ladder_prompt()])


@pytest.fixture
async def client(web_session: WebSession) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(web_session)), base_url="http://127.0.0.1:4400") as c:
        yield c


def web_limit_rows(page: str) -> list[tuple[str, str]]:
    panel = page.split('id="plan-limits"', 1)[1].split("</dl>", 1)[0]
    pairs = re.findall(r"<dt[^>]*>(.*?)</dt><dd[^>]*>(.*?)</dd>", panel)
    return [(html.unescape(label), html.unescape(value)) for label, value in pairs]


def tui_limit_rows(lines: list[str]) -> list[tuple[str, str]]:
    start = next(i for i, line in enumerate(lines) if line.strip() == "Limits") + 1
    out = []
    for line in lines[start : start + len(LIMITS)]:
        label, value = [cell.strip() for cell in re.split(r"\s{2,}", line.strip())][:2]
        out.append((label, value))
    return out


async def test_the_web_panel_and_the_tui_panel_show_the_same_limit_rows_for_the_same_report(
    client: httpx.AsyncClient, web_session: WebSession
) -> None:
    report = web_session.report
    assert report is not None
    prompt_report = next(p for p in report["prompts"] if p["id"] == "ladders")
    expected = [(r.label, r.value) for r in limit_rows(prompt_report["examples"][0]["preview"], prompt_report["plan_model"])]
    assert [value for _label, value in expected].count(MISSING) == 0  # a real plan fills every row

    page = await client.get("/prompts/ladders")
    assert page.status_code == 200
    assert web_limit_rows(page.text) == expected

    tui_session = TuiSession(prompts=[])
    tui_session._report = report  # the very report the web page rendered
    app = make_tui(tui_session)
    async with app.run_test(size=(160, 70)) as pilot:
        app.query_one(PromptTree).select_prompt("ladders")
        await settle(pilot)
        app.query_one("#tabs").active = "tab-planning"
        await settle(pilot)
        assert tui_limit_rows(detail_lines(app)) == expected


def test_the_tui_has_one_colour_for_every_rung_of_the_vocabulary() -> None:
    from crux_devtools.tui.report import RUNG_STYLE

    assert list(RUNG_STYLE) == list(rungs.RUNGS)
    assert len(set(RUNG_STYLE.values())) == len(RUNG_STYLE)  # each rung its own colour
