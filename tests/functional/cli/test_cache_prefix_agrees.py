"""One request with a tool: ``expect().cacheable_prefix``, ``crux-devtools cache`` and ``diff``'s
``cache_prefix`` count its cacheable prefix the same way, the tools at the planner's count (the
figure ``cache = "auto"`` places its breakpoints by), as the real commands on a real git repository,
in this process with in-process workers (``cli_in_process``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from cli_in_process import cli
from diff_helpers import commit_all, git

APP = '''\
from pydantic import BaseModel

from crux_devtools import context, example, expect, prompt, tool


class Order(BaseModel):
    order_id: str


lookup = tool("lookup_order", description="Look up an order by its id.", parameters=Order, execute=lambda a: {})
rules = context("rules", system="## Rules\\n- Be kind.\\n- Quote EUR.")
USE = [rules]
reply = prompt("reply", system="You are Ari.", use=USE, tools=[lookup], prompt="Where is my order?",
               examples={"one": example({}, expect=expect().cacheable_prefix(min=100000))})
'''


def run(*args: str) -> str:
    done = cli(*args, "--timeout", "30")
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return done.stdout


def test_expect_cache_and_diff_count_one_cacheable_prefix(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    (root / "app.py").write_text(APP)
    (root / "pyproject.toml").write_text("[tool.crux-devtools]\n")
    commit_all(root, "base")

    checked = json.loads(run("check", str(root), "--json"))
    [result] = checked["expectations"]
    held = re.fullmatch(r"cacheable prefix (\d+) tokens", result["held"])
    assert held is not None, result
    expected = int(held.group(1))

    advice = json.loads(run("cache", str(root), "--format", "json"))
    [target] = advice["targets"]
    tools = next(b for b in target["blocks"] if b["id"] == "tools")

    # head adds a context after the static ones: base's whole system text stays the shared prefix
    (root / "app.py").write_text(APP.replace("USE = [rules]", 'USE = [rules, context("late", system="Zebra notes.")]'))
    reviewed = json.loads(run("diff", str(root), "--format", "json"))
    [example] = reviewed["prompts"][0]["examples"]
    prefix = example["cache_prefix"]

    planned_tools = tools["tokens"]
    assert planned_tools == target["breakpoints"][0]["tokens"]  # the placement's count of the tools
    assert expected == target["prefix_tokens"] == prefix["common_tokens"] > planned_tools
    assert prefix["broken_by"] == "late"
