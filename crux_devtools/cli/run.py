"""``crux-devtools run``: run one agent (or a prompt with a model) with one example, and record it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import click

from .common import project


@click.command("run")
@click.argument("directory", default=".", type=click.Path(file_okay=False))
@click.option("--prompt", "prompt_id", required=True, metavar="ID", help="The agent, or prompt with a model, to run.")
@click.option("--example", metavar="NAME", help="Run with this example's input (default: the first example).")
@click.option("--input", "input_json", metavar="JSON", help="Run with this input, a JSON object, instead of an example.")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=60.0, show_default=True, metavar="SECONDS", help="Seconds the run may take before the worker is killed.")
@click.option("--json", "as_json", is_flag=True, help="Print the whole run as JSON instead of its text and summary.")
def run_command(directory: str, prompt_id: str, example: str | None, input_json: str | None, timeout: float, as_json: bool) -> None:
    """Run one agent (or a prompt with a model) with one example, in the worker, and record it.

    Prints the final text, then a one-line summary on stderr; exits 1 when the run failed. The run is
    recorded in DIRECTORY/.crux/runs.sqlite3 with origin "inspector", like the inspector's Run button.
    """
    from ..core.record.runstore import json_text
    from ..inspector.features.runs.text import run_summary, user_site
    from ..inspector.features.shown.visible import visible

    if example is not None and input_json is not None:
        raise click.UsageError("use either --example or --input, not both")
    data = None
    if input_json is not None:
        try:
            data = json.loads(input_json)
        except json.JSONDecodeError as exc:
            raise click.BadParameter(f"not valid JSON: {exc}", param_hint="--input") from None
        if not isinstance(data, dict):
            raise click.BadParameter(f"must be a JSON object, got {type(data).__name__}", param_hint="--input")
    root = project(directory)
    run = asyncio.run(_run_once(root, timeout, prompt_id, example, data))
    if as_json:
        click.echo(json_text(run, indent=2))
    elif run.get("text") is not None:
        click.echo(visible(run["text"], lines=True))  # an answer's escape sequences are shown, never obeyed
    error = run.get("error")
    if isinstance(error, dict):
        site = user_site(error, root)  # the project's own line, up front: not only inside the traceback
        where = f"{site}: " if site else ""
        click.echo(visible(f"{where}{error.get('type')}: {error.get('message')}", lines=True), err=True)
    click.echo(run_summary(run), err=True)
    if run.get("status") != "ok":
        click.get_current_context().exit(1)


async def _run_once(root: Path, timeout: float, prompt_id: str, example: str | None, data: dict[str, Any] | None) -> dict[str, Any]:
    from ..inspector.api import find_prompt
    from ..inspector.session.service import ProjectSession

    session = ProjectSession(root, timeout=timeout, watch=False, history=False, prewarm=False, fork=False)
    try:
        await session.start()
        report = session.report
        prompts = report["prompts"] if report is not None else []
        prompt = find_prompt(report, prompt_id)
        if prompt is None:
            errors = report["errors"] if report is not None else []
            if errors:
                first = errors[0]
                raise click.ClickException(f"the project did not load: {first['file']}:{first['line']}: {first['type']}: {first['message']}")
            known = ", ".join(p["id"] for p in prompts) or "none"
            raise click.ClickException(f"no prompt or agent with id {prompt_id!r}; known ids: {known}")
        if not prompt["has_model"]:
            runnable = ", ".join(p["id"] for p in prompts if p["has_model"]) or "none"
            raise click.ClickException(
                f"{prompt['kind']} {prompt_id!r} has no model to call; runnable: {runnable}. "
                "Give the agent a model adapter, or the prompt model=ScriptedModel([...]) or another adapter"
            )
        if example is not None and data is None and example not in {e["name"] for e in prompt["examples"]}:
            known = ", ".join(e["name"] for e in prompt["examples"]) or "none"
            raise click.ClickException(f"{prompt['kind']} {prompt_id!r} has no example {example!r}; known examples: {known}")
        return await session.run(prompt_id, example=example, input=data, confirm=True)  # the command is the confirmation
    finally:
        await session.stop()
