"""The MCP server as a coding agent meets it: how fast each read tool answers, and how few calls a task takes.

Run: .venv/bin/python benchmarks/bench_mcp.py

A git copy of the sample project (with runs recorded by ``sample_project/record_demo.py``, and one
change committed: the brand voice of ``budgeted-reply``'s ``with-brand-voice`` example grew, so under
its 150-token budget ``brand-voice`` is dropped). The server is built as ``crux-devtools mcp`` builds
it and driven by the SDK's in-process client (the protocol's requests and answers, no stdio).

1. Each read tool, warm (median of repeated calls after a first one), against the same CLI command
   run as a user runs it (a new process each time, as an agent without MCP would). Target: each tool
   at most 200 ms.
2. A scripted agent (no model) does "make `brand-voice` survive the 150-token budget and prove it":
   ``inspect`` (finds it dropped, its priority and ``file:line``), edits that line, ``diff`` (the
   proof: it joined the request, and what left instead). Target: at most 5 tool calls.
3. Model calls: every call goes through a project whose agents use ``ScriptedModel``; the count of
   answers each scripted model gave is read back (0 without ``--allow-spend``).
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from mcp import Client  # noqa: E402

from crux_devtools.inspector.session.service import ProjectSession  # noqa: E402
from crux_devtools.mcp_server.server import build_server  # noqa: E402
from crux_devtools.mcp_server.tools import ProjectTools  # noqa: E402

CLI = str(Path(sys.executable).with_name("crux-devtools"))
LONGER_VOICE = "Calm and exact. Name the screen and the button the customer should press, in the words the app itself uses."
TARGET_MS = 200
MAX_CALLS = 5
REPEATS = 7


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com", *args], cwd=root, check=True, capture_output=True)


def project_copy(scratch: Path) -> Path:
    root = scratch / "sample"
    shutil.copytree(REPO / "sample_project", root, ignore=shutil.ignore_patterns(".crux", "__pycache__"))
    subprocess.run([sys.executable, str(root / "record_demo.py")], cwd=scratch, check=True, capture_output=True)
    (root / ".gitignore").write_text(".crux/\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "sample")
    budgets = root / "03_budgets.py"
    budgets.write_text(budgets.read_text().replace('"brand_voice": "Calm and exact."', f'"brand_voice": "{LONGER_VOICE}"'))
    git(root, "commit", "-qam", "the restore example's brand voice grew")
    return root


def cli_ms(args: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run([CLI, *args], capture_output=True, check=False)
    return (time.perf_counter() - started) * 1000


async def call(client: Client, tool: str, **arguments: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    result = await client.call_tool(tool, arguments)
    elapsed = (time.perf_counter() - started) * 1000
    answer = json.loads(result.content[0].text)
    assert not result.is_error, (tool, answer)
    return elapsed, answer


async def read_tools(client: Client, root: Path, run_id: str) -> bool:
    cases = [
        ("list_targets", {}, ["inspect", str(root), "--json"]),
        ("inspect", {"target": "budgeted-reply", "example": "with-brand-voice"}, ["inspect", str(root), "--prompt", "budgeted-reply", "--example", "with-brand-voice", "--json"]),
        ("check", {}, ["check", str(root), "--json"]),
        ("diff", {}, ["diff", str(root), "--format", "json"]),
        ("runs", {"limit": 5}, ["runs", str(root), "--json", "--limit", "5"]),
        ("run", {"id": run_id, "step": 1}, ["runs", str(root), "--json", "--limit", "1"]),
        ("replay", {"run": run_id, "step": 1, "max": 2000}, ["replay", str(root), "--run", run_id, "--step", "1", "--max", "2000", "--json"]),
    ]
    ok = True
    print(f"{'tool':<14}{'warm ms':>10}{'CLI ms':>10}{'ratio':>8}   target <= {TARGET_MS} ms")
    for tool, arguments, command in cases:
        await call(client, tool, **arguments)  # warm: the first call of a kind loads what it needs
        warm = statistics.median([(await call(client, tool, **arguments))[0] for _ in range(REPEATS)])
        cli = statistics.median([cli_ms(command) for _ in range(3)])
        met = warm <= TARGET_MS
        ok = ok and met
        print(f"{tool:<14}{warm:>10.1f}{cli:>10.0f}{cli / warm:>7.0f}x   {'ok' if met else 'OVER'}   (crux-devtools {' '.join(command[:1] + command[2:])})")
    return ok


async def scripted_agent(client: Client, root: Path) -> bool:
    """The agent's loop, with no model: each step reads the previous answer."""
    calls = 0
    _ms, inspected = await call(client, "inspect", target="budgeted-reply", example="with-brand-voice")
    calls += 1
    rows = {row["id"]: row for row in inspected["decisions"][0]["contexts"]}
    voice = rows["brand-voice"]
    assert voice["decision"] == "dropped" and voice["reason"] == "budget", voice
    sent_priorities = [r["priority"] for r in rows.values() if r["decision"] == "sent" and r["priority"] is not None]
    # the lowest priority leaves first: above the lowest one still sent is enough
    new_priority = min(sent_priorities) + 5
    file, line = voice["where"].rsplit(":", 1)
    path = root / file
    lines = path.read_text().splitlines(keepends=True)
    start = int(line) - 1
    for i in range(start, min(start + 8, len(lines))):
        if re.search(r"priority=\d+", lines[i]):
            lines[i] = re.sub(r"priority=\d+", f"priority={new_priority}", lines[i])
            break
    path.write_text("".join(lines))
    calls += 1  # the edit
    _ms, review = await call(client, "diff")
    calls += 1
    [row] = review["changed"]
    joined = [c for c in row["changes"] if c["kind"] == "context-joined" and c["id"] == "brand-voice"]
    left = [c["id"] for c in row["changes"] if c["kind"] == "context-left"]
    proved = bool(joined) and (row["target"], row["example"]) == ("budgeted-reply", "with-brand-voice")
    print(f"scripted agent: inspect -> brand-voice dropped (budget, priority {voice['priority']}, {voice['where']}) -> "
          f"edit priority={new_priority} -> diff: brand-voice joined, {', '.join(left) or 'nothing'} left, "
          f"{len(review['changed'])} example(s) changed")
    print(f"  {calls} tool calls (edit counted); target <= {MAX_CALLS}: {'ok' if proved and calls <= MAX_CALLS else 'FAILED'}")
    return proved and calls <= MAX_CALLS


async def main() -> int:
    with tempfile.TemporaryDirectory(prefix="crux-bench-mcp-") as scratch:
        root = project_copy(Path(scratch))
        runs = json.loads(subprocess.run([CLI, "runs", str(root), "--json", "--limit", "1000"], capture_output=True, text=True, check=True).stdout)
        run_id = runs[0]["id"]
        tools = ProjectTools(ProjectSession(root, history=False), timeout=30)
        server = build_server(tools)
        await tools.start()
        try:
            async with Client(server) as client:
                fast = await read_tools(client, root, run_id)
                done = await scripted_agent(client, root)
                _ms, after = await call(client, "runs", limit=1000, detail="full")
        finally:
            await tools.stop()
        # every model call the inspector makes is recorded (origin "inspector"): none was
        new = [r["id"] for r in after["runs"] if r["id"] not in {r["id"] for r in runs}]
        print(f"model calls: {len(new)} (runs recorded before the session {len(runs)}, after it {len(after['runs'])}; the server has no spending tool)")
        done = done and not new
        return 0 if fast and done else 1


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
