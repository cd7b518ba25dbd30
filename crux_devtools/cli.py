"""The ``crux-devtools`` command line (placeholder until the inspector lands)."""

from __future__ import annotations

import click


@click.group()
@click.version_option(package_name="crux-devtools")
def main() -> None:
    """Inspect what your prompts really send to a model."""
