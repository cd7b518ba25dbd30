"""``crux-devtools check``: resolve and plan every prompt with every example, for editors and CI."""

from __future__ import annotations

import asyncio
import json

import click

from .common import TIMEOUT_HELP, inspect_project, project


@click.command("check")
@click.argument("directory", default=".", type=click.Path(file_okay=False))
@click.option("--timeout", type=click.FloatRange(min=0.1), default=10.0, show_default=True, metavar="SECONDS", help=TIMEOUT_HELP)
@click.option("--strict", is_flag=True, help="Also fail on prompts that could not be checked (required inputs and no examples).")
@click.option("--json", "as_json", is_flag=True, help="Print the verdict as one JSON document (failures, every expectation's result, warnings, prompts not checked) instead of lines.")
def check(directory: str, timeout: float, strict: bool, as_json: bool) -> None:
    """Resolve and plan every prompt with every example; exit 1 on any error.

    Fails on what generate would refuse or silently leave out: load errors, examples that do not
    resolve, plans over their input limit, system text over the prompt's token_budget even after
    drops, and match(...) keys with no case; and on every expectation of an example (example(...,
    expect=...)) that does not hold, at the line that wrote it. Each failure is printed to stdout as
    FILE:LINE: ErrorType: message, for editors and CI; warnings that do not fail go to stderr, and so
    does each prompt that could not be checked (required inputs and no examples): with --strict,
    those fail too.
    """
    from ..inspector.features.text.report import expectation_failures, expectation_results, failures, not_checked, warnings

    report = asyncio.run(inspect_project(project(directory), timeout, None, None, None, None))
    if as_json:
        from ..inspector.features.text.check_document import check_document

        document = check_document(report, strict=strict)
        click.echo(json.dumps(document, indent=2, ensure_ascii=False))
        if not document["ok"]:
            click.get_current_context().exit(1)
        return
    lines = failures(report, strict=strict) + expectation_failures(report)
    results = expectation_results(report)
    examples = sum(len(p["examples"]) for p in report["prompts"])
    for line in lines:
        click.echo(line)
    for line in warnings(report):
        click.echo(line, err=True)
    unchecked = not_checked(report)
    if not strict:
        for line in unchecked:
            click.echo(line, err=True)
    if lines:
        click.echo(f"{len(lines)} failure(s) in {len(report['prompts'])} prompt(s)", err=True)
        click.get_current_context().exit(1)
    if report["notice"]:
        click.echo(report["notice"], err=True)
    checked = len(report["prompts"]) - len(unchecked)
    skipped = f"; {len(unchecked)} not checked (no examples; --strict fails on them)" if unchecked else ""
    held = f", {len(results)} expectation(s) held" if results else ""
    click.echo(f"ok: {checked} prompt(s), {examples} example(s){held}, no failures{skipped}")
