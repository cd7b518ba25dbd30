"""``crux-devtools replay --send``: the replayed request sent to the run's model, recorded as a child run.

The command runs in this process with an in-process worker (``cli_in_process``), and as a process
for the scripted send."""

from __future__ import annotations

import atexit
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from chat_server import ChatServer
from cli_in_process import cli
from recorded_sample import record_sample
from crux_devtools.core.record.runstore import RunStore, child_runs

CLI = str(Path(sys.executable).with_name("crux-devtools"))


def replay(project: Path, *args: str, input: str | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``crux-devtools replay PROJECT ARGS`` in this process (``env``: added to the environment meanwhile)."""
    return cli("replay", str(project), *args, input=input, env=env)


def replay_process(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CLI, "replay", str(project), *args], capture_output=True, text=True, timeout=300)


def test_send_to_the_scripted_model_records_a_child_run(tmp_path: Path) -> None:
    project = record_sample(tmp_path)
    parent = str(RunStore.for_project(project).list()[-1]["id"])
    sent = replay_process(project, "--run", parent, "--step", "1", "--max", "2000", "--send", "--json")
    assert sent.returncode == 0, sent.stderr
    document = json.loads(sent.stdout)
    child_id = document["sent"]["run"]
    store = RunStore.for_project(project)
    child = store.get(child_id)
    assert child is not None and child["parent"] == parent and child["fork_step"] == 1 and child["status"] == "ok"
    assert child["steps"][0]["sent"] == document["replayed"]["sent"]  # what went is the replayed request
    assert child["steps"][0]["request"]["input_tokens"] == document["replayed"]["input_tokens"] < document["recorded"]["input_tokens"]
    assert [c["id"] for c in child_runs(store, parent)] == [child_id]


PROJECT = '''
import os
from pydantic import BaseModel
from crux_devtools import OpenAICompatibleModel, agent, context, prompt, tool

class Ask(BaseModel):
    question: str

class Key(BaseModel):
    key: str

lookup = tool("lookup", description="Look a key up.", parameters=Key, execute=lambda k: {"found": k.key.upper()})
rules = context("rules", system="Answer in one sentence.")
ask = prompt("ask", system="You are terse.", prompt=lambda i: i.question, input=Ask, use=[rules], tools=[lookup])
helper = agent("helper", prompt=ask, model=OpenAICompatibleModel(os.environ["REPLAY_CHAT_URL"], "test-model"))
'''
RECORD = '''
import sys
sys.path.insert(0, sys.argv[1])
from crux_devtools import generate, record_runs
import helper_app
with record_runs(sys.argv[1]):
    print(generate(helper_app.helper, input={"question": "why?"}).text)
'''


@functools.cache
def chat_recording() -> Path:
    """The chat project after a real process recorded one run of it against a chat server: recorded
    once per test process (a process and about a second of CPU), copied by each test, and removed
    when the process ends."""
    folder = Path(tempfile.mkdtemp(prefix="crux-recorded-chat-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    project = folder / "chat"
    project.mkdir()
    (project / "helper_app.py").write_text(textwrap.dedent(PROJECT))
    (project / "pyproject.toml").write_text('[tool.crux-devtools.models.test-model]\ncontext_window = 32000\ninput_price = 2.5\noutput_price = 10.0\n')
    server = ChatServer().start()
    try:
        server.reply_text("Because.")
        env = {**os.environ, "REPLAY_CHAT_URL": server.base_url}
        done = subprocess.run([sys.executable, "-c", RECORD, str(project)], capture_output=True, text=True, timeout=120, env=env)
        assert done.returncode == 0, done.stderr
    finally:
        server.stop()
    return project


@pytest.fixture
def chat_project(tmp_path: Path) -> tuple[Path, ChatServer, dict[str, str], str]:
    """The test's own copy of the recorded chat project, and a chat server of its own for what it sends."""
    project = tmp_path / "chat"
    shutil.copytree(chat_recording(), project, ignore=shutil.ignore_patterns("__pycache__"))
    server = ChatServer().start()
    env = {**os.environ, "REPLAY_CHAT_URL": server.base_url}
    run_id = str(RunStore.for_project(project).list()[0]["id"])
    yield project, server, env, run_id
    server.stop()


def test_a_real_model_asks_first_with_the_estimated_cost(chat_project: tuple[Path, ChatServer, dict[str, str], str]) -> None:
    project, server, env, run_id = chat_project
    before = len(server.received)
    refused = replay(project, "--run", run_id, "--drop", "rules", "--send", input="n\n", env=env)
    assert refused.returncode != 0
    assert "a real model" in refused.stderr and "estimated input cost $" in refused.stderr and "not sent" in refused.stderr
    assert len(server.received) == before  # nothing went over the wire
    server.reply_text("Because, briefly.")
    sent = replay(project, "--run", run_id, "--drop", "rules", "--send", "--yes", env=env)
    assert sent.returncode == 0, sent.stderr
    assert "sent: Because, briefly." in sent.stdout
    body = server.received[-1].body
    assert "Answer in one sentence." not in json.dumps(body)  # the replayed request, without the dropped context
    children = child_runs(RunStore.for_project(project), run_id)
    assert len(children) == 1 and children[0]["text"] == "Because, briefly."


def test_an_unreachable_model_is_recorded_as_an_error_run(chat_project: tuple[Path, ChatServer, dict[str, str], str]) -> None:
    project, server, env, run_id = chat_project
    server.stop()
    failed = replay(project, "--run", run_id, "--send", "--yes", env=env)
    assert failed.returncode != 0 and "Traceback" not in failed.stderr + failed.stdout
    children = child_runs(RunStore.for_project(project), run_id)
    assert len(children) == 1 and children[0]["status"] == "error" and children[0]["fork_step"] == 0
    assert children[0]["error"]["type"] and "failed" in children[0]["error"]["message"]


def test_continue_runs_the_agent_on_and_answers_tools_from_the_recording(tmp_path: Path) -> None:
    project = record_sample(tmp_path)
    parent = str(RunStore.for_project(project).list()[-1]["id"])
    forked = replay(project, "--run", parent, "--step", "1", "--max", "2000", "--continue", "--json")
    assert forked.returncode == 0, forked.stderr
    child_id = json.loads(forked.stdout)["continued"]["run"]
    child = RunStore.for_project(project).get(child_id)
    assert child is not None and child["status"] == "ok" and child["parent"] == parent and child["fork_step"] == 1
    assert [s["index"] for s in child["steps"]] == [1, 2] and child["text"]
    assert all(r.get("recorded") for r in child["steps"][0]["tool_results"])  # every call answered from the recording
    assert all(s["request"]["input_tokens"] <= 2000 for s in child["steps"])  # the override holds on every step


def test_a_tool_call_never_recorded_stops_the_fork_unless_live_tools(chat_project: tuple[Path, ChatServer, dict[str, str], str]) -> None:
    project, server, env, run_id = chat_project
    server.reply_tool_calls([{"id": "call_9", "type": "function", "function": {"name": "lookup", "arguments": json.dumps({"key": "abc"})}}])
    stopped = replay(project, "--run", run_id, "--continue", "--yes", env=env)
    assert stopped.returncode == 1 and "no recorded result for lookup" in stopped.stdout and "--live-tools" in stopped.stdout
    server.reply_tool_calls([{"id": "call_9", "type": "function", "function": {"name": "lookup", "arguments": json.dumps({"key": "abc"})}}])
    server.reply_text("It is ABC.")
    live = replay(project, "--run", run_id, "--continue", "--live-tools", "--yes", env=env)
    assert live.returncode == 0, live.stdout + live.stderr
    assert "continued: It is ABC." in live.stdout
    assert '"found": "ABC"' in json.dumps(server.received[-1].body) or "ABC" in json.dumps(server.received[-1].body)  # the live result went back
    children = child_runs(RunStore.for_project(project), run_id)
    assert [c["status"] for c in children] == ["error", "ok"]


def test_continue_asks_first_priced_at_the_first_request_it_sends(chat_project: tuple[Path, ChatServer, dict[str, str], str]) -> None:
    from crux_devtools.inspector.features.runs.costs import format_usd

    project, server, env, run_id = chat_project
    before = len(server.received)
    refused = replay(project, "--run", run_id, "--continue", input="n\n", env=env)
    assert refused.returncode != 0 and len(server.received) == before  # nothing went over the wire
    found = re.search(r"estimated input cost (\S+) \(([\d,]+) input tokens, output extra\)", refused.stderr)
    assert found is not None, refused.stderr
    tokens = int(found.group(2).replace(",", ""))
    assert tokens > 0 and found.group(1) == format_usd(tokens * 2.5 / 1_000_000)  # input_price 2.5 per million
    server.reply_text("Because, again.")
    sent = replay(project, "--run", run_id, "--continue", "--yes", "--json", env=env)
    assert sent.returncode == 0, sent.stderr
    child = RunStore.for_project(project).get(json.loads(sent.stdout)["continued"]["run"])
    assert child is not None and child["steps"][0]["request"]["input_tokens"] == tokens  # the request priced is the one sent
