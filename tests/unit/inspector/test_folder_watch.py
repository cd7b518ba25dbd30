"""The look for a removed project folder (``folder_watch.FolderWatch``), with no watch running: a stat
with a growing pause, and one load asked for once it is back. The process test
(tests/functional/tui/test_tui_folder_removed.py) removes and restores the folder of a live session."""

from __future__ import annotations

import asyncio
from pathlib import Path

from waits import WAIT, until_async

from crux_devtools.inspector.session.folder_watch import FolderWatch


async def test_a_removed_folder_is_looked_for_until_it_is_back_then_one_load_is_asked_for(tmp_path: Path) -> None:
    root = tmp_path / "checkout"
    reloads: list[str] = []
    back = asyncio.Event()

    def reload() -> None:
        reloads.append("reload")
        back.set()

    folder = FolderWatch(root, 0.05, lambda files: None, lambda relative: False, reload, lambda exc: None)
    folder.look_for_folder()
    assert folder.missing and not folder.started
    await until_async(lambda: folder.checks >= 2, "the folder was looked for twice")
    assert reloads == []  # never reloaded while it is gone
    root.mkdir()
    await asyncio.wait_for(back.wait(), WAIT)
    assert reloads == ["reload"] and not folder.missing and not folder.started  # nothing was watched: nothing to watch again
    await folder.close()

