"""Stopping what a benchmark ran in tmux: the TUI in the pane and every process it started.

``tmux kill-server`` hangs up the pane's shell, but a process started in its own session (the TUI's
fork server and workers) does not get that hang-up; ``stop`` kills the pane's whole process tree
first, then the server. Imported by the ``bench_tui*`` scripts (this file is no benchmark itself).
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])  # the field after the state
        tree.setdefault(parent, []).append(int(entry.name))
    return tree


def descendants(pid: int) -> list[int]:
    """``pid`` and every process under it (read from /proc)."""
    tree, out, todo = _children(), [], [pid]
    while todo:
        current = todo.pop()
        out.append(current)
        todo.extend(tree.get(current, []))
    return out


def stop(socket: str) -> None:
    """Kill every process of every pane of the tmux server on ``socket``, then the server."""
    listed = subprocess.run(["tmux", "-L", socket, "list-panes", "-a", "-F", "#{pane_pid}"], capture_output=True, text=True, check=False).stdout
    victims = [p for line in listed.split() if line.isdigit() for p in descendants(int(line))]
    for pid in victims:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True, check=False)
