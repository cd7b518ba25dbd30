"""The session's one ``HeadWatcher``: a commit, a branch checkout and a commit in a linked work tree
each reach every subscriber (the web list and the TUI subscribe to the same watcher) with the sha HEAD
names, and the watch stops with its last subscriber. Real git repositories, real inotify watches."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[2]))

from diff_helpers import commit_all, git, make_project  # noqa: E402
from waits import WAIT  # noqa: E402

from crux_devtools.inspector.session.head_watch import HeadWatcher, head_watcher  # noqa: E402


class Root:
    def __init__(self, root: Path) -> None:
        self.root = root


async def next_sha(queue: asyncio.Queue[str]) -> str:
    return await asyncio.wait_for(queue.get(), WAIT)


def head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD").strip()


async def test_a_commit_and_a_checkout_reach_every_subscriber_of_the_one_watcher(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    session = Root(root)
    watcher = head_watcher(session)
    assert head_watcher(session) is watcher  # both front ends get the same one
    web: asyncio.Queue[str] = asyncio.Queue()
    tui: asyncio.Queue[str] = asyncio.Queue()
    stop_web = watcher.subscribe(web.put_nowait)
    stop_tui = watcher.subscribe(tui.put_nowait)
    await asyncio.wait_for(watcher.ready.wait(), WAIT)
    assert watcher.sha == head(root)
    git(root, "branch", "side")
    (root / "other.py").write_text((root / "other.py").read_text() + "\n# more\n")
    commit_all(root, "second")
    assert await next_sha(web) == await next_sha(tui) == head(root)
    git(root, "checkout", "-q", "side")  # HEAD names another branch: a different commit
    assert await next_sha(web) == await next_sha(tui) == head(root)
    stop_web()
    stop_tui()
    assert watcher._task is None  # the last subscriber gone: nothing is watched


async def test_a_commit_in_a_linked_work_tree_moves_its_head(tmp_path: Path) -> None:
    main = make_project(tmp_path)
    linked = tmp_path / "linked"
    git(main, "worktree", "add", "-q", str(linked), "-b", "topic")
    watcher = HeadWatcher(linked)  # its .git is a file; HEAD lives under the main repository's .git/worktrees
    moves: asyncio.Queue[str] = asyncio.Queue()
    stop = watcher.subscribe(moves.put_nowait)
    try:
        await asyncio.wait_for(watcher.ready.wait(), WAIT)
        (linked / "other.py").write_text((linked / "other.py").read_text() + "\n# topic\n")
        commit_all(linked, "on topic")
        assert await next_sha(moves) == head(linked) != head(main)
    finally:
        stop()


async def test_outside_a_git_work_tree_nothing_is_watched(tmp_path: Path) -> None:
    watcher = HeadWatcher(tmp_path)
    stop = watcher.subscribe(lambda sha: None)
    await asyncio.wait_for(watcher.ready.wait(), WAIT)
    assert watcher.sha is None
    stop()
