"""What the ``crux-devtools`` commands share: the project folder argument, the ``--timeout`` help, the
one-line usage errors, and the report that ``inspect``, ``check`` and the MCP tools read.

Only click and the standard library are imported here; everything heavy is imported inside functions.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from ..inspector.report_types import PromptReport, Report
    from ..inspector.session.service import ProjectSession

TIMEOUT_HELP = "Seconds user code may run per module import or example before the worker is killed."


class UsageFault(click.ClickException):
    """A bad invocation, printed as one line with exit code 2."""

    exit_code = 2


class OneLineCommand(click.Command):
    """A command whose usage errors (unknown option, bad value) are one line and exit 2."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            raise UsageFault(exc.format_message()) from None


def project(directory: str, fault: type[click.ClickException] = click.ClickException) -> Path:
    """The project folder ``directory``, resolved; a missing one (or a file) is ``fault`` (exit 1 by
    default, exit 2 with ``UsageFault``)."""
    path = Path(directory).resolve()
    if not path.is_dir():
        raise fault(f"project folder {directory!r} does not exist or is not a folder")
    return path


async def inspect_project(
    root: Path,
    timeout: float,
    prompt_id: str | None,
    example: str | None,
    data: dict[str, Any] | None,
    token_budget: int | None,
    input_budget: int | None = None,
    model: str | None = None,
) -> Report:
    """The report of the project at ``root`` (``select_report``), from a session started for it and stopped after."""
    from ..inspector.session.service import ProjectSession

    session = ProjectSession(root, timeout=timeout, watch=False, history=False, prewarm=False, fork=False)
    try:
        await session.start()
        return await select_report(session, prompt_id, example, data, token_budget, input_budget, model)
    finally:
        await session.stop()


async def select_report(
    session: ProjectSession,
    prompt_id: str | None,
    example: str | None,
    data: dict[str, Any] | None,
    token_budget: int | None,
    input_budget: int | None = None,
    model: str | None = None,
) -> Report:
    """The report ``inspect --json`` prints, from a started session: its prompts (or the one asked
    for) with their examples, re-evaluated in its worker for an example, input, budget or model (a
    capacity profile's name, checked: an unknown one is an error naming the known ones). An unknown
    id or example is a ``ClickException`` naming the known ones."""
    if model is not None:
        from .replay import model_profile

        model_profile(session.root, model)
    from ..inspector.worker.evaluate import planned_tokens, status_of

    loaded = session.report
    if loaded is None:  # start() holds a report after its first load, even a failed one
        raise click.ClickException(f"{session.root}: the project was not loaded")
    report = loaded.copy()
    prompts = report["prompts"]
    if prompt_id is not None:
        prompts = [p for p in prompts if p["id"] == prompt_id]
        if not prompts and not report["errors"]:
            known = ", ".join(p["id"] for p in report["prompts"]) or "none"
            raise click.ClickException(f"no prompt or agent with id {prompt_id!r}; known ids: {known}")
    if example is not None or data is not None or token_budget is not None or input_budget is not None or model is not None:
        chosen: list[PromptReport] = []
        for prompt in prompts:
            if example is not None and data is None and example not in {e["name"] for e in prompt["examples"]}:
                if prompt_id is None:
                    continue
                known = ", ".join(e["name"] for e in prompt["examples"]) or "none"
                raise click.ClickException(f"{prompt['kind']} {prompt['id']!r} has no example {example!r}; known examples: {known}")
            names = [example] if example is not None or data is not None else [e["name"] for e in prompt["examples"]]
            examples = [
                await session.evaluate(prompt["id"], example=name, input=data, token_budget=token_budget, input_budget=input_budget, model=model)
                for name in names
            ]
            # status and size (the first example's planned input tokens) are of the examples shown
            first = examples[0] if examples else None
            chosen.append({**prompt, "examples": examples, "status": status_of(examples, checked=prompt["note"] is None), "total_tokens": planned_tokens(first)})
        prompts = chosen
    report["prompts"] = prompts
    return report
