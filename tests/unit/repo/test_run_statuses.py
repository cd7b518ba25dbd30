"""How a run ended is one vocabulary, the store's ``RunStatus``: every filter (the CLI's ``--status``,
the MCP ``runs`` tool, the web's ``/runs``) and every look table (the TUI, the web chips) reads it."""

from __future__ import annotations

from typing import get_args

import click

from crux_devtools.core.record.runstore import RUN_STATUSES, RunStatus


def test_the_statuses_are_the_literals_values() -> None:
    assert RUN_STATUSES == get_args(RunStatus) == ("ok", "error", "max_steps")


def test_every_runs_subcommand_filters_by_the_stores_statuses() -> None:
    from crux_devtools.cli.runs import runs

    ctx = click.Context(runs)
    for name in runs.list_commands(ctx):
        command = runs.get_command(ctx, name)
        assert command is not None
        [status] = [p for p in command.params if p.name == "status"]
        assert isinstance(status.type, click.Choice) and tuple(status.type.choices) == RUN_STATUSES, name


def test_each_front_end_has_a_look_for_every_status() -> None:
    from crux_devtools.tui.runs_render import STATUS_LOOK
    from crux_devtools.web.views import runs as web_runs

    assert set(STATUS_LOOK) == set(RUN_STATUSES)
    assert tuple(web_runs.STATUSES) == RUN_STATUSES and set(web_runs._CHIPS) == set(RUN_STATUSES)
