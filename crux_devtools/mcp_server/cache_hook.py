"""The ``cache`` tool's hook: ``crux-devtools cache --format json``, when the command exists.

The tool is registered only when the ``crux-devtools`` group has a ``cache`` command
(``cache_command_exists``). Its answer is that command's own document: from its function
``cli_cache.cache_document(root, timeout, target, runs, model)`` when the module has one, else
the command's ``--format json`` output, run as the command line runs it (a child process).
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .tools import ProjectTools


def cache_command_exists() -> bool:
    from ..cli import main

    return "cache" in main.commands


async def cache_document(tools: ProjectTools, target: str | None) -> dict[str, Any]:
    import importlib

    import click

    from .tools import ToolFault

    if not cache_command_exists():
        raise ToolFault("this version of crux-devtools has no `cache` command")
    try:  # the command's own document function, where it has one (crux_devtools/cli_cache.py)
        build = getattr(importlib.import_module("crux_devtools.cli_cache"), "cache_document", None)
    except ImportError:
        build = None
    if build is not None:
        try:
            document = await build(tools.root, tools.timeout, target, 0, None)
        except click.ClickException as exc:
            raise ToolFault(exc.message) from None
        return dict(document)
    args = ["cache", str(tools.root), "--format", "json", *(["--target", target] if target else [])]
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "from crux_devtools.cli import main; main()", *args,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    out, err = await child.communicate()
    try:
        document = json.loads(out)
    except json.JSONDecodeError:
        lines = err.decode("utf-8", "replace").strip().splitlines()
        raise ToolFault(lines[-1] if lines else f"crux-devtools cache exited {child.returncode}") from None
    return document if isinstance(document, dict) else {"document": document}
