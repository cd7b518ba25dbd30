"""The reaper: kills the workers' process groups when the inspector's process dies in any way.

Workers die with the inspector (``PR_SET_PDEATHSIG``), and the inspector kills a worker's process
group whenever it ends one. But when the inspector itself is killed (SIGKILL, SIGHUP from a closed
terminal, SIGTERM of ``check``) nothing of it runs: a child that user code started at import lives
on in the dead worker's group. So the first worker starts a tiny process, outside every group and
session of the inspector, that reads the worker groups from a pipe (``+PGID`` while a group is in
use, ``-PGID`` once the inspector ended it itself). The inspector holds the pipe's only write end;
when it dies, the kernel closes it, the reaper reads end-of-file, kills every group still listed,
and exits. One reaper serves the whole process; it costs one small interpreter and nothing per job.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading

# The reaper's whole program: standard library only, started with -I -S so it is up in milliseconds.
REAPER = r"""
import os, signal
for name in ("SIGHUP", "SIGINT", "SIGTERM", "SIGPIPE", "SIGQUIT"):
    signal.signal(getattr(signal, name), signal.SIG_IGN)
groups, pending = set(), b""
while True:
    try:
        chunk = os.read(0, 4096)
    except InterruptedError:
        continue
    if not chunk:
        break
    pending += chunk
    *lines, pending = pending.split(b"\n")
    for line in lines:
        if line[:1] == b"+":
            groups.add(int(line[1:]))
        elif line[:1] == b"-":
            groups.discard(int(line[1:]))
for group in groups:
    try:
        os.killpg(group, signal.SIGKILL)
    except OSError:
        pass
"""

_lock = threading.Lock()
_reaper: subprocess.Popen[bytes] | None = None
_owner = 0  # the pid that started the reaper: a forked child of the inspector has none


def _send(line: str) -> None:
    global _reaper, _owner
    with _lock:
        if _reaper is None or _owner != os.getpid() or _reaper.poll() is not None:
            if not line.startswith("+"):
                return  # nothing to forget in a reaper that is not there
            try:
                _reaper = subprocess.Popen(
                    [sys.executable, "-I", "-S", "-c", REAPER],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,  # no terminal signal, no group kill of ours reaches it
                    close_fds=True,
                )
            except OSError:
                _reaper = None
                return  # the workers still die with us; only their children may not
            _owner = os.getpid()
        assert _reaper.stdin is not None
        with contextlib.suppress(OSError, ValueError):
            _reaper.stdin.write(f"{line}\n".encode())
            _reaper.stdin.flush()


def watch(group: int) -> None:
    """Kill process group ``group`` if this process dies before it calls ``forget(group)``."""
    _send(f"+{group}")


def forget(group: int) -> None:
    """``group`` was killed (or ended) by this process: the reaper no longer needs to."""
    _send(f"-{group}")


def reaper_pid() -> int | None:
    """The reaper's pid while it runs (for tests and diagnostics)."""
    with _lock:
        return _reaper.pid if _reaper is not None and _reaper.poll() is None and _owner == os.getpid() else None
