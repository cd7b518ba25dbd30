"""``crux-devtools diff``: what an edit does to every request, prompt by prompt and example by example.

Listed in the command table of ``cli/__init__.py``; heavy modules are imported inside the command. Exit codes: 0 (reviewed), 1 (a ``--fail-on`` policy is met), 2 (not a git work
tree, an unknown revision, a bad option: one line, no traceback).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from ..review.policies import help_rows, help_text as fail_on_help
from .common import TIMEOUT_HELP, OneLineCommand, UsageFault


RUN_STORE = ".crux/runs.sqlite3"


def _run_inputs(
    root: Path, limit: int, redact: str | None = None, timeout: float = 10.0
) -> tuple[dict[str, list[tuple[str, dict[str, Any]]]], list[dict[str, Any]], dict[tuple[str, str], Any]]:
    """The inputs of the newest ``limit`` recorded runs of each target, named ``run:<id>`` (each run
    through the project's ``redact`` hook first, when it names one), what was asked for and
    cannot be planned (``not_compared`` entries: a run without a recorded input, a target with
    fewer runs than asked), and each planned run's recorded usage by ``(target, name)``."""
    from ..core.record.runstore import RunStore, RunStoreError
    from ..inspector.features.diff.redact import redact_runs

    store = RunStore.for_project(root, create=False)
    skipped: list[dict[str, Any]] = []
    try:
        targets = list(store.targets())
        runs = []
        for target in targets:
            found = store.list(target=target, limit=limit)
            runs += found
            if len(found) < limit:
                skipped.append({"id": f"runs of {target}", "file": RUN_STORE,
                                "reason": f"{len(found)} recorded run{'s' if len(found) != 1 else ''} (asked for {limit})"})
    except RunStoreError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        store.close()
    if not targets:
        skipped.append({"id": "runs", "file": RUN_STORE, "reason": f"no recorded runs (asked for {limit} of each target)"})
    if redact is not None:
        runs = redact_runs(root, redact, runs, timeout)
    inputs: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    usage: dict[tuple[str, str], Any] = {}
    for run in runs:
        data = run.get("input")
        if not isinstance(data, dict):
            skipped.append({"id": f"run:{run['id']}", "file": RUN_STORE, "reason": "its input was not recorded"})
            continue
        inputs.setdefault(str(run.get("target")), []).append((f"run:{run['id']}", data))
        usage[(str(run.get("target")), f"run:{run['id']}")] = run.get("usage")
    return inputs, skipped, usage


def _with_recorded_cache(document: dict[str, Any], usage: dict[tuple[str, str], Any]) -> None:
    """Each ``run:<id>`` example gets ``recorded_cache``: the cache reads and writes its run's
    provider reported (None: it reported no usage), beside the projected ``cache_prefix``."""
    from ..review.render import recorded_cache

    for prompt in document["prompts"]:
        for example in prompt["examples"]:
            key = (prompt["id"], example["name"])
            if key in usage:
                example["recorded_cache"] = recorded_cache(usage[key])


def _runs_left_out(document: dict[str, Any], inputs: dict[str, list[tuple[str, dict[str, Any]]]]) -> list[dict[str, Any]]:
    """The runs of ``inputs`` that are examples of no prompt in ``document``, with the reason."""
    compared = {(p["id"], e["name"]) for p in document["prompts"] for e in p["examples"]}
    listed = {p["id"] for p in document["prompts"]} | {i["id"] for i in document["not_compared"]}
    left = []
    for target, named in inputs.items():
        for name, _ in named:
            if (target, name) in compared:
                continue
            reason = f"its target {target} is at neither revision" if target not in listed else f"{target} was not planned with it"
            left.append({"id": name, "file": RUN_STORE, "reason": reason})
    return left


@contextlib.contextmanager
def _stopped_by_signals() -> Iterator[None]:
    """SIGTERM stops the command as Ctrl-C does (the running task is cancelled, so every ``finally``
    runs: the workers stop and the base export is removed), then exits 128 + the signal.

    The SIGTERM handler hands over to whatever answers Ctrl-C at that moment (``asyncio.run``'s own
    handler cancels the main task); raising from the handler instead would land in whichever task
    or thread start happened to be running, and asyncio would print its traceback."""
    import signal

    causes: list[int] = []

    def stop(number: int, frame: Any) -> None:
        causes.append(number)
        on_interrupt = signal.getsignal(signal.SIGINT)
        if callable(on_interrupt) and on_interrupt is not stop:
            on_interrupt(signal.SIGINT, frame)
        else:
            raise KeyboardInterrupt(number)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    except KeyboardInterrupt:
        number = causes[0] if causes else int(signal.SIGINT)
        click.echo(f"stopped by {signal.Signals(number).name}; the base export was removed", err=True)
        raise SystemExit(128 + number) from None
    finally:
        signal.signal(signal.SIGTERM, previous)


async def build_review(
    directory: Path, base: str, head: str | None, *, timeout: float = 10.0, runs: int = 0
) -> dict[str, Any]:
    """The review document of ``base`` -> ``head`` (None: the working tree) for the project in ``directory``."""
    from ..inspector.features.diff.evaluate import as_compared, evaluate_project, export_side, review_document
    from ..inspector.features.diff.redact import redact_setting
    from ..review.changes import default_counter
    from ..review.revisions import work_tree

    started = time.perf_counter()
    tree = work_tree(directory)
    redact = redact_setting(directory)
    inputs, skipped, usage = _run_inputs(directory, runs, redact, timeout) if runs else (None, [], {})
    with tempfile.TemporaryDirectory(prefix="crux-diff-") as scratch:
        sides = [export_side(tree, rev, directory, Path(scratch) / name) for rev, name in ((base, "base"), (head, "head"))]
        seconds: dict[str, Any] = {}

        async def evaluate(name: str, root: Path | None) -> dict[str, Any] | None:
            if root is None:
                return None
            began = time.perf_counter()
            report = await evaluate_project(root, timeout=timeout, inputs=inputs)
            seconds[f"{name}_s"] = round(time.perf_counter() - began, 3)
            return report

        # Both sides are fresh loads, in parallel, as the live page's base is: no report is carried
        # over from one revision to the other, so nothing a worker did not see can make them agree.
        # The token counter's tables load in a thread meanwhile.
        warm = asyncio.ensure_future(asyncio.to_thread(lambda: default_counter().count("")))
        base_side, head_side = sides
        base_report, head_report = await asyncio.gather(*(evaluate(n, s.root) for n, s in zip(("base", "head"), sides)))
        await warm
        compared_base = as_compared(base_report, base_side, tree)
        compared_head = as_compared(head_report, head_side, tree)
        document = review_document(directory, base_side, head_side, compared_base, compared_head, timeout=timeout,
                                   timing={**seconds, "total_s": round(time.perf_counter() - started, 3)})
    if inputs is not None:
        document["not_compared"] = list(document["not_compared"]) + skipped + _runs_left_out(document, inputs)
        _with_recorded_cache(document, usage)
    return document


def ran_line(document: dict[str, Any]) -> str:
    """Which revisions' code the review ran (each in isolated workers; no model is called)."""
    def code(side: dict[str, Any]) -> str:
        if side.get("rev") is None:
            return "the working tree"
        return f"{side['rev']} ({str(side.get('sha'))[:12]}, exported, with the working tree's ignored files)"

    return f"ran the code of {code(document['base'])} and of {code(document['head'])}; no model was called"


class DiffCommand(OneLineCommand):
    """``diff``, whose help ends with every ``--fail-on`` policy and what it fails on."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Policies of --fail-on"):
            formatter.write_dl(help_rows())
        super().format_epilog(ctx, formatter)


@click.command("diff", cls=DiffCommand)
@click.argument("directory", default=".", type=click.Path(file_okay=False))
@click.option("--base", default="HEAD", show_default=True, metavar="REV", help="The git revision to compare against.")
@click.option("--head", metavar="REV", help="The revision to review (default: the working tree, uncommitted edits included).")
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text", show_default=True, help="text for a terminal, markdown for a pull-request comment, json for scripts.")
@click.option("--fail-on", "fail_on", multiple=True, metavar="POLICY", help=fail_on_help())
@click.option("--runs", type=click.IntRange(min=0), default=0, metavar="N", help="Also plan the inputs of the newest N recorded runs of each target, as examples run:<id>.")
@click.option("--output", type=click.Path(dir_okay=False, writable=True), metavar="FILE", help="Write the review to FILE instead of standard output.")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=10.0, show_default=True, metavar="SECONDS", help=TIMEOUT_HELP)
def diff(directory: str, base: str, head: str | None, fmt: str, fail_on: tuple[str, ...], runs: int, output: str | None, timeout: float) -> None:
    """Review what the changes between two git revisions do to every request (no model is called).

    Each prompt and agent is planned with each example at BASE (default HEAD) and at HEAD (default:
    the working tree), in isolated workers as `check` does, and every difference in the request is
    listed with the context and the file:line that caused it, the cacheable prefix, and the cost.
    """
    from ..review.policies import PolicyError, met, parse
    from ..review.render import render_markdown, render_text
    from ..inspector.features.diff.redact import RedactError
    from ..review.revisions import RevisionError, check_revision

    root = Path(directory)
    if not root.is_dir():
        raise UsageFault(f"project folder {directory!r} does not exist or is not a folder")
    try:
        policies = [parse(p) for p in fail_on]
    except PolicyError as exc:
        raise UsageFault(str(exc)) from None
    try:
        check_revision(base)
        if head is not None:
            check_revision(head)
        with _stopped_by_signals():
            document = asyncio.run(build_review(root.resolve(), base, head, timeout=timeout, runs=runs))
    except (RevisionError, RedactError) as exc:
        raise UsageFault(str(exc)) from None
    if fmt == "json":
        text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    elif fmt == "markdown":
        text = render_markdown(document)
    else:
        text = ran_line(document) + "\n" + render_text(document) + "\n"
    if output:
        Path(output).write_text(text, encoding="utf-8")
    else:
        click.echo(text, nl=False)
    reasons = [f"--fail-on {p.text}: {line}" for p in policies for line in met(p, document)]
    for line in reasons:
        click.echo(line, err=True)
    if reasons:
        click.get_current_context().exit(1)
