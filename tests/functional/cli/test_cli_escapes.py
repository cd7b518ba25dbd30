"""``crux-devtools run`` and ``replay`` show the escape sequences of answers and tool results, never
send them to the terminal: run for real as subprocesses on a project whose model and tool answer with
a window-title sequence, a screen clear and an 8-bit CSI."""

from __future__ import annotations

import json
from pathlib import Path

from test_cli_runs import cli

from crux_devtools.core.record.runstore import RunStore

HOSTILE = '''
from pydantic import BaseModel
from crux_devtools import ModelCapacityProfile, ScriptedModel, agent, prompt, tool, tool_call


class Query(BaseModel):
    query: str


lookup = tool("lookup", description="Look up", parameters=Query, execute=lambda p: "found \\x1b]0;pwned\\x07 it\\x1b[2J")
ask = prompt("ask", system="Answer briefly.", prompt="Where?", tools=[lookup], examples={"first": {}})
hostile = agent("hostile", prompt=ask, model=ScriptedModel([[tool_call("lookup", {"query": "x"})], "Here\\x1b[2J\\x9b31m done"], capacity=ModelCapacityProfile(100_000, 0, "exact")))
'''
RAW = ("\x1b", "\x07", "\x9b")


def test_run_and_replay_show_escape_sequences_and_never_print_them(tmp_path: Path) -> None:
    (tmp_path / "agents.py").write_text(HOSTILE, encoding="utf-8")
    done = cli("run", str(tmp_path), "--prompt", "hostile")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Here\\x1b[2J\\x9b31m done\n"
    assert not any(c in done.stdout + done.stderr for c in RAW)
    with RunStore.for_project(tmp_path, create=False) as store:
        (summary,) = store.list()
        run = store.get(summary["id"])
    assert run is not None and run["text"] == "Here\x1b[2J\x9b31m done"  # the record keeps the real text
    replayed = cli("replay", str(tmp_path), "--run", summary["id"], "--step", "1")
    assert replayed.returncode == 0, replayed.stderr
    assert "found \\x1b]0;pwned\\x07 it\\x1b[2J" in replayed.stdout  # the tool result in the replayed request, shown
    assert not any(c in replayed.stdout + replayed.stderr for c in RAW)
    as_json = cli("replay", str(tmp_path), "--run", summary["id"], "--step", "1", "--json")
    assert as_json.returncode == 0, as_json.stderr
    assert not any(c in as_json.stdout for c in RAW)
    document = json.loads(as_json.stdout)
    assert document["replayed"]["sent"] == run["steps"][1]["sent"]  # JSON escapes them; the data is whole
    assert "\x1b]0;pwned" in run["steps"][1]["sent"]["messages"][-1]["content"]
