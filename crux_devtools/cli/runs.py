"""``crux-devtools runs``: the runs recorded in a project's ``.crux/runs.sqlite3``.

A group: ``runs list`` (also what ``runs [DIRECTORY]`` runs, so the command line of before keeps
working), ``runs export`` (JSON Lines or CSV, for other tools) and ``runs stats``. A new subcommand is one more
``@runs.command`` here; the filters every one of them takes are ``run_filters``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..core.record.runstore import RUN_STATUSES
from .common import project


class ListByDefault(click.Group):
    """A group whose arguments go to its ``list`` subcommand when they do not start with a subcommand's
    name: ``crux-devtools runs DIR --json`` is ``crux-devtools runs list DIR --json``."""

    default = "list"

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] not in ctx.help_option_names):
            args = [self.default, *args]
        return super().parse_args(ctx, args)


def run_filters(command: Any) -> Any:
    """The filters of every ``runs`` subcommand: ``--target`` and ``--status`` (the store's statuses)."""
    command = click.option("--status", type=click.Choice(RUN_STATUSES), help="Only runs that ended so.")(command)
    return click.option("--target", metavar="ID", help="Only runs of this prompt or agent.")(command)


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


@click.group("runs", cls=ListByDefault)
def runs() -> None:
    """List, export or count the runs recorded in DIRECTORY/.crux/runs.sqlite3.

    `crux-devtools runs [DIRECTORY] [OPTIONS]` is `runs list`; `runs export` prints them for other
    tools; `runs stats` counts them by target and status. A folder named like a subcommand is given
    after it: `runs list export`.
    """


LIMIT = click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True, metavar="N", help="At most N runs (the newest).")
DIRECTORY = click.argument("directory", default=".", type=click.Path(file_okay=False))


@runs.command("list")
@DIRECTORY
@run_filters
@LIMIT
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array of whole runs, steps included (with --follow: one run per line).")
@click.option("--follow", is_flag=True, help="Keep printing new runs as they are recorded, until Ctrl-C.")
@click.option("--format", "out_format", type=click.Choice(("table", "json", "jsonl", "csv")), default="table", show_default=True,
              help="table; json (as --json); jsonl: one whole run per line; csv: one row per run with its usage and cost.")
def list_runs(directory: str, target: str | None, status: str | None, limit: int, as_json: bool, follow: bool, out_format: str) -> None:
    """List the runs recorded in DIRECTORY/.crux/runs.sqlite3, newest first.

    One line per run: time, target, status, steps, input tokens sent, provider-reported usage,
    duration, cost, model, origin and id; the cost of every run the filters match goes to stderr.
    """
    show_runs(directory, target, status, limit, as_json, follow, out_format)


@runs.command("export")
@DIRECTORY
@run_filters
@LIMIT
@click.option("--format", "out_format", type=click.Choice(("jsonl", "csv")), default="jsonl", show_default=True,
              help="jsonl: one whole run per line, steps included; csv: one row per run with its usage and cost.")
@click.option("--follow", is_flag=True, help="Keep appending new runs as they are recorded, until Ctrl-C.")
def export_runs(directory: str, target: str | None, status: str | None, limit: int, out_format: str, follow: bool) -> None:
    """Print the runs for other tools, oldest first: JSON Lines or CSV.

    The newest N runs the filters match, oldest first, so --follow appends in order. A CSV text cell
    a spreadsheet would run is made inert (a quote in front of =, +, - or @; control characters
    escaped).
    """
    show_runs(directory, target, status, limit, False, follow, out_format)


@runs.command("stats")
@DIRECTORY
@run_filters
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per target instead of the table.")
def runs_stats(directory: str, target: str | None, status: str | None, as_json: bool) -> None:
    """Count the recorded runs of each target by how they ended, with their cost.

    One line per target (the filters apply): its runs, how many ended with each status, and the cost
    of them all (`unpriced` where a model has no price).
    """
    import json

    from ..inspector.features.runs.costs import prices_for

    root = project(directory)
    store = _open_runs(root)
    prices = prices_for(root)
    try:
        targets = [t for t in _store_call(store.targets) if target is None or t == target]
        rows: list[dict[str, Any]] = []
        for name in targets:
            counts: dict[str, int] = {s: _store_call(lambda s=s: store.count(target=name, status=s)) if status in (None, s) else 0 for s in RUN_STATUSES}
            cost = prices.total(_store_call(lambda: store.usage_by_model(target=name, status=status)))
            rows.append({"target": name, "runs": sum(counts.values()), **counts, "cost": cost.label})
    finally:
        store.close()
    rows = [r for r in rows if r["runs"]]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        click.echo(f"no runs recorded in {root / '.crux' / 'runs.sqlite3'}" + (" match these filters" if target or status else ""), err=True)
        return
    header = ["TARGET", "RUNS", *(s.upper() for s in RUN_STATUSES), "COST"]
    table = [header, *([str(r["target"]), str(r["runs"]), *(str(r[s]) for s in RUN_STATUSES), str(r["cost"])] for r in rows)]
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    for line in table:
        click.echo("  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(line, widths))).rstrip())


def show_runs(directory: str, target: str | None, status: str | None, limit: int, as_json: bool, follow: bool, out_format: str) -> None:
    """What ``runs list`` and ``runs export`` print: ``out_format`` is table, json, jsonl or csv."""
    from ..core.record.runstore import json_text
    from ..inspector.features.runs.text import run_line, run_table
    from ..inspector.features.runs.costs import prices_for
    from ..inspector.features.runs.export import csv_lines, jsonl_line

    root = project(directory)
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
