"""``crux-devtools diff``: what an edit does to every request, prompt by prompt and example by example.

Registered on the ``crux-devtools`` group by one import in ``cli.py``; heavy modules are imported
inside the command. Exit codes: 0 (reviewed), 1 (a ``--fail-on`` policy is met), 2 (not a git work
tree, an unknown revision, a bad option: one line, no traceback).
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from .cli import TIMEOUT_HELP, main


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


def _run_inputs(root: Path, limit: int, redact: str | None = None, timeout: float = 10.0) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """The inputs of the newest ``limit`` recorded runs of each target, named ``run:<id>`` (each run
    through the project's ``redact`` hook first, when it names one)."""
    from .core.record.runstore import RunStore, RunStoreError
    from .inspector.diff_redact import redact_runs

    store = RunStore.for_project(root, create=False)
    try:
        runs = [run for target in store.targets() for run in store.list(target=target, limit=limit)]
    except RunStoreError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        store.close()
    if redact is not None:
        runs = redact_runs(root, redact, runs, timeout)
    inputs: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for run in runs:
        data = run.get("input")
        inputs.setdefault(str(run.get("target")), []).append((f"run:{run['id']}", data if isinstance(data, dict) else {}))
    return inputs


async def build_review(
    directory: Path, base: str, head: str | None, *, timeout: float = 10.0, runs: int = 0
) -> dict[str, Any]:
    """The review document of ``base`` -> ``head`` (None: the working tree) for the project in ``directory``."""
    from .core.record.pricing import price_for
    from .inspector.discovery import read_model_config
    from .review.changes import default_counter
    from .review.compare import review
    from .inspector.diff_evaluate import evaluate_in_turn, evaluate_project, export_side
    from .review.revisions import changed_files, has_ignored_files, work_tree
    from .review.sources import Sources

    from .inspector.diff_redact import redact_document, redact_setting

    started = time.perf_counter()
    tree = work_tree(directory)
    redact = redact_setting(directory)
    inputs = _run_inputs(directory, runs, redact, timeout) if runs else None
    with tempfile.TemporaryDirectory(prefix="crux-diff-") as scratch:
        sides = [export_side(tree, rev, directory, Path(scratch) / name) for rev, name in ((base, "base"), (head, "head"))]
        seconds: dict[str, Any] = {}

        async def evaluate(name: str, root: Path | None, files: Sequence[str] = (), watched: list[str] | None = None) -> dict[str, Any] | None:
            if root is None:
                return None
            began = time.perf_counter()
            report = await evaluate_project(root, timeout=timeout, inputs=inputs, files=files, watched=watched)
            seconds[f"{name}_s"] = round(time.perf_counter() - began, 3)
            return report

        # Only what can differ is evaluated twice: when no module, pyproject.toml or file that user
        # code reads differs between the revisions, the base's report is the head's.
        # the token counter's tables load in a thread while the workers evaluate
        warm = asyncio.ensure_future(asyncio.to_thread(lambda: default_counter().count("")))
        differ = changed_files(tree, sides[0].sha or "", sides[1].sha) if sides[0].sha and sides[0].root and sides[1].root else None
        base_report: dict[str, Any] | None
        if differ is not None and not any(f == "pyproject.toml" or f.endswith(".py") for f in differ):
            watched: list[str] = []
            head_report = await evaluate("head", sides[1].root, differ, watched)
            base_report = head_report if not watched else await evaluate("base", sides[0].root)
            seconds["base_reused"] = not watched
        elif differ is not None and head is None and sides[0].root is not None and has_ignored_files(tree) is False:
            # the working tree differs from the base only in files git knows: the base is loaded,
            # then the differing files are applied to it as a save (only what they reach is evaluated)
            began = time.perf_counter()
            base_report, head_report, seconds["head_load"] = await evaluate_in_turn(
                sides[0].root, directory, differ, timeout=timeout, inputs=inputs)
            seconds["both_s"] = round(time.perf_counter() - began, 3)
        else:
            base_report, head_report = await asyncio.gather(*(evaluate(n, s.root) for n, s in zip(("base", "head"), sides)))
        await warm
        profile_root = sides[1].root or directory
        profiles = read_model_config(profile_root)[0]["models"]
        document = review(
            base_report, head_report,
            base_info={"rev": sides[0].rev, "sha": sides[0].sha}, head_info={"rev": sides[1].rev, "sha": sides[1].sha},
            scrub=[str(s.root) for s in sides if s.root is not None and s.rev is not None] + [scratch],
            pricer=lambda model: price_for(model, profiles),
            sources=Sources(tree.top, tree.subdir, sides[0].sha, sides[1].sha, directory),
            timing={**seconds, "total_s": round(time.perf_counter() - started, 3)},
        )
    if redact is not None:
        timing = document.pop("timing")
        document = {**redact_document(directory, redact, document, timeout), "timing": timing}
    return document


@main.command("diff", cls=OneLineCommand)
@click.argument("directory", default=".", type=click.Path(file_okay=False))
@click.option("--base", default="HEAD", show_default=True, metavar="REV", help="The git revision to compare against.")
@click.option("--head", metavar="REV", help="The revision to review (default: the working tree, uncommitted edits included).")
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text", show_default=True, help="text for a terminal, markdown for a pull-request comment, json for scripts.")
@click.option("--fail-on", "fail_on", multiple=True, metavar="POLICY", help="Exit 1 when met: error, any, tokens:+P%, dropped, context-left:ID, tool-removed, cache-prefix:N (repeatable).")
@click.option("--runs", type=click.IntRange(min=0), default=0, metavar="N", help="Also plan the inputs of the newest N recorded runs of each target, as examples run:<id>.")
@click.option("--output", type=click.Path(dir_okay=False, writable=True), metavar="FILE", help="Write the review to FILE instead of standard output.")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=10.0, show_default=True, metavar="SECONDS", help=TIMEOUT_HELP)
def diff(directory: str, base: str, head: str | None, fmt: str, fail_on: tuple[str, ...], runs: int, output: str | None, timeout: float) -> None:
    """Review what the changes between two git revisions do to every request (no model is called).

    Each prompt and agent is planned with each example at BASE (default HEAD) and at HEAD (default:
    the working tree), in isolated workers as `check` does, and every difference in the request is
    listed with the context and the file:line that caused it, the cacheable prefix, and the cost.
    """
    from .review.policies import PolicyError, met, parse
    from .review.render import render_markdown, render_text
    from .inspector.diff_redact import RedactError
    from .review.revisions import RevisionError

    root = Path(directory)
    if not root.is_dir():
        raise UsageFault(f"project folder {directory!r} does not exist or is not a folder")
    try:
        policies = [parse(p) for p in fail_on]
    except PolicyError as exc:
        raise UsageFault(str(exc)) from None
    try:
        document = asyncio.run(build_review(root.resolve(), base, head, timeout=timeout, runs=runs))
    except (RevisionError, RedactError) as exc:
        raise UsageFault(str(exc)) from None
    if fmt == "json":
        text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    elif fmt == "markdown":
        text = render_markdown(document)
    else:
        text = render_text(document) + "\n"
    if output:
        Path(output).write_text(text, encoding="utf-8")
    else:
        click.echo(text, nl=False)
    reasons = [f"--fail-on {p.text}: {line}" for p in policies for line in met(p, document)]
    for line in reasons:
        click.echo(line, err=True)
    if reasons:
        click.get_current_context().exit(1)
