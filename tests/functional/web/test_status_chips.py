"""What a chip or figure says agrees with the details beside it, on the real web app over a real
session and worker: a tool that raised is "failed" (not "not executed"), the status line's token
figures add up to the request's input tokens, and "press Run" is only said where there is a Run
button."""

from __future__ import annotations

import html
import re
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from crux_devtools.inspector.session.service import ProjectSession
from crux_devtools.web.app import create_app
from crux_devtools.inspector.transport.inprocess import in_process

PROJECT = '''
from pydantic import BaseModel

from crux_devtools import ScriptedModel, agent, context, prompt, tool, tool_call


class Query(BaseModel):
    sku: str


def explode(args):
    raise RuntimeError("the inventory service is down")


fine = tool("fine", description="Always answers.", parameters=Query, execute=lambda a: {"sku": a.sku})
broken = tool("broken", description="Always raises.", parameters=Query, execute=explode)
helper = agent(
    "helper",
    prompt=prompt("helper-prompt", system="Help.", use=[context("tools", system="Use tools.", tools=[fine, broken])], examples={"one": {}}),
    model=ScriptedModel([[tool_call("fine", {"sku": "a"}), tool_call("broken", {"sku": "b"}), tool_call("fine", {"sku": "c"})], "done"]),
    max_steps=3,
)
tiny = prompt("tiny", system="a b", examples={"one": {}})
'''


def text_of(fragment: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[tuple[httpx.AsyncClient, ProjectSession]]:
    (tmp_path / "app.py").write_text(PROJECT, encoding="utf-8")
    async with ProjectSession(tmp_path, transport=in_process, watch=False, history=False, prewarm=False) as session:
        assert session.report is not None and not session.report["errors"], session.report
        app = create_app(session, manage_session=False)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:4400") as c:
            yield c, session


async def test_a_tool_that_raised_is_failed_with_its_error_and_the_calls_after_it_say_why_they_did_not_run(
    client: tuple[httpx.AsyncClient, ProjectSession],
) -> None:
    c, session = client
    run = await session.run("helper", example="one")
    assert run["status"] == "error" and run["recorded"], run
    page = (await c.get(f"/runs/{run['id']}")).text
    calls = [text_of(chunk) for chunk in page.split('<div class="tool-call exchange">')[1:]]
    assert len(calls) == 3
    assert "fine" in calls[0] and "result (what the application got)" in calls[0]
    assert "broken" in calls[1] and "failed" in calls[1] and "the inventory service is down" in calls[1]
    assert "not executed" not in calls[1]
    assert "not executed: an earlier call of this step failed" in calls[2]


async def test_the_status_line_figures_add_up_to_the_input_tokens_sent(client: tuple[httpx.AsyncClient, ProjectSession]) -> None:
    c, session = client
    page = (await c.get("/prompts/tiny")).text
    line = page.split('class="status-line"', 1)[1].split("</div>", 1)[0]
    sent = int(re.search(r'id="sent-tokens">(\d+)<', line).group(1))  # type: ignore[union-attr]
    system = int(re.search(r'id="sent-system-tokens">(\d+)<', line).group(1))  # type: ignore[union-attr]
    tools = int(re.search(r'id="sent-tool-tokens">(\d+)<', line).group(1))  # type: ignore[union-attr]
    assert "no messages" in text_of(line) and 'id="sent-message-tokens"' not in line
    assert system + tools == sent, text_of(line)
    assert f"{sent} input token{'s' if sent != 1 else ''} sent" in text_of(line)


async def test_press_run_is_only_said_on_a_page_with_a_run_button(client: tuple[httpx.AsyncClient, ProjectSession]) -> None:
    c, _ = client
    for target, runnable in (("helper", True), ("tiny", False)):
        page = (await c.get(f"/prompts/{target}")).text
        recent = text_of((await c.get("/runs/recent", params={"target": target})).text)
        assert ("▶ Run</button>" in page) is runnable
        assert ("press ▶ Run" in recent) is runnable, recent
        assert "none recorded yet" in recent
