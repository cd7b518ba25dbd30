"""``crux-devtools tui``: the inspector as a Textual app.

Its worker's interpreter is started before this module is imported, at the top of the CLI package
(``inspector/transport/early_start.py``); the pool adopts it.
"""

from __future__ import annotations

import click

from .common import project


@click.command("tui")
@click.argument("directory", default=".", type=click.Path(file_okay=False))
def tui(directory: str) -> None:
    """The same inspector as a Textual app in the terminal."""
    from ..tui.launch import run_tui

    run_tui(project(directory))
