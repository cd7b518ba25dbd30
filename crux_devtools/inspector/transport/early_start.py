"""The fork server's interpreter, started before the command line's own imports for ``crux-devtools tui``.

The TUI's first report waits for the fork server's warm-up (the library, pydantic and the token
table: about a quarter of a second of CPU). The CLI module imports asyncio and click before any
command runs (about 50 ms), so ``start_for(argv)``, called at the top of ``cli.py``, starts that
interpreter first, with the standard library's ``subprocess`` alone, when the command is ``tui``
on a folder. Once the event loop runs, the pool's fork server takes it over (``take``) instead of
starting its own. Nothing here imports asyncio or the rest of the inspector.

It also says how every worker interpreter is started (``worker_command``, ``worker_env``).
"""

from __future__ import annotations

import os
import sys
from typing import Any

_started: tuple[str, Any] | None = None  # (the project folder, its subprocess.Popen)


def worker_command(*extra: str) -> list[str]:
    # -P: do not put the project folder first on sys.path at start-up, so a project file named like a
    # library (json.py, pydantic.py) cannot shadow it while the worker warms up.
    return [sys.executable, "-P", "-m", "crux_devtools.inspector.worker.main", *extra]


def worker_env() -> dict[str, str]:
    # No .pyc files: a file saved twice within one second with the same size would load stale bytecode.
    # The parent's pid lets a starting worker check that its parent is still alive (see die_with_parent).
    return {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1", "CRUX_DEVTOOLS_PARENT": str(os.getpid())}


def tui_folder(argv: list[str]) -> str | None:
    """The project folder of ``crux-devtools tui [DIRECTORY]`` (``argv`` as in ``sys.argv``; absolute,
    resolved), or ``None`` for any other command line (options, a missing folder: those are the
    CLI's to handle) and any other program (one that imports the CLI module)."""
    program, *args = argv or [""]
    if os.path.basename(program) != "crux-devtools" or args[:1] != ["tui"] or len(args) > 2 or any(a.startswith("-") for a in args[1:]):
        return None
    folder = os.path.realpath(args[1] if len(args) == 2 else ".")
    return folder if os.path.isdir(folder) else None


def start_for(argv: list[str]) -> None:
    """Start the fork server's interpreter now if ``argv`` (as in ``sys.argv``) runs the TUI."""
    global _started
    folder = tui_folder(argv)
    if folder is None or _started is not None:
        return
    import subprocess

    try:
        process = subprocess.Popen(
            worker_command("--zygote"),
            cwd=folder,
            env=worker_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError:
        return  # the pool starts its own, and reports what goes wrong then
    _started = (folder, process)


def take(root: str | os.PathLike[str]) -> Any:
    """The interpreter started early for ``root`` (a ``subprocess.Popen``), once; ``None`` if there is
    none for it. One started for another folder is stopped (the process dies with this one anyway)."""
    global _started
    if _started is None:
        return None
    folder, process = _started
    _started = None
    if folder == os.path.realpath(root) and process.poll() is None:
        return process
    process.kill()
    for pipe in (process.stdin, process.stdout, process.stderr):
        pipe.close()
    process.wait()
    return None
