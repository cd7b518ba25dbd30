"""``crux-devtools inspect``: print the request each example sends, and exit."""

from __future__ import annotations

import asyncio
import json

import click

from .common import TIMEOUT_HELP, inspect_project, project


@click.command("inspect")
@click.argument("directory", default=".", type=click.Path(file_okay=False))
@click.option("--prompt", "prompt_id", metavar="ID", help="Only this prompt or agent.")
@click.option("--example", metavar="NAME", help="Only this example of each prompt (re-evaluated).")
@click.option("--input", "input_json", metavar="JSON", help="A custom input as a JSON object, instead of the examples.")
@click.option("--token-budget", type=click.IntRange(min=1), metavar="N", help="Resolve with this system-text token budget: shows what would be dropped.")
@click.option(
    "--input-budget",
    type=click.IntRange(min=1),
    metavar="N",
    help="Plan each request with this input budget (max tokens): shows which ladder rungs the planner picks.",
)
@click.option("--model", metavar="NAME", help="Plan each request against this model's capacity profile ([tool.crux-devtools.models.NAME]) instead of the target's model.")
@click.option("--resolved", is_flag=True, help="Show the system text as the resolver made it (every part in full, before planning) instead of the request as sent.")
@click.option("--brief", is_flag=True, help="Cut long texts (parts, messages, tool schemas) to a few lines, saying how much was cut.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (for scripts) instead of text.")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=10.0, show_default=True, metavar="SECONDS", help=TIMEOUT_HELP)
def inspect(
    directory: str,
    prompt_id: str | None,
    example: str | None,
    input_json: str | None,
    token_budget: int | None,
    input_budget: int | None,
    model: str | None,
    resolved: bool,
    brief: bool,
    as_json: bool,
    timeout: float,
) -> None:
    """Print the request each example sends, for the project in DIRECTORY (default: the current
    folder), and exit: 1 when anything printed failed (a load error, an example that fails, a plan
    over its limit)."""
    if example is not None and input_json is not None:
        raise click.UsageError("use either --example or --input, not both")
    data = None
    if input_json is not None:
        from ..inspector.features.shown.custom_input import InputError, parse_input

        try:
            data = parse_input(input_json)
        except InputError as exc:  # one line, exit 1: not JSON, not an object, too deep, a lone surrogate
            raise click.ClickException(f"--input: {exc}") from None
    report = asyncio.run(inspect_project(project(directory), timeout, prompt_id, example, data, token_budget, input_budget, model))
    from ..inspector.features.text.report import expectation_failures, failures, render_report

    click.echo(json.dumps(report, indent=2) if as_json else render_report(report, resolved=resolved, brief=brief))
    if report.get("imported_note") and not as_json:  # which files ran, and why (on stderr: not the report)
        click.echo(report["imported_note"], err=True)
    failed = failures(report)
    if token_budget is None and input_budget is None:  # claims are about the example as written, not a what-if budget
        failed += expectation_failures(report)
    if failed:  # exit 1 when anything printed failed (the same failures `check` reports)
        click.echo(f"{len(failed)} failure(s)", err=True)
        click.get_current_context().exit(1)
