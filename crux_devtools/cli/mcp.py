"""``crux-devtools mcp``: the inspector as an MCP server over stdio, for coding agents.

Listed in the command table of ``cli/__init__.py``. The MCP SDK is the optional
extra ``crux-devtools[mcp]``: without it the command says how to install it (exit 2).
``--print-config`` needs no SDK: it prints the snippets that make common clients start this server.
"""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
from pathlib import Path

import click

from .common import TIMEOUT_HELP, OneLineCommand, UsageFault

INSTALL_HINT = "crux-devtools mcp needs the MCP SDK: pip install 'crux-devtools[mcp]' (or pip install 'mcp>=2,<3')"
SERVER_NAME = "crux-devtools"
# Shipped in the wheel: teaches an agent the tools, and the CLI's JSON path for agents without MCP.
SKILL_FILE = Path(__file__).resolve().parents[1] / "skills" / "crux-devtools" / "SKILL.md"


def sdk_missing() -> str | None:
    """Why the MCP SDK cannot be used here, or None."""
    try:
        import mcp.server  # noqa: F401
    except ImportError as exc:
        return f"{INSTALL_HINT} ({exc})"
    return None


def client_configs(root: Path, allow_spend: bool = False) -> str:
    """The configuration snippets for Claude Code, Cursor, VS Code and Codex, and the HTTP address."""
    args = ["mcp", str(root), *(["--allow-spend"] if allow_spend else [])]
    stdio = {"command": "crux-devtools", "args": args}
    mcp_servers = json.dumps({"mcpServers": {SERVER_NAME: stdio}}, indent=2)
    vscode = json.dumps({"servers": {SERVER_NAME: {"type": "stdio", **stdio}}}, indent=2)
    codex = f'[mcp_servers.{SERVER_NAME}]\ncommand = "crux-devtools"\nargs = {json.dumps(args)}'
    return "\n".join([
        "# Claude Code: .mcp.json at the project's root (or: claude mcp add " + SERVER_NAME + " -- crux-devtools "
        + " ".join(shlex.quote(a) for a in args) + ")",
        mcp_servers,
        "",
        "# Cursor: .cursor/mcp.json (the same shape)",
        mcp_servers,
        "",
        "# VS Code: .vscode/mcp.json",
        vscode,
        "",
        "# Codex: ~/.codex/config.toml",
        codex,
        "",
        "# Over HTTP instead: `crux-devtools serve " + shlex.quote(str(root)) + "` answers MCP at http://127.0.0.1:4400/mcp (streamable HTTP, local only)",
        "",
        f"# An agent without MCP: the skill file {SKILL_FILE} teaches it the CLI's JSON commands",
        f"# (Claude Code: copy it to .claude/skills/crux-devtools/SKILL.md)",
    ])


async def serve_stdio(root: Path, *, allow_spend: bool, timeout: float) -> None:
    from ..inspector.session.service import ProjectSession
    from ..mcp_server.server import build_server
    from ..mcp_server.tools import ProjectTools

    tools = ProjectTools(ProjectSession(root, timeout=timeout, history=False), timeout=timeout)
    server = build_server(tools, allow_spend=allow_spend)
    await tools.start()
    try:
        await server.run_stdio_async()
    finally:
        await tools.stop()


@click.command("mcp", cls=OneLineCommand)
@click.argument("directory", default=".", type=click.Path(file_okay=False))
@click.option("--allow-spend", is_flag=True, help="Also offer run_target and replay_send, which call a model (a real one only after the user agrees).")
@click.option("--print-config", is_flag=True, help="Print the snippets that make Claude Code, Cursor, VS Code and Codex start this server, and exit.")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=10.0, show_default=True, metavar="SECONDS", help=TIMEOUT_HELP)
def mcp(directory: str, allow_spend: bool, print_config: bool, timeout: float) -> None:
    """Answer a coding agent over MCP (stdio): what each prompt sends, why, and what an edit changed.

    Tools: list_targets, inspect, check, diff, runs, run, replay (read-only: none calls a model), and
    with --allow-spend run_target and replay_send. Answers are the CLI's JSON documents, compact by
    default (detail="full" for everything).
    """
    root = Path(directory)
    if not root.is_dir():
        raise UsageFault(f"project folder {directory!r} does not exist or is not a folder")
    root = root.resolve()
    if print_config:
        click.echo(client_configs(root, allow_spend))
        return
    missing = sdk_missing()
    if missing is not None:
        raise UsageFault(missing)
    try:
        asyncio.run(serve_stdio(root, allow_spend=allow_spend, timeout=timeout))
    except KeyboardInterrupt:
        sys.exit(0)


__all__ = ["mcp"]
