"""The ``crux-devtools`` command line. Heavy modules are imported inside commands, never at import."""

from __future__ import annotations

import sys

from ..inspector.transport.early_start import start_for

start_for(sys.argv)  # ``tui``: its worker starts warming up before the imports below (early_start.py)

import asyncio  # noqa: E402
import json  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import TYPE_CHECKING, Any  # noqa: E402

import click  # noqa: E402

if TYPE_CHECKING:
    from ..inspector.report_types import PromptReport, Report
    from ..inspector.session.service import ProjectSession

TIMEOUT_HELP = "Seconds user code may run per module import or example before the worker is killed."


@click.group()
@click.version_option(package_name="crux-devtools")
def main() -> None:
    """Inspect what your prompts really send to a model."""


def _project(directory: str) -> Path:
    path = Path(directory).resolve()
    if not path.is_dir():
        raise click.ClickException(f"project folder {directory!r} does not exist or is not a folder")
    return path


async def _inspect(
    root: Path,
    timeout: float,
    prompt_id: str | None,
    example: str | None,
    data: dict[str, Any] | None,
    token_budget: int | None,
    input_budget: int | None = None,
    model: str | None = None,
) -> Report:
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


@main.command()
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
    report = asyncio.run(_inspect(_project(directory), timeout, prompt_id, example, data, token_budget, input_budget, model))
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


@main.command()
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

    report = asyncio.run(_inspect(_project(directory), timeout, None, None, None, None))
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


@main.command()
@click.argument("directory", default=".", type=click.Path(file_okay=False))
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on (keep it local: the inspector runs your code).")
@click.option("--port", type=click.IntRange(1, 65535), default=4400, show_default=True, help="Port; if busy, the next free one is used and printed.")
@click.option("--no-open", is_flag=True, help="Do not open a browser.")
def serve(directory: str, host: str, port: int, no_open: bool) -> None:
    """Web inspector for the project in DIRECTORY, live as you save."""
    from ..mcp_server.http import http_mcp
    from ..web.serve import serve as run_server

    run_server(directory, host=host, port=port, open_browser=not no_open, mcp=http_mcp)


@main.command()
@click.argument("directory", default=".", type=click.Path(file_okay=False))
def tui(directory: str) -> None:
    """The same inspector as a Textual app in the terminal."""
    from ..tui.launch import run_tui

    run_tui(_project(directory))


RUN_STATUSES = ("ok", "error", "max_steps")


def _open_runs(root: Path) -> Any:
    """The project's runs store, read-only (a missing file is an empty store)."""
    from ..core.record.runstore import RunStore

    return RunStore.for_project(root, create=False)


def _store_call(call: Any) -> Any:
    """Run one store read, turning a store fault into a clear message and exit 1."""
    from ..core.record.runstore import RunStoreError

    try:
        return call()
    except RunStoreError as exc:
        raise click.ClickException(str(exc)) from None


@main.command()
@click.argument("directory", default=".", type=click.Path(file_okay=False))
@click.option("--target", metavar="ID", help="Only runs of this prompt or agent.")
@click.option("--status", type=click.Choice(RUN_STATUSES), help="Only runs that ended so.")
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True, metavar="N", help="At most N runs (the newest).")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array of whole runs, steps included (with --follow: one run per line).")
@click.option("--follow", is_flag=True, help="Keep printing new runs as they are recorded, until Ctrl-C.")
@click.option("--format", "out_format", type=click.Choice(("table", "json", "jsonl", "csv")), default="table", show_default=True,
              help="table; json (as --json); jsonl: one whole run per line; csv: one row per run with its usage and cost.")
def runs(directory: str, target: str | None, status: str | None, limit: int, as_json: bool, follow: bool, out_format: str) -> None:
    """List the runs recorded in DIRECTORY/.crux/runs.sqlite3, newest first.

    One line per run: time, target, status, steps, input tokens sent, provider-reported usage,
    duration, cost, model, origin and id; the cost of every run the filters match goes to stderr.
    """
    from ..core.record.runstore import json_text
    from ..inspector.features.runs.text import run_line, run_table
    from ..inspector.features.runs.costs import prices_for
    from ..inspector.features.runs.export import csv_lines, jsonl_line

    root = _project(directory)
    store = _open_runs(root)
    prices = prices_for(root)

    def priced(run: dict[str, Any]) -> dict[str, Any]:
        run["cost_usd"] = prices.run_cost(run)
        return run

    listed = [priced(r) for r in _store_call(lambda: store.list(target=target, status=status, limit=limit))]
    sizes: list[int] | None = None
    as_json = as_json or out_format == "json"
    if out_format in ("jsonl", "csv"):
        whole = [priced(_store_call(lambda r=r: store.get(r["id"])) or r) for r in reversed(listed)] if out_format == "jsonl" else list(reversed(listed))
        if whole or out_format == "csv":
            click.echo("\n".join(jsonl_line(r) for r in whole) if out_format == "jsonl" else csv_lines(whole), nl=out_format == "jsonl")
        if not follow:
            return
    elif as_json:
        whole = [_store_call(lambda r=r: store.get(r["id"])) or r for r in listed]
        if not follow:
            click.echo(json_text(whole, indent=2))
            return
        for run in reversed(whole):
            click.echo(json_text(run))
    elif listed:
        lines, sizes = run_table(listed)
        click.echo("\n".join(lines))
        if not follow:
            cost = prices.total(_store_call(lambda: store.usage_by_model(target=target, status=status))).label
            click.echo(f"cost of every run these filters match: {cost}", err=True)
    elif not follow:
        click.echo(
            f"no runs recorded in {root / '.crux' / 'runs.sqlite3'}"
            + (" match these filters" if target or status else "; turn recording on with record_runs(...) or CRUX_DEVTOOLS_RECORD=DIR"),
            err=True,
        )
    if not follow:
        return
    import time

    try:  # from the line that says Ctrl-C stops it: a Ctrl-C at any moment after it ends quietly
        mark, _ = _store_call(lambda: store.written_since(None))
        click.echo("following new runs (Ctrl-C to stop)…", err=True)
        while True:
            time.sleep(0.2)
            mark, new = _store_call(lambda: store.written_since(mark))
            for run in new:
                if (target is not None and run.get("target") != target) or (status is not None and run.get("status") != status):
                    continue
                run = priced(run)
                if out_format == "jsonl":
                    click.echo(jsonl_line(priced(_store_call(lambda r=run: store.get(r["id"])) or run)))
                elif out_format == "csv":
                    click.echo(csv_lines([run], header=False), nl=False)
                elif as_json:
                    click.echo(json_text(_store_call(lambda r=run: store.get(r["id"])) or run))
                else:
                    if sizes is None:
                        lines, sizes = run_table([run])
                        click.echo(lines[0])
                    click.echo(run_line(run, sizes))
    except KeyboardInterrupt:
        return
    finally:
        store.close()


@main.command("run")
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
    root = _project(directory)
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

from . import diff as cli_diff  # noqa: E402,F401  (registers `crux-devtools diff`)
from .replay import replay as _replay  # noqa: E402  (`crux-devtools replay`)

main.add_command(_replay)
from . import cache as cli_cache  # noqa: E402,F401  (registers `crux-devtools cache`)
from . import mcp as cli_mcp  # noqa: E402,F401  (registers `crux-devtools mcp`)
