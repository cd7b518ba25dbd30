"""The MCP server: ``ProjectTools``' documents registered as tools on the SDK's ``MCPServer``.

Every tool answers one JSON text (``answers.answer_text``): compact by default, ``detail="full"``
for the whole document; a fault the caller can fix is an error answer naming what is known. The
read tools are annotated read-only. ``replay_send`` and ``run_target`` exist only when the server
is built with ``allow_spend``; a model that is not scripted is called only after the user agreed,
asked through the protocol (elicitation) when the client supports it, else by a second call that
carries the confirmation token the first answer gave.
"""

from __future__ import annotations

import dataclasses
import inspect
import weakref
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal

from mcp.server import MCPServer
from mcp.server.elicitation import ElicitationResult
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.resolve import Elicit, Resolve
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from ..core.record.replay_overrides import form_name, wire_fields
from ..core.record.runstore import RunStatus
from .answers import Detail, agent_json, answer_text, error_document
from .spending import Spending
from .tools import ProjectTools, ToolFault

INSTRUCTIONS = (
    "Ask what this project's prompts send, before anything runs: list_targets, then inspect a target "
    "(example or input, budget) to see the literal request and every decision with its file:line; edit "
    "the file named there; diff shows what the edit did to every request (against a git base). check is "
    "the CI verdict. runs/run/replay read recorded runs. No read tool calls a model. Answers are JSON, "
    'compact by default ("cut" says what was left out); pass detail="full" for everything.'
)
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
SPENDS = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=True)
DetailArg = Literal["compact", "full"]


def answer(document: dict[str, Any], detail: Detail) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=answer_text(document, detail))])


def failure(fault: ToolFault) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=agent_json(error_document(fault.message, **fault.fields)))], is_error=True)


async def answering(make: Callable[[], Awaitable[dict[str, Any]]], detail: Detail) -> CallToolResult:
    try:
        return answer(await make(), detail)
    except ToolFault as fault:
        return failure(fault)


async def _now(value: dict[str, Any]) -> dict[str, Any]:
    return value


def sync(call: Callable[[], dict[str, Any]]) -> Callable[[], Awaitable[dict[str, Any]]]:
    """A store read (fast, no worker) as the awaitable ``answering`` takes; its fault is raised there."""

    async def run() -> dict[str, Any]:
        return call()

    return run


class Agreed(BaseModel):
    """What the user is asked before a model that costs money is called."""

    agree: bool = Field(description="Call the model (it is not scripted: it may cost money and run real tools)")


NOT_ASKED = "not asked"  # the resolver's answer when there is nothing to ask, or no way to ask it


SPENDING: weakref.WeakKeyDictionary[Any, Spending] = weakref.WeakKeyDictionary()  # server -> its spending tools


def asking(ctx: Context, question: str | None) -> Elicit[Agreed] | str:
    """The resolvers' answer (the SDK's ``Resolve``): ask the user ``question`` through the client
    before a model that is not scripted is called, mid-call on a handshake-era connection or by an
    ``InputRequiredResult`` round on a 2026-07-28 one (the SDK picks). ``question`` is None when the
    report shows no real model (nothing to ask); a client that declared no elicitation is not asked
    (the confirmation token answers it)."""
    caps = ctx.client_capabilities
    if question is None or caps is None or caps.elicitation is None:
        return NOT_ASKED
    return Elicit(question, Agreed)


async def ask_before_run(ctx: Context, target: str) -> Elicit[Agreed] | str:
    return asking(ctx, SPENDING[ctx.mcp_server].run_question(target))


async def ask_before_send(ctx: Context, run: str) -> Elicit[Agreed] | str:
    return asking(ctx, SPENDING[ctx.mcp_server].send_question(run))


def agreement(outcome: ElicitationResult[Any]) -> bool | None:
    """True: the user agreed; False: declined or cancelled; None: not asked."""
    data = getattr(outcome, "data", None)
    if data == NOT_ASKED:
        return None
    return isinstance(data, Agreed) and data.agree


# Each kind of replay override (``replay_overrides._KINDS``) as a tool argument: its type and its
# ``Field`` keywords; its value reaches ``cli.replay.build_overrides`` as the CLI option's would.
_ARGUMENTS: dict[str, Callable[[dataclasses.Field[Any]], tuple[Any, dict[str, Any]]]] = {
    "int | None": lambda f: (int | None, {"ge": f.metadata["min"]} if "min" in f.metadata else {}),
    "str | None": lambda f: (str | None, {}),
    "tuple[tuple[str, str], ...]": lambda f: (list[str] | None, {"description": f"{f.metadata['metavar']}, each"}),  # each pair as the option's C=R
    "tuple[str, ...]": lambda f: (list[str] | None, {}),
}


def override_parameters() -> list[inspect.Parameter]:
    """One tool argument per replay override, named by its form name, in the table's order (``None``:
    as recorded)."""
    parameters = []
    for f in wire_fields():
        kind, keywords = _ARGUMENTS[str(f.type)](f)
        default = Field(default=None, **keywords) if keywords else None
        parameters.append(inspect.Parameter(form_name(f), inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default, annotation=kind))
    return parameters


def override_arguments(tool: Callable[..., Awaitable[CallToolResult]]) -> Callable[..., Awaitable[CallToolResult]]:
    """``tool`` as the SDK reads its arguments: the replay overrides (``override_parameters``) in place
    of its ``**override_values``, after ``source``; each value given is passed in ``override_values``."""
    signature = inspect.signature(tool, eval_str=True)
    own = [p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    at = [p.name for p in own].index("source") + 1
    tool.__signature__ = signature.replace(parameters=[*own[:at], *override_parameters(), *own[at:]])  # type: ignore[attr-defined]
    return tool


def build_server(tools: ProjectTools, *, allow_spend: bool = False, name: str = "crux-devtools") -> MCPServer:
    """The MCP server over ``tools`` (started and stopped by the caller)."""
    server = MCPServer(name, instructions=INSTRUCTIONS, log_level="WARNING")

    @server.tool(annotations=READ_ONLY)
    async def list_targets(detail: DetailArg = "compact") -> CallToolResult:
        """Every prompt and agent of the project (id, kind, file, line, status, tokens, examples), and the load errors."""
        return await answering(tools.list_targets, detail)

    @server.tool(annotations=READ_ONLY)
    async def inspect(
        target: str | None = None, example: str | None = None, input: dict[str, Any] | None = None,
        budget: int | None = Field(default=None, ge=1, description="system-text token budget (as --token-budget)"),
        input_budget: int | None = Field(default=None, ge=1, description="max input tokens to plan against (as --input-budget)"),
        model: str | None = Field(default=None, description="plan against this capacity profile of pyproject.toml (as --model)"),
        detail: DetailArg = "compact",
    ) -> CallToolResult:
        """What a target sends for an example or a custom input: the literal request (system text, messages,
        tools), and "decisions": each context sent, dropped or excluded, why, and the file:line where it is defined.
        The document of `crux-devtools inspect --json`."""
        return await answering(lambda: tools.inspect(target, example, input, budget, input_budget, model), detail)

    @server.tool(annotations=READ_ONLY)
    async def check(strict: bool = False, detail: DetailArg = "compact") -> CallToolResult:
        """The CI verdict of `crux-devtools check --json`: every failure as FILE:LINE: Type: message."""
        return await answering(lambda: tools.check(strict), detail)

    @server.tool(annotations=READ_ONLY)
    async def diff(base: str = "HEAD", head: str | None = None, detail: DetailArg = "compact") -> CallToolResult:
        """What the changes between git revision `base` and `head` (default: the working tree, uncommitted edits
        included) do to every request, each change with its context and file:line. `crux-devtools diff --format json`."""
        return await answering(lambda: tools.diff(base, head), detail)

    @server.tool(annotations=READ_ONLY)
    async def cache(target: str | None = None, detail: DetailArg = "compact") -> CallToolResult:
        """Which blocks of each request are cacheable, what breaks the prefix, and where it is defined:
        `crux-devtools cache --format json`."""
        return await answering(lambda: tools.cache(target), detail)

    @server.tool(annotations=READ_ONLY)
    async def runs(
        target: str | None = None, status: RunStatus | None = None,
        limit: int = Field(default=20, ge=1), detail: DetailArg = "compact",
    ) -> CallToolResult:
        """Recorded runs, newest first, as `crux-devtools runs --json` (whole runs, steps included)."""
        return await answering(sync(lambda: tools.runs(target, status, limit)), detail)

    @server.tool(annotations=READ_ONLY)
    async def run(id: str, step: int | None = None, detail: DetailArg = "compact") -> CallToolResult:
        """One recorded run, or one of its steps (by its recorded index): what was sent, planned and answered."""
        return await answering(sync(lambda: tools.run(id, step)), detail)

    @server.tool(annotations=READ_ONLY)
    @override_arguments
    async def replay(
        run: str, step: int = 0, source: Literal["recorded", "current"] = "recorded", detail: DetailArg = "compact", **override_values: Any,
    ) -> CallToolResult:
        """Plan a recorded step again, as it was or with overrides, beside the recorded request: `replay --json`."""
        return await answering(lambda: tools.replay(run, step, source=source, **override_values), detail)

    if allow_spend:
        spending = SPENDING[server] = Spending(tools)

        @server.tool(annotations=SPENDS)
        async def run_target(
            target: str, agreed: Annotated[ElicitationResult[Agreed], Resolve(ask_before_run)], example: str | None = None,
            input: dict[str, Any] | None = None, confirm: str | None = None, detail: DetailArg = "compact",
        ) -> CallToolResult:
            """Run an agent (or a prompt with a model) once and record it: CALLS ITS MODEL. A model that is not
            scripted is called only after the user agreed (asked through the client, or `confirm` = the token a
            first call answered)."""
            return await answering(lambda: spending.run_target(agreement(agreed), target, example, input, confirm), detail)

        @server.tool(annotations=SPENDS)
        @override_arguments
        async def replay_send(
            run: str, agreed: Annotated[ElicitationResult[Agreed], Resolve(ask_before_send)], step: int = 0,
            source: Literal["recorded", "current"] = "recorded", confirm: str | None = None, detail: DetailArg = "compact", **override_values: Any,
        ) -> CallToolResult:
            """Send a replayed step to the run's model and record the answer as a child run: CALLS A MODEL (asks first
            when it is not scripted)."""
            return await answering(lambda: spending.replay_send(agreement(agreed), run, step, source=source, confirm=confirm, **override_values), detail)

    return server
