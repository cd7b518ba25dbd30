"""``crux-devtools replay``: plan a recorded step again, as it was or with one thing changed.

Heavy modules (the planner, the change engine) are imported inside the command, never at import.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click


def _project(directory: str) -> Path:
    path = Path(directory).resolve()
    if not path.is_dir():
        raise click.ClickException(f"project folder {directory!r} does not exist or is not a folder")
    return path


def model_profile(root: Path, name: str) -> Any:
    """The capacity profile named ``name`` in the project's ``[tool.crux-devtools.models.NAME]``."""
    from ..core.plan.budget import ModelCapacityProfile
    from ..inspector.session.discovery import read_model_config

    config, _errors = read_model_config(root)
    models = config.get("models") or {}
    profile = models.get(name)
    if profile is None:
        known = ", ".join(sorted(models)) or "none (add [tool.crux-devtools.models.NAME] with context_window = N to pyproject.toml)"
        raise click.ClickException(f"--model {name!r}: no capacity profile of that name in {root / 'pyproject.toml'}; known: {known}")
    from ..inspector.worker.planning import cache_policy

    return ModelCapacityProfile(profile["context_window"], profile["default_output_reserve"], profile["counting_confidence"], cache_policy(profile))


def option_name(f: Any) -> str:
    """An override's CLI option: ``--`` and its form name with dashes (``--optimize-at``)."""
    from ..core.record.replay_overrides import form_name

    return "--" + form_name(f).replace("_", "-")


def _rungs(f: Any, values: Any) -> tuple[tuple[str, str], ...]:
    from ..core.record.replay import ReplayError, parse_rungs

    try:
        return parse_rungs(values or ())
    except ReplayError as exc:
        raise click.BadParameter(str(exc), param_hint=option_name(f)) from None


# How an override of each kind (``replay_overrides._KINDS``) is an option: its click type, whether it
# repeats, and its value from the option's (a repeated option's values are a tuple, or a list or None
# from the MCP tool). A field of a kind not here has no option: add its line.
_OPTIONS: dict[str, tuple[Any, bool, Any]] = {
    "int | None": (lambda f: click.IntRange(min=f.metadata.get("min")), False, lambda f, v: v),
    "str | None": (lambda f: None, False, lambda f, v: v),
    "tuple[tuple[str, str], ...]": (lambda f: None, True, _rungs),
    "tuple[str, ...]": (lambda f: None, True, lambda f, v: tuple(v or ())),
}


def repeatable(f: Any) -> bool:
    """Whether an override's option repeats (a list: one value each time)."""
    return bool(_OPTIONS[str(f.type)][1])


def override_options(command: Any) -> Any:
    """One option per override of ``Overrides`` (its wire fields, in their order), each named by its
    form name (``option_name``) with its field's ``metavar`` and ``help``; the command receives each
    value under the form name, for ``build_overrides``."""
    from ..core.record.replay_overrides import form_name, wire_fields

    for f in reversed(wire_fields()):  # click lists the options in the order they were written, top down
        kind, multiple, _read = _OPTIONS[str(f.type)]
        command = click.option(option_name(f), form_name(f), type=kind(f), multiple=multiple, metavar=f.metadata["metavar"], help=f.metadata["help"])(command)
    return command


def build_overrides(root: Path, options: Any) -> Any:
    """The ``Overrides`` of the values of ``override_options`` (a mapping of form name to value; one
    left out is its default), with the capacity profile of ``model`` from the project's pyproject."""
    from ..core.record.replay_overrides import Overrides, form_name, wire_fields

    values = {f.name: _OPTIONS[str(f.type)][2](f, options.get(form_name(f))) for f in wire_fields()}
    model = values.get("model")
    return Overrides(**values, profile=model_profile(root, model) if model is not None else None)


def replay_recorded_step(root: Path, run_id: str, step: int, overrides: Any) -> dict[str, Any]:
    """The replay document of step ``step`` of run ``run_id`` planned from its recording."""
    from ..core.record.replay import ReplayError, replay_step
    from ..core.record.runstore import RunStore, RunStoreError
    from ..inspector.features.replay.document import replay_document

    store = RunStore.for_project(root, create=False)
    try:
        run = store.get(run_id)
        replayed = replay_step(store, run_id, step, overrides)
    except (ReplayError, RunStoreError) as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        store.close()
    return replay_document(replayed, run)


@click.command("replay")
@click.argument("directory", default=".", type=click.Path(file_okay=False))
@click.option("--run", "run_id", required=True, metavar="ID", help="The recorded run (its id, as `crux-devtools runs` lists it).")
@click.option("--step", type=click.IntRange(min=0), default=0, show_default=True, metavar="K", help="The step's recorded index.")
@click.option(
    "--source", type=click.Choice(["recorded", "current"]), default="recorded", show_default=True,
    help="recorded: plan from what the step was planned from; current: from the project's source as it is now.",
)
@override_options
@click.option("--brief", is_flag=True, help="Cut long texts of the replayed request to a few lines.")
@click.option("--json", "as_json", is_flag=True, help="Print the replay as JSON: recorded and replayed requests, changes, cache prefix.")
@click.option("--send", is_flag=True, help="Send the replayed request to the run's model and record the answer as a child run.")
@click.option("--yes", is_flag=True, help="With --send or --continue: do not ask before calling a model that is not scripted.")
@click.option("--continue", "continue_", is_flag=True, help="Fork the agent at this step and run on; tool calls are answered from the run's recorded results.")
@click.option("--live-tools", is_flag=True, help="With --continue: run a tool call that was never recorded (else the fork stops there).")
def replay(
    directory: str, run_id: str, step: int, source: str, brief: bool, as_json: bool, send: bool, yes: bool, continue_: bool, live_tools: bool,
    **override_values: Any,
) -> None:
    """Plan step K of a recorded run again and show how the request compares with the one sent.

    With no overrides the replayed request equals the recorded one; each override shows what the
    request would have been with a bigger budget, another model's capacity, another rung, or a
    context left out. No model is called, unless --send.
    """
    from ..core.record.runstore import RunStore, json_text
    from ..inspector.features.replay.document import render_replay
    from ..inspector.features.shown.visible import visible

    def say(text: str) -> None:
        """A line of the text output: recorded texts' escape sequences are shown, never obeyed."""
        click.echo(visible(text, lines=True))

    if send and continue_:
        raise click.UsageError("use either --send (one request) or --continue (the agent runs on), not both")
    if live_tools and not continue_:
        raise click.UsageError("--live-tools goes with --continue")
    root = _project(directory)
    overrides = build_overrides(root, override_values)
    if source == "current":
        from .replay_current import replay_current_step

        document = replay_current_step(root, run_id, step, overrides)
    else:
        document = replay_recorded_step(root, run_id, step, overrides)
    if send or continue_:
        store = RunStore.for_project(root, create=False)
        try:
            run = store.get(run_id) or {}
        finally:
            store.close()
    if continue_:
        from .replay_send import continue_replay
        from ..inspector.features.runs.text import run_summary

        child = continue_replay(root, run, step, overrides, live_tools=live_tools, yes=yes)
        document["continued"] = {"run": child["id"], "status": child["status"], "text": child["text"], "error": child["error"], "steps": len(child["steps"])}
        if as_json:
            click.echo(json_text(document, indent=2))
        else:
            say(render_replay(document, brief=brief, request=False))
            say(f"  continued: {child['text']}" if child["text"] is not None else f"  continued: {(child['error'] or {}).get('type')}: {(child['error'] or {}).get('message')}")
            say(f"  recorded as run {child['id']} (child of {run_id}, from step {step}): {run_summary(child)}")
        if child["status"] != "ok":
            click.get_current_context().exit(1)
        return
    if send:
        from .replay_send import send_replay
        from ..inspector.features.runs.text import run_summary

        child = send_replay(root, run, document, yes=yes)
        document["sent"] = {"run": child["id"], "status": child["status"], "text": child["text"], "usage": child["usage"],
                            "latency_ms": child["duration_ms"], "error": child["error"], "step": child["steps"][0] if child["steps"] else None}
    if as_json:
        click.echo(json_text(document, indent=2))
    else:
        say(render_replay(document, brief=brief, request=not send))
        if send:
            sent = document["sent"]
            answer = sent["text"] if sent["text"] is not None else f"tool calls: {', '.join(c['name'] for c in sent['step']['tool_calls']) or 'none'}"
            say(f"  sent: {answer}" if sent["error"] is None else f"  sent: {sent['error']['type']}: {sent['error']['message']}")
            say(f"  recorded as run {sent['run']} (child of {run_id}, step {step}): {run_summary(child)}")
    if send and document["sent"]["status"] != "ok":
        click.get_current_context().exit(1)


__all__ = ["replay"]
