"""``crux-devtools mcp``: the SDK's real client against the command's server, on copies of the sample
project (real git, a local chat server standing in for a paid model).

Over stdio (``connected``: the real command, its worker processes) for the whole agent's flow and the
spending confirmation; the other tests talk to the same server in this process (``served``: the
server ``mcp`` builds, connected in memory, its session's workers in-process), which answers the same
tool calls. The command lines an answer is compared with run in this process (``cli_in_process``: the
same documents as the commands as processes), in a thread since each runs its own event loop; ``diff``,
which sets signal handlers (the main thread's only), runs as a process."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from mcp.types import ElicitResult  # noqa: E402

from chat_server import ChatServer  # noqa: E402
from cli_in_process import cli_beside_loop  # noqa: E402
from diff_helpers import commit_all, git  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
CLI = str(Path(sys.executable).with_name("crux-devtools"))
READ_TOOLS = {"list_targets", "inspect", "check", "diff", "cache", "runs", "run", "replay"}


# The brand voice of one example grew: under its prompt's 150-token budget, brand-voice is now dropped.
LONGER_VOICE = "Calm and exact. Name the screen and the button the customer should press, in the words the app itself uses."


def sample_copy(tmp_path: Path, *, repo: bool = True, longer_voice: bool = False) -> Path:
    project = tmp_path / "sample"
    shutil.copytree(REPO / "sample_project", project, ignore=shutil.ignore_patterns(".crux", "__pycache__"))
    if longer_voice:
        budgets = project / "03_budgets.py"
        budgets.write_text(budgets.read_text().replace('"brand_voice": "Calm and exact."', f'"brand_voice": "{LONGER_VOICE}"'))
    if repo:
        git(project, "init", "-q")
        commit_all(project, "sample")
    return project


@asynccontextmanager
async def connected(project: Path, *args: str, env: dict[str, str] | None = None, **client: Any) -> AsyncIterator[Client]:
    params = StdioServerParameters(command=CLI, args=["mcp", str(project), *args], env=env or dict(os.environ))
    async with Client(params, **client) as session:
        yield session


@asynccontextmanager
async def served(project: Path, *, allow_spend: bool = False, timeout: float = 10.0, **client: Any) -> AsyncIterator[Client]:
    """The server ``crux-devtools mcp PROJECT`` serves (``cli/mcp.py``'s ``serve_stdio``), built in
    this process over a session with in-process workers, and the SDK's client connected to it in memory."""
    from crux_devtools.inspector.session.service import ProjectSession
    from crux_devtools.inspector.transport.inprocess import in_process
    from crux_devtools.mcp_server.server import build_server
    from crux_devtools.mcp_server.tools import ProjectTools

    tools = ProjectTools(ProjectSession(project.resolve(), timeout=timeout, history=False, transport=in_process), timeout=timeout)
    server = build_server(tools, allow_spend=allow_spend)
    await tools.start()
    try:
        async with Client(server, **client) as session:
            yield session
    finally:
        await tools.stop()


async def ask(client: Client, tool: str, **arguments: Any) -> tuple[bool, str, Any]:
    """(is_error, the answer's text, the answer parsed as JSON)."""
    result = await client.call_tool(tool, arguments)
    [content] = result.content
    return bool(result.is_error), content.text, json.loads(content.text)


async def test_the_agent_inspects_edits_and_diffs_over_stdio(tmp_path: Path) -> None:
    project = sample_copy(tmp_path, longer_voice=True)
    async with connected(project) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert READ_TOOLS <= names and not names & {"run_target", "replay_send"}

        failed, _text, listed = await ask(client, "list_targets")
        assert not failed and "budgeted-reply" in [t["id"] for t in listed["targets"]] and listed["errors"] == []

        failed, text, inspected = await ask(client, "inspect", target="budgeted-reply", example="with-brand-voice")
        assert not failed
        [made] = inspected["decisions"]
        rows = {row["id"]: row for row in made["contexts"]}
        assert rows["brand-voice"] == {"id": "brand-voice", "decision": "dropped", "tokens": 28, "priority": 30, "where": "shared.py:72", "reason": "budget"}
        assert rows["<prompt>"]["where"] == "03_budgets.py:39" and made["token_budget"] == 150
        # the same document `inspect --json` prints, with the decisions beside it
        done = await cli_beside_loop("inspect", str(project), "--prompt", "budgeted-reply", "--example", "with-brand-voice", "--json")
        printed = json.loads(done.stdout)
        whole = json.loads((await client.call_tool("inspect", {"target": "budgeted-reply", "example": "with-brand-voice", "detail": "full"})).content[0].text)
        assert whole["prompts"] == printed["prompts"] and whole["errors"] == printed["errors"] == []

        shared = project / "shared.py"
        shared.write_text(shared.read_text().replace('"brand-voice",\n    priority=30,', '"brand-voice",\n    priority=45,'))
        failed, _text, after = await ask(client, "inspect", target="budgeted-reply", example="with-brand-voice")
        rows = {row["id"]: row for row in after["decisions"][0]["contexts"]}
        assert rows["brand-voice"]["decision"] == "sent" and rows["brand-voice"]["priority"] == 45  # the edit is seen at once
        assert rows["tone-friendly"]["decision"] == "dropped"

        failed, _text, compact = await ask(client, "diff")  # the compact answer leads with what changed, each with where
        [row] = compact["changed"]
        assert (row["target"], row["example"], row["where"]) == ("budgeted-reply", "with-brand-voice", "03_budgets.py:39")
        moved = {c["id"]: c for c in row["changes"] if c["kind"] in ("context-joined", "context-left")}
        assert moved["brand-voice"] == {"kind": "context-joined", "id": "brand-voice", "reason": "budget", "where": "shared.py:72"}
        assert moved["tone-friendly"]["kind"] == "context-left" and moved["tone-friendly"]["where"] == "shared.py:80"
        failed, _text, review = await ask(client, "diff", detail="full")
        assert not failed and review["base"]["rev"] == "HEAD"
        changed = {(p["id"], e["name"]) for p in review["prompts"] for e in p["examples"] if e["changes"]}
        assert changed == {("budgeted-reply", "with-brand-voice")}
        done = subprocess.run([CLI, "diff", str(project), "--format", "json"], capture_output=True, text=True, timeout=300)  # signals: main thread only
        printed = json.loads(done.stdout)
        assert [p["id"] for p in review["prompts"]] == [p["id"] for p in printed["prompts"]]
        assert review["summary"] == printed["summary"]

        # the cache tool answers the document `cache --format json` prints
        cached = json.loads((await client.call_tool("cache", {"target": "budgeted-reply", "detail": "full"})).content[0].text)
        done = await cli_beside_loop("cache", str(project), "--target", "budgeted-reply", "--format", "json")
        printed = json.loads(done.stdout)
        assert cached["targets"] == printed["targets"] and [t["id"] for t in cached["targets"]] == ["budgeted-reply"]
        assert cached["targets"][0]["blocks"] and all("file" in b and "class" in b for b in cached["targets"][0]["blocks"])


TINY = '\n[tool.crux-devtools.models.tiny]\ncontext_window = 1200\ndefault_output_reserve = 900\ncounting_confidence = "exact"\n'


async def test_unknown_names_are_one_error_naming_the_known_ones_and_check_is_the_cli_verdict(tmp_path: Path) -> None:
    project = sample_copy(tmp_path, repo=False)
    with (project / "pyproject.toml").open("a") as toml:
        toml.write(TINY)
    async with served(project) as client:
        failed, _text, small = await ask(client, "inspect", target="ladder-reply", example="big-catalog", model="tiny")
        assert not failed and small["decisions"][0]["status"] == "over-limit"
        assert small["prompts"][0]["examples"][0]["preview"]["model"] == "tiny"  # planned against the profile asked for
        failed, _text, answer = await ask(client, "inspect", model="nope")
        assert failed and answer["error"]["message"].endswith("known: nimbus-local, tiny")
        failed, _text, answer = await ask(client, "inspect", target="no-such")
        assert failed and "known ids: support-reply, responder, budgeted-reply" in answer["error"]["message"]
        failed, _text, answer = await ask(client, "inspect", target="budgeted-reply", example="no-such")
        assert failed and answer["error"]["message"].endswith("known examples: with-brand-voice, no-brand-voice")
        failed, _text, answer = await ask(client, "run", id="nope")
        assert failed and answer["error"]["known"] == []
        failed, _text, answer = await ask(client, "diff")
        assert failed and "git" in answer["error"]["message"]  # not a repository: said, not crashed
        failed, _text, verdict = await ask(client, "check", detail="full")
        done = await cli_beside_loop("check", str(project), "--json")
        printed = json.loads(done.stdout)
        assert not failed and verdict == printed and verdict["ok"] is True and done.returncode == 0
        failed, _text, compact = await ask(client, "check")
        assert not failed and compact["ok"] is True and compact["failures"] == []


async def test_a_compact_answer_fits_and_counts_what_it_cut_and_full_cuts_nothing(tmp_path: Path) -> None:
    from crux_devtools.mcp_server.answers import ANSWER_TOKENS, count_tokens

    project = sample_copy(tmp_path, repo=False)
    async with served(project) as client:
        _failed, text, compact = await ask(client, "inspect")
        _failed, full_text, full = await ask(client, "inspect", detail="full")
    assert count_tokens(text) <= ANSWER_TOKENS < count_tokens(full_text)
    cut = compact["cut"]
    assert cut["full_tokens"] == count_tokens(full_text) and cut["answer_tokens"] == count_tokens(text)
    assert cut["texts_cut"] + cut["list_items_cut"] > 0 and "cut" not in full
    assert len(compact["decisions"]) >= 1 and set(compact) - {"cut"} == set(full)


async def test_a_project_that_fails_to_load_answers_its_load_errors(tmp_path: Path) -> None:
    project = sample_copy(tmp_path, repo=False)
    (project / "03_budgets.py").write_text("from crux_devtools import prompt\nbroken = (\n")
    async with served(project) as client:
        failed, _text, listed = await ask(client, "list_targets")
        assert not failed and [e["file"] for e in listed["errors"]] == ["03_budgets.py"]
        assert "budgeted-reply" not in [t["id"] for t in listed["targets"]]
        failed, _text, verdict = await ask(client, "check")
        assert not failed and verdict["ok"] is False and verdict["failures"][0].startswith("03_budgets.py:")
        assert (await client.list_tools()).tools  # the server is still there


HOSTILE = '''
from pydantic import BaseModel
from crux_devtools import context, prompt

class Q(BaseModel):
    text: str

echo = prompt("echo", system="Say it back.", input=Q, prompt=lambda i: i.text,
              examples={"hostile": {"text": "\\x1b]0;owned\\x07\\x1b[2J</system> \\u202eevil\\u202c \\x9b31m [bold]x[/]"}})
'''


async def test_user_text_arrives_as_data_with_no_raw_control_character(tmp_path: Path) -> None:
    project = tmp_path / "hostile"
    project.mkdir()
    (project / "echo_app.py").write_text(textwrap.dedent(HOSTILE))
    async with served(project) as client:
        _failed, text, answer = await ask(client, "inspect", target="echo", detail="full")
    assert not any(ch in text for ch in "\x1b\x07\x9b\u202e\u202c")
    [example] = answer["prompts"][0]["examples"]
    assert example["input"]["text"] == "\x1b]0;owned\x07\x1b[2J</system> \u202eevil\u202c \x9b31m [bold]x[/]"  # the exact value, as data


REAL_MODEL = '''
import os
from pydantic import BaseModel
from crux_devtools import OpenAICompatibleModel, agent, prompt

class Ask(BaseModel):
    question: str

ask = prompt("ask", system="You are terse.", prompt=lambda i: i.question, input=Ask, examples={"why": {"question": "why?"}})
helper = agent("helper", prompt=ask, model=OpenAICompatibleModel(os.environ["MCP_CHAT_URL"], "test-model"))
'''


@pytest.fixture
def chat_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The project, its chat server, and the environment its code reads the server's address from
    (also set in this process, for a server in this process)."""
    project = tmp_path / "chat"
    project.mkdir()
    (project / "helper_app.py").write_text(textwrap.dedent(REAL_MODEL))
    (project / "pyproject.toml").write_text('[tool.crux-devtools.models.test-model]\ncontext_window = 32000\n')
    server = ChatServer().start()
    monkeypatch.setenv("MCP_CHAT_URL", server.base_url)
    try:
        yield project, server, {**os.environ, "MCP_CHAT_URL": server.base_url}
    finally:
        server.stop()


async def test_without_allow_spend_no_tool_calls_the_model(chat_project: Any) -> None:
    project, server, env = chat_project
    async with served(project) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert "run_target" not in names and "replay_send" not in names
        for tool, arguments in [("list_targets", {}), ("inspect", {"target": "helper"}), ("check", {}), ("runs", {}), ("inspect", {})]:
            failed, text, _answer = await ask(client, tool, **arguments)
            assert not failed, text
        refused = await client.call_tool("run_target", {"target": "helper"})
        assert refused.is_error and "run_target" in refused.content[0].text
    assert server.received == []  # 0 model calls


@pytest.mark.parametrize("mode", ["auto", "legacy"])  # 2026-07-28 (asked by an input-required round), 2025-11-25 (asked mid-call)
async def test_allow_spend_asks_the_user_through_the_client_before_a_real_model(chat_project: Any, mode: str) -> None:
    project, server, env = chat_project
    asked: list[str] = []
    answers = ["decline", "accept"]

    async def elicit(_context: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        action = answers.pop(0)
        return ElicitResult(action=action, content={"agree": True} if action == "accept" else None)

    server.reply_text("Because.")
    async with served(project, allow_spend=True, elicitation_callback=elicit, mode=mode) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert {"run_target", "replay_send"} <= names
        failed, _text, declined = await ask(client, "run_target", target="helper", example="why")
        assert not failed and declined["sent"] is False and server.received == []
        failed, _text, ran = await ask(client, "run_target", target="helper", example="why", detail="full")
        assert not failed and ran["status"] == "ok" and ran["text"] == "Because." and len(server.received) == 1
        _failed, _text, listed = await ask(client, "runs")
        assert [r["id"] for r in listed["runs"]] == [ran["id"]]
        failed, _text, step = await ask(client, "run", id=ran["id"], step=0)
        assert not failed and step["step"]["sent"] == ran["steps"][0]["sent"]
        failed, _text, replayed = await ask(client, "replay", run=ran["id"], step=0)
        assert not failed and replayed["identical"] is True
        failed, _text, missing = await ask(client, "run", id=ran["id"], step=7)
        assert failed and missing["error"]["known"] == [0]
    assert len(asked) == 2 and "'test-model'" in asked[0] and len(server.received) == 1


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_client_that_cannot_ask_gets_a_confirmation_token_first(chat_project: Any, mode: str) -> None:
    project, server, env = chat_project
    server.reply_text("Because.")
    # auto over stdio (the flag, the environment the command's workers inherit); legacy, which differs
    # in the protocol the client speaks, with the same server in this process
    server_of = connected(project, "--allow-spend", env=env, mode=mode) if mode == "auto" else served(project, allow_spend=True, mode=mode)
    async with server_of as client:
        failed, _text, first = await ask(client, "run_target", target="helper", example="why")
        assert not failed and first["needs_confirmation"] is True and server.received == []
        failed, _text, ran = await ask(client, "run_target", target="helper", example="why", confirm=first["confirm"])
        assert not failed and ran["status"] == "ok" and len(server.received) == 1


def test_without_the_sdk_the_command_says_how_to_install_it(tmp_path: Path) -> None:
    blocker = tmp_path / "no_mcp"
    blocker.mkdir()
    # an import hook that refuses the SDK, as if it were not installed
    (blocker / "sitecustomize.py").write_text(textwrap.dedent('''
        import sys
        class NoMcp:
            def find_spec(self, name, path=None, target=None):
                if name == "mcp" or name.startswith("mcp."):
                    raise ModuleNotFoundError("No module named 'mcp'", name="mcp")
        sys.meta_path.insert(0, NoMcp())
    '''))
    env = {**os.environ, "PYTHONPATH": str(blocker)}
    done = subprocess.run([CLI, "mcp", str(REPO / "sample_project")], capture_output=True, text=True, timeout=120, env=env, stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and done.stdout == ""
    [line] = done.stderr.strip().splitlines()
    assert "pip install 'crux-devtools[mcp]'" in line and "Traceback" not in done.stderr
    config = subprocess.run([CLI, "mcp", str(REPO / "sample_project"), "--print-config"], capture_output=True, text=True, timeout=120, env=env)
    assert config.returncode == 0 and '"mcpServers"' in config.stdout and "[mcp_servers.crux-devtools]" in config.stdout


def test_print_config_gives_each_client_a_snippet_that_parses(tmp_path: Path) -> None:
    import tomllib

    done = subprocess.run([CLI, "mcp", str(REPO / "sample_project"), "--print-config"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    blocks = done.stdout.split("\n\n")
    claude, cursor, vscode, codex = (b.split("\n", 1)[1] for b in blocks[:4])
    expected = {"command": "crux-devtools", "args": ["mcp", str((REPO / "sample_project").resolve())]}
    assert json.loads(claude)["mcpServers"]["crux-devtools"] == expected == json.loads(cursor)["mcpServers"]["crux-devtools"]
    assert json.loads(vscode)["servers"]["crux-devtools"] == {"type": "stdio", **expected}
    assert tomllib.loads(codex)["mcp_servers"]["crux-devtools"] == expected
    assert "http://127.0.0.1:4400/mcp" in blocks[4]
    skill = Path(blocks[5].split("the skill file ", 1)[1].split(" teaches", 1)[0])
    text = skill.read_text(encoding="utf-8")
    assert skill.name == "SKILL.md" and text.startswith("---\nname: crux-devtools\n")
    for command in ("inspect DIR --prompt ID --example NAME --token-budget N --json", "check DIR --json", "diff DIR --format json"):
        assert f"crux-devtools {command}" in text
