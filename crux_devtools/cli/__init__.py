"""The ``crux-devtools`` command line: the group and its table of commands, one module each.

``COMMANDS`` names each command's module and its short help; a command's module is imported only
when that command runs (``--help`` reads the table alone), and heavy modules are imported inside
commands, never at import. A new command is its module plus one line here.
"""

from __future__ import annotations

import sys

from ..inspector.transport.early_start import start_for

start_for(sys.argv)  # ``tui``: its worker starts warming up before the imports below (early_start.py)

import importlib  # noqa: E402
from typing import NamedTuple  # noqa: E402

import click  # noqa: E402


class Entry(NamedTuple):
    """One command of the table: where it is (``module:attribute``, relative to this package) and its
    short help for ``--help`` (the first sentence of its docstring: a test keeps them equal)."""

    target: str
    short_help: str


COMMANDS: dict[str, Entry] = {
    "cache": Entry("cache:cache", "Classify each block of every request as static, per-input or per-request, and say what the provider's prompt cache can read, what breaks it, the use order that would make it longest, and what caching costs per model profile."),
    "check": Entry("check:check", "Resolve and plan every prompt with every example; exit 1 on any error."),
    "diff": Entry("diff:diff", "Review what the changes between two git revisions do to every request (no model is called)."),
    "inspect": Entry("inspect:inspect", "Print the request each example sends, for the project in DIRECTORY (default: the current folder), and exit: 1 when anything printed failed (a load error, an example that fails, a plan over its limit)."),
    "mcp": Entry("mcp:mcp", "Answer a coding agent over MCP (stdio): what each prompt sends, why, and what an edit changed."),
    "replay": Entry("replay:replay", "Plan step K of a recorded run again and show how the request compares with the one sent."),
    "run": Entry("run:run_command", "Run one agent (or a prompt with a model) with one example, in the worker, and record it."),
    "runs": Entry("runs:runs", "List, export or count the runs recorded in DIRECTORY/.crux/runs.sqlite3."),
    "serve": Entry("serve:serve", "Web inspector for the project in DIRECTORY, live as you save."),
    "tui": Entry("tui:tui", "The same inspector as a Textual app in the terminal."),
}


class LazyGroup(click.Group):
    """A group whose commands come from a table of ``name -> Entry``: a command's module is imported
    the first time that command is asked for, and the list of commands (``--help``) is the table's."""

    def __init__(self, *args: object, table: dict[str, Entry], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.table = table

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.table})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.table:
            module, _, attribute = self.table[cmd_name].target.partition(":")
            command = getattr(importlib.import_module(f"{__name__}.{module}"), attribute)
            if not isinstance(command, click.Command) or command.name != cmd_name:
                raise RuntimeError(f"{__name__}.{self.table[cmd_name].target} is not the click command {cmd_name!r}")
            self.add_command(command)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands and their short help, from the table: no command module is imported."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            # a command not imported yet is described by a stand-in holding its table line
            shown = self.commands.get(name) or click.Command(name, help=self.table[name].short_help)
            rows.append((name, shown.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, table=COMMANDS)
@click.version_option(package_name="crux-devtools")
def main() -> None:
    """Inspect what your prompts really send to a model."""
