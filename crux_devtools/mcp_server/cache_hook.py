"""The ``cache`` tool's hook: ``crux-devtools cache --format json``, when the command exists.

The tool is registered only when the ``crux-devtools`` group has a ``cache`` command
(``cache_command_exists``); its answer is that command's own JSON, run as the command line runs it
(a child process: the command starts its own event loop and workers), so the document is the CLI's.
When the command gains an importable document function, call it here instead of the child.
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
    from .tools import ToolFault

    if not cache_command_exists():
        raise ToolFault("this version of crux-devtools has no `cache` command")
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
