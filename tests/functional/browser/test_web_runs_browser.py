"""Recorded runs in a real Chromium: another process records runs while ``serve`` runs, and they appear.

The project is a copy of ``sample_project/`` plus ``orders.py``, an agent whose model is a real
``OpenAICompatibleModel`` pointed at a local chat-completions server (``chat_server.py``). The
inspector is the real ``ProjectSession`` under uvicorn on 127.0.0.1. The application is a separate
Python process running a real script that turns on ``record_runs(project)`` and calls ``generate``:
its runs must show up on the open pages without a reload.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chat_server import ChatServer, wire_tool_call
from waits import WAIT
from web_conftest_helpers import LiveServer, live_server, new_page, require_browser

from crux_devtools.web.app import create_app

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="session")]
REPO = Path(__file__).resolve().parents[3]
XSS = '<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2">'

ORDERS_MODULE = '''
import os

from pydantic import BaseModel, Field

from crux_devtools import ModelCapacityProfile, OpenAICompatibleModel, agent, context, prompt, tool


class Ask(BaseModel):
    question: str = Field(description="What the customer asks")


class OrderQuery(BaseModel):
    order_id: str


def lookup(args: OrderQuery) -> dict:
    return {"order_id": args.order_id, "status": "paid", "note": os.environ.get("ORDER_NOTE", "settled")}


lookup_order = tool("lookup_order", description="Look up one order.", parameters=OrderQuery, execute=lookup)
rules = context("order-rules", system="## Order rules\\nQuote the order id exactly.", priority=100)
order_reply = prompt(
    "order-reply",
    system="You are Ari, an order desk agent.",
    input=Ask,
    use=[rules],
    tools=[lookup_order],
    prompt=lambda i: i.question,
    examples={"twice": {"question": "Was INV-1042 charged twice?"}},
)
model = OpenAICompatibleModel(
    os.environ.get("CHAT_BASE_URL", "http://127.0.0.1:9/v1"), "test-model", api_key="sk-test",
    capacity=ModelCapacityProfile(8_192, 512, "estimated"),
)
order_agent = agent("order-agent", prompt=order_reply, model=model, max_steps=3)
'''

# The application: a real script, in its own process, outside the project folder (so the
# inspector's discovery never imports it).
APP_SCRIPT = '''
import json, sys, time
project, questions, pause = sys.argv[1], json.loads(sys.argv[2]), float(sys.argv[3])
sys.path.insert(0, project)
from crux_devtools import RunError, generate, record_runs
import orders
with record_runs(project):
    for question in questions:
        try:
            result = generate(orders.order_agent, input={"question": question})
        except RunError as failed:  # recorded with its error, then raised: the partial run is its result
            result = failed.result
        print(json.dumps({"text": result.text, "steps": len(result.steps)}), flush=True)
        time.sleep(pause)
'''


async def until(page: Any, expression: str, *, arg: Any = None, timeout: float = WAIT) -> None:
    """Poll ``expression`` in the page until it is true. Playwright's ``wait_for_function`` evaluates
    its predicate with a string eval inside the page, which the page's Content-Security-Policy
    forbids; ``evaluate`` goes through the debugging protocol, which the policy does not govern."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not (await page.evaluate(expression, arg) if arg is not None else await page.evaluate(expression)):
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"not true after {timeout} s: {expression}")
        await asyncio.sleep(0.05)


@pytest.fixture(scope="module")
def chat() -> Iterator[ChatServer]:
    with ChatServer() as server:
        yield server


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("runs-browser") / "sample"
    shutil.copytree(REPO / "sample_project", root, ignore=shutil.ignore_patterns("data", "__pycache__", ".crux"))
    (root / "orders.py").write_text(ORDERS_MODULE)
    return root


@pytest.fixture(scope="module")
def server(project: Path, chat: ChatServer) -> Iterator[LiveServer]:
    require_browser()
    from crux_devtools.inspector.session.service import ProjectSession

    os.environ["CHAT_BASE_URL"] = chat.base_url  # the worker (a child) inherits it: its Run reaches the chat server
    os.environ["ORDER_NOTE"] = XSS
    try:
        with live_server(create_app(ProjectSession(project, history=False))) as srv:
            yield srv
    finally:
        os.environ.pop("CHAT_BASE_URL", None)
        os.environ.pop("ORDER_NOTE", None)


def script_answers(chat: ChatServer, runs: int, answer: str = "INV-1042 was paid once.") -> None:
    """Each run: the model asks for lookup_order, then answers."""
    for n in range(runs):
        chat.reply_tool_calls([wire_tool_call("lookup_order", json.dumps({"order_id": "INV-1042"}), id=f"call_{n}")])
        chat.reply_text(answer)


def start_app(tmp: Path, project: Path, chat: ChatServer, questions: list[str], pause: float = 0.3) -> subprocess.Popen[str]:
    script = tmp / "app_script.py"
    script.write_text(APP_SCRIPT)
    env = {**os.environ, "CHAT_BASE_URL": chat.base_url, "ORDER_NOTE": XSS}
    return subprocess.Popen([sys.executable, str(script), str(project), json.dumps(questions), str(pause)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(app: subprocess.Popen[str]) -> list[dict[str, Any]]:
    out, err = app.communicate(timeout=60)
    assert app.returncode == 0, err
    return [json.loads(line) for line in out.splitlines() if line.strip()]


async def test_runs_recorded_by_another_process_appear_on_the_open_runs_page(
    server: LiveServer, browser: Any, project: Path, chat: ChatServer, tmp_path: Path
) -> None:
    async with new_page(browser) as page:
        await page.goto(server.url + "/runs")
        await page.wait_for_selector("#live-status[data-state='live']")
        before = await page.locator("tr.run-row").count()
        await page.evaluate("window.__still_here = true")  # gone if the page reloads
        script_answers(chat, 2)
        app = start_app(tmp_path, project, chat, ["Was INV-1042 charged twice?", "Is INV-1042 paid?"])
        await until(page, f"document.querySelectorAll('tr.run-row').length >= {before + 2}", timeout=WAIT)
        assert [r["text"] for r in finish(app)] == ["INV-1042 was paid once."] * 2
        assert await page.evaluate("window.__still_here") is True
        newest = page.locator("tr.run-row").first
        text = await newest.inner_text()
        assert "order-agent" in text and "test-model" in text and "app" in text and "ok" in text
        assert "Is INV-1042 paid?" not in text  # the list shows the answer, not the input
        assert await page.locator("tr.run-row.is-new").count() >= 1
        # The chat server reported usage (1 in, 1 out per step): shown beside our own count.
        assert "2 / 2" in text.replace("\u00a0", " ")


async def test_a_recorded_step_opens_in_the_prompt_view_with_the_same_input(
    server: LiveServer, browser: Any, project: Path, chat: ChatServer, tmp_path: Path
) -> None:
    question = f"Was INV-1042 charged twice? {XSS}"
    script_answers(chat, 1)
    finish(start_app(tmp_path, project, chat, [question], pause=0))
    async with new_page(browser) as page:
        dialogs: list[str] = []
        page.on("dialog", lambda d: dialogs.append(d.message))
        await page.goto(server.url + "/runs?target=order-agent")
        await page.wait_for_selector("tr.run-row")
        await page.locator("tr.run-row a.run-link").first.click()
        await page.wait_for_selector("#step-1")
        # What was sent and what came back, as text (the payload in the input and the tool output stays inert).
        assert json.loads(await page.locator("#run-input").inner_text()) == {"question": question}
        assert json.loads(await page.locator("#step-0 .tool-output").inner_text())["note"] == XSS
        assert "Quote the order id exactly." in await page.locator("#step-0 .sent-system").inner_text()
        assert "lookup_order" in await page.locator("#step-0 .tool-schemas").inner_text()
        assert await page.evaluate("typeof window.__xss") == "undefined" and dialogs == []
        assert await page.locator("#step-0 img, #run-input script").count() == 0
        # "open in the prompt view" from step 1: the prompt page with that input as its custom input.
        await page.locator("#step-1 a.replay-link").click()
        await page.wait_for_selector("#report")
        assert "/prompts/order-agent?" in page.url
        assert json.loads(await page.input_value("#input")) == {"question": question}
        assert question in await page.locator("#sent-messages").inner_text()
        assert await page.evaluate("typeof window.__xss") == "undefined" and dialogs == []


async def test_the_prompt_pages_recent_runs_update_live(server: LiveServer, browser: Any, project: Path, chat: ChatServer, tmp_path: Path) -> None:
    async with new_page(browser) as page:
        await page.goto(server.url + "/prompts/order-agent")
        await page.wait_for_selector("#live-status[data-state='live']")
        await page.wait_for_selector("#recent-runs .recent-label")
        before = await page.locator("#recent-runs .recent-run").count()
        first_before = await page.locator("#recent-runs .recent-run").first.get_attribute("data-id") if before else None
        script_answers(chat, 1, answer="Recent and live.")
        finish(start_app(tmp_path, project, chat, ["One more question"], pause=0))
        await until(
            page, "(old) => { const a = document.querySelector('#recent-runs .recent-run'); return !!a && a.dataset.id !== old; }",
            arg=first_before or "",
        )
        assert "Recent and live." in (await page.locator("#recent-runs .recent-run").first.get_attribute("title") or "")


async def test_run_on_a_real_model_agent_asks_first_then_records_and_links_the_run(
    server: LiveServer, browser: Any, chat: ChatServer
) -> None:
    async with new_page(browser) as page:
        await page.goto(server.url + "/prompts/order-agent")
        await page.wait_for_selector("#sent-system")
        asked = len(chat.received)
        await page.click("button.run")
        await page.wait_for_selector("#run-confirm")
        assert "It costs money and runs real tools" in await page.inner_text("#run-confirm")
        assert len(chat.received) == asked  # nothing was sent to the model
        await page.click("#run-confirm-no")
        await page.wait_for_selector("#run-confirm", state="detached")
        script_answers(chat, 1, answer="Run from the inspector.")
        await page.click("button.run")
        await page.click("#run-confirm-yes")
        await page.wait_for_selector("#run-recorded")
        assert len(chat.received) == asked + 2
        await page.click("#run-recorded")
        await page.wait_for_selector("#run-stats")
        assert "inspector" in await page.inner_text(".run-head")
        assert "Run from the inspector." in await page.inner_text("#run-text")


async def test_screenshots_of_the_runs_list_and_a_run(server: LiveServer, browser: Any, project: Path, chat: ChatServer, tmp_path: Path) -> None:
    """A run of the sample agent (ladders, a summary, offloads) recorded by another process; with
    ``CRUX_UPDATE_SCREENSHOT=1`` the pages are saved to docs/."""
    script = tmp_path / "sample_app.py"
    script.write_text(
        "import sys\nsys.path.insert(0, sys.argv[1])\nimport importlib.util\n"
        "spec = importlib.util.spec_from_file_location('sample_agent', sys.argv[1] + '/05_agent.py')\n"
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
        "from crux_devtools import generate, record_runs\n"
        "with record_runs(sys.argv[1]):\n"
        "    generate(m.support_agent, input=m.agent_reply.examples['stalled-sync'])\n"
    )
    subprocess.run([sys.executable, str(script), str(project)], check=True, timeout=60, cwd=project)
    chat.reply_tool_calls([wire_tool_call("refund_order", json.dumps({"order_id": "INV-9"}))])  # a tool it was not offered
    finish(start_app(tmp_path, project, chat, ["Refund INV-9 now"], pause=0))
    async with new_page(browser, width=1360, height=900) as page:
        await page.goto(server.url + "/runs")
        await page.wait_for_selector("tr.run-row[data-id]")
        row = page.locator("tr.run-row", has_text="support-agent").first
        assert await row.count() == 1
        failed = page.locator("tr.run-row", has_text="Refund").first
        assert "error" in await failed.inner_text() or "UnknownTool" in await failed.inner_text()
        # every column, the cost included, is on screen at 1360 px: the page does not scroll sideways
        assert await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        if os.environ.get("CRUX_UPDATE_SCREENSHOT") == "1":
            await page.screenshot(path=str(REPO / "docs" / "screenshot-runs.png"))
        await row.locator("a.run-link").click()
        await page.wait_for_selector("#step-1")
        parts = page.locator("#step-1 .sent-system .part")
        rungs = {await parts.nth(i).get_attribute("data-rung") for i in range(await parts.count())}
        assert {"full", "authored", "summary"} <= rungs  # the sample agent's ladders, as sent
        if os.environ.get("CRUX_UPDATE_SCREENSHOT") == "1":
            await page.set_viewport_size({"width": 1360, "height": 1500})
            await page.screenshot(path=str(REPO / "docs" / "screenshot-run.png"))


async def test_the_filters_narrow_the_list_in_place_and_keep_it_in_the_url(server: LiveServer, browser: Any) -> None:
    async with new_page(browser) as page:
        await page.goto(server.url + "/runs")
        await page.wait_for_selector("tr.run-row")
        await page.evaluate("window.__still_here = true")
        await page.select_option("#run-status", "error")
        await until(page, "[...document.querySelectorAll('tr.run-row')].every((tr) => tr.dataset.status === 'error')")
        assert await page.locator("tr.run-row").count() >= 1
        assert "status=error" in page.url
        await page.select_option("#run-status", "")
        await page.fill("#run-q", "inspector")  # words of the answer "Run from the inspector."
        await until(
            page, "() => { const rows = document.querySelectorAll('tr.run-row'); return rows.length === 1 && rows[0].innerText.includes('Run from the inspector.'); }"
        )
        assert "q=inspector" in page.url
        assert await page.evaluate("window.__still_here") is True  # never a full reload
