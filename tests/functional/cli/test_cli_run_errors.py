"""``crux-devtools run`` says where in the user's code a run failed, up front, and never calls a
request "sent" that could not reach the model. The real command, in this process with an in-process
worker (``cli_in_process``), which answers as a worker process does; a real closed port."""

from __future__ import annotations

import socket
import subprocess
import textwrap
from pathlib import Path

from cli_in_process import cli


RAISES = '''
from pydantic import BaseModel
from crux_devtools import ScriptedModel, ToolCall, agent, prompt, tool


class Sku(BaseModel):
    sku: str


def lookup(p):
    raise RuntimeError("the catalog service is down")


ask = prompt("ask", system="You help.", prompt="Is A1 in stock?", tools=[tool("lookup", description="Look a SKU up.", parameters=Sku, execute=lookup)],
             examples={"default": {}})
bot = agent("bot", prompt=ask, model=ScriptedModel([[ToolCall(id="c1", name="lookup", arguments={"sku": "A1"})], "done"]))
'''

DOWN = '''
from crux_devtools import OpenAICompatibleModel, agent, prompt

ask = prompt("ask", system="You help.", prompt="Is A1 in stock?", examples={"default": {}})
bot = agent("bot", prompt=ask, model=OpenAICompatibleModel("http://127.0.0.1:PORT/v1", "test-model"))
'''


def run(project: Path) -> subprocess.CompletedProcess[str]:
    return cli("run", str(project), "--prompt", "bot")


def test_a_tool_that_raises_is_reported_at_the_users_line_before_the_traceback(tmp_path: Path) -> None:
    (tmp_path / "shop.py").write_text(textwrap.dedent(RAISES))
    done = run(tmp_path)
    assert done.returncode == 1
    line = next(n for n, text in enumerate(textwrap.dedent(RAISES).splitlines(), 1) if 'raise RuntimeError("the catalog service is down")' in text)
    first = done.stderr.splitlines()[0]
    assert first.startswith(f"shop.py:{line}: "), done.stderr
    assert "the catalog service is down" in first


def test_a_model_that_cannot_be_reached_is_not_said_to_have_been_sent_anything(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nothing listens on: the connection is refused
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    (tmp_path / "shop.py").write_text(DOWN.replace("PORT", str(port)))
    done = run(tmp_path)
    assert done.returncode == 1, done.stderr
    summary = done.stderr.strip().splitlines()[-1]
    assert "nothing sent: " in summary and "input tokens planned, not sent: the model could not be reached" in summary, summary
    assert " input tokens sent" not in summary.replace("not sent", "")


def test_two_contexts_with_one_id_are_reported_with_where_each_is_defined(tmp_path: Path) -> None:
    (tmp_path / "rules.py").write_text("from crux_devtools import context\n\nkind = context('rules', system='Be kind.')\n")
    (tmp_path / "shop.py").write_text(
        "from crux_devtools import context, prompt\nfrom rules import kind\n\n"
        "brief = context('rules', system='Be brief.')\n"
        "ask = prompt('ask', system='You help.', use=[kind, brief], examples={'default': {}})\n"
    )
    (tmp_path / "pyproject.toml").write_text('[tool.crux-devtools]\nmodules = ["shop.py"]\n')
    checked = cli("check", str(tmp_path))
    assert checked.returncode == 1
    assert "two different contexts have the id 'rules' (defined at rules.py:3 and at shop.py:4)" in checked.stdout, checked.stdout
