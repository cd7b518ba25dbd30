"""Children that a test stops with SIGINT, as Ctrl-C would.

A shell starts a background job (``pytest ... &``, or two suites at once) with SIGINT ignored, and
every process it starts inherits that: Python then leaves SIGINT ignored (it installs its Ctrl-C
handler only where SIGINT is not ignored), so a SIGINT a test sends to ``runs --follow`` or
``serve`` is lost and the test waits for an exit that never comes. ``Popen(..., **INTERRUPTIBLE)``
gives the child SIGINT's default action back before it starts, as a terminal's foreground job has.
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any


def _sigint_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


INTERRUPTIBLE: dict[str, Any] = {"preexec_fn": _sigint_default}


def ignores_sigint(pid: int) -> bool:
    """Whether process ``pid`` ignores SIGINT (Linux: its ``SigIgn`` mask in ``/proc``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigIgn:"):
            return bool(int(line.split()[1], 16) & (1 << (signal.SIGINT - 1)))
    return False
