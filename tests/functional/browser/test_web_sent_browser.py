"""What the page shows as sent is what a model receives: Chromium against a real server, compared
with what a ``ScriptedModel`` was sent by ``generate`` for the same example and budget.

The project is written to a temporary folder and served by uvicorn on 127.0.0.1 over the real
``ProjectSession`` (worker processes). The test process imports the same project file to run
``generate`` itself.
"""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from web_conftest_helpers import LiveServer, new_page, project_server

from crux_devtools import InputBudget, SummaryStore, agenerate

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="session")]

PROJECT = '''
from pydantic import BaseModel, Field
from crux_devtools import (InputBudget, ModelCapacityProfile, ScriptedModel, agent, context, droppable, offloadable,
                           prefer, prompt, summarizable, summarize, tool)

class Sku(BaseModel):
    sku: str = Field(description="A product SKU, e.g. NB-PRO-2TB")

class Device(BaseModel):
    device: str
    hours: int = Field(default=48, ge=1, le=168)

lookup_sku = tool("lookup_sku", description="Look up one product by SKU.", parameters=Sku, execute=lambda a: {"sku": a.sku})
fetch_history = tool("fetch_history", description="Fetch a device's sync history.", parameters=Device, execute=lambda a: "ok")
take_note = tool("take_note", description="Write a private note.", parameters=Sku, execute=lambda a: "noted")

LOG = "\\n\\n".join(f"2026-11-{d % 28 + 1:02d} 03:{d % 60:02d} laptop-7: sync stalled after the sign-in token expired; "
                   f"it resumed at 04:{d % 60:02d}. {d * 3} files waited." for d in range(90))

class Ticket(BaseModel):
    question: str

house = context("house-rules", priority=100, system="## House rules\\n- Never promise refunds.\\n  - Indented detail line.")
catalog = droppable(prefer(
    context("catalog", priority=70, tools=[lookup_sku], system="## Catalog\\n" + "Pro 2 TB: 30-day versions, EUR 10/month. " * 120),
    context("catalog-index", system="## Catalog index\\nFree 5 GB · Pro 2 TB · Business pooled."),
))
log = offloadable(summarizable(context("sync-log", priority=50, system="## Sync log\\n" + LOG), strategy=summarize.extractive(0.15)),
                  above_tokens=200)
notes = context("private-notes", priority=5, tools=[take_note], system="## Private notes\\nThe customer was rude last week.")

desk = prompt("desk", system="You are Ari, a support agent.", input=Ticket, use=[house, catalog, log], tools=[fetch_history],
              prompt=lambda i: i.question, examples={"stalled": {"question": "Why did my laptop stop syncing?"}})
desk_agent = agent("desk-agent", prompt=desk, max_tokens=512,
                   model=ScriptedModel(["Your token expired."], name="desk-model", capacity=ModelCapacityProfile(16384, 1024, "estimated")),
                   input_budget=InputBudget(optimize_at=3000, max=6000))

budgeted = prompt("budgeted", system="You answer billing questions.", input=Ticket, use=[house, notes], token_budget=25,
                  prompt=lambda i: i.question, examples={"refund": {"question": "Can I get a refund?"}})
'''


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sent") / "desk"
    root.mkdir()
    (root / "desk_project.py").write_text(textwrap.dedent(PROJECT), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def module(project: Path) -> Any:
    """The same project file, imported in the test process (the server never imports it)."""
    spec = importlib.util.spec_from_file_location("desk_project_under_test", project / "desk_project.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    yield mod
    sys.modules.pop("desk_project_under_test", None)


@pytest.fixture(scope="module")
def server(project: Path) -> Iterator[LiveServer]:
    with project_server(project) as srv:
        yield srv


async def read_sent(page: Any) -> dict[str, Any]:
    """Everything the page shows as sent, read from the DOM as a person would copy it."""
    return await page.evaluate(
        """() => {
        const text = (el) => el ? el.textContent : null;
        const parts = [...document.querySelectorAll('#sent-system .sent-part')].map(p => ({
            source: p.dataset.source, rung: p.dataset.rung, text: text(p.querySelector('.part-text')),
            handle: text(p.querySelector('.handle')), tokens: text(p.querySelector('.part-tokens'))}));
        const messages = [...document.querySelectorAll('#sent-messages .message')].map(m => ({
            role: text(m.querySelector('.tag')), content: text(m.querySelector('.message-text'))}));
        const tools = [...document.querySelectorAll('#sent-tools .tool')].map(t => ({
            name: t.dataset.tool, description: text(t.querySelector('.tool-description')),
            parameters: JSON.parse(text(t.querySelector('pre.schema'))), tokens: text(t.querySelector('.tool-tokens')).trim()}));
        return {parts, messages, tools, input_tokens: Number(text(document.querySelector('#sent-tokens')))};
    }"""
    )


def page_system(shown: dict[str, Any], handles: dict[str, str] | None = None) -> str:
    """The sent system text as the page shows it: the parts in order, joined as the planner joins blocks.

    ``handles`` swaps the page's offload handle for the run's: a handle is scoped to its run's
    namespace (the page derives one for the prompt, ``generate`` one per session), same length."""
    text = "\n\n".join(p["text"] for p in shown["parts"])
    for part in shown["parts"]:
        if part["handle"] and handles and part["source"] in handles:
            assert len(part["handle"]) == len(handles[part["source"]])
            text = text.replace(part["handle"], handles[part["source"]])
    return text


def run_handles(step: Any) -> dict[str, str]:
    return {c.contributor: c.handle for c in step.request.contributions if c.handle}


async def test_the_sent_request_on_the_page_is_what_the_model_receives_token_for_token(server: LiveServer, browser: Any, module: Any) -> None:
    async with new_page(browser, height=1400) as page:
        # 1. The extractive summary generate prepares before sending (no model), and the authored
        #    alternative: the page prepares the same summary, so it shows what a run sends.
        await page.goto(f"{server.url}/prompts/desk-agent?example=stalled&budget=2000&budget_for=request")
        await page.wait_for_selector("#sent-system")
        shown = await read_sent(page)
        rungs = {p["source"]: p["rung"] for p in shown["parts"]}
        assert rungs["catalog"] == "authored" and rungs["sync-log"] == "summary" and rungs["house-rules"] == "full"
        module.desk_agent.model.requests.clear()
        result = await agenerate(module.desk_agent, input=module.desk.examples["stalled"], input_budget=InputBudget(max=2000), summary_store=SummaryStore())
        sent = module.desk_agent.model.requests[0]
        assert [(a.contributor, a.representation) for a in result.steps[0].request.adaptations] == [("catalog", "authored"), ("sync-log", "summary")]
        assert page_system(shown) == sent.system
        assert shown["input_tokens"] == result.steps[0].request.input_tokens
        assert [{"name": t["name"], "description": t["description"], "parameters": t["parameters"]} for t in shown["tools"]] == sent.to_dict()["tools"]
        assert [(m["role"], m["content"]) for m in shown["messages"]] == [(m["role"], m["content"]) for m in sent.messages]
        assert [t["tokens"] for t in shown["tools"]] == [f"{result.steps[0].request.tool_tokens[t['name']]} tok" for t in shown["tools"]]
        planning = await page.locator("#planning").inner_text()
        assert "desk-model" in planning and "the agent's model" in planning and "None" not in planning

        # 2. Where the summary does not fit, the offload preview, as generate sends it.
        await page.goto(f"{server.url}/prompts/desk-agent?example=stalled&budget=700&budget_for=request")
        await page.wait_for_selector("#sent-system .sent-part[data-source='sync-log'][data-rung='offload']")
        shown = await read_sent(page)
        module.desk_agent.model.requests.clear()
        result = await agenerate(module.desk_agent, input=module.desk.examples["stalled"], input_budget=InputBudget(max=700), summary_store=SummaryStore())
        sent = module.desk_agent.model.requests[0]
        assert page_system(shown, run_handles(result.steps[0])) == sent.system
        assert shown["input_tokens"] == result.steps[0].request.input_tokens
        assert [t["name"] for t in shown["tools"]] == [t.name for t in sent.tools] == ["fetch_history", "lookup_sku", "read_offload"]


async def test_a_context_the_token_budget_drops_on_the_page_is_not_sent_nor_are_its_tools(server: LiveServer, browser: Any, module: Any) -> None:
    from crux_devtools import ScriptedModel

    async with new_page(browser) as page:
        await page.goto(f"{server.url}/prompts/budgeted?example=refund")
        await page.wait_for_selector("#sent-system")
        assert "private-notes" in await page.locator("#dropped").inner_text()
        assert "private-notes" in await page.locator("#not-sent").inner_text()
        shown = await read_sent(page)
    model = ScriptedModel(["A billing specialist will confirm."])
    result = await agenerate(module.budgeted, input=module.budgeted.examples["refund"], model=model)
    sent = model.requests[0]
    assert "The customer was rude" not in sent.system and "take_note" not in [t.name for t in sent.tools]
    assert [t["name"] for t in shown["tools"]] == [t.name for t in sent.tools] == []
    assert page_system(shown) == sent.system
    assert shown["input_tokens"] == result.steps[0].request.input_tokens
    assert [d.id for d in result.steps[0].request.dropped] == ["private-notes"]
