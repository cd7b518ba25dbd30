"""Change review in the inspector: ``GET /diff`` (httpx against the ASGI app) and the TUI Diff screen
(a Textual pilot), both over a real ProjectSession of a git project built here, its workers (those
of the base revision's evaluation too: ``cli_in_process.in_process_pools``) in-process."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from cli_in_process import in_process_pools
from diff_helpers import commit_all, make_project

from crux_devtools.inspector.session.service import ProjectSession
from crux_devtools.inspector.transport.inprocess import in_process
from crux_devtools.tui.app import make_tui
from crux_devtools.tui.screens.diff import DiffScreen, live_diff
from crux_devtools.web.app import create_app


@pytest.fixture(autouse=True)
def in_process_base_evaluations() -> Any:
    with in_process_pools():
        yield


async def until(check: Callable[[], Awaitable[bool]] | Callable[[], bool], what: str, deadline: float = 60.0) -> None:
    """Poll ``check`` until it holds; the deadline only bounds a failure."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        result = check()
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def add_rule(root: Path) -> None:
    shared = root / "shared.py"
    shared.write_text(shared.read_text().replace("- Be kind.", "- Be kind.\\n- Say <b>which</b> order."))


async def test_the_diff_page_shows_the_working_tree_against_head_and_caches_the_base(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    async with ProjectSession(root, transport=in_process, watch=False, history=False, prewarm=False) as session:
        app = create_app(session, manage_session=False)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:4400") as client:
            page = (await client.get("/")).text
            assert 'href="/diff"' in page  # linked from the list page's header
            clean = await client.get("/diff")
            assert clean.status_code == 200 and "no prompt changes" in clean.text
            add_rule(root)
            await session.reload(["shared.py"])
            changed = await client.get("/diff?base=HEAD")
            text = changed.text
            assert "4 of 4 examples changed" in text, text
            assert 'data-prompt="reply"' in text and 'data-prompt="triage"' in text
            assert "context house-rules changed" in text and "(edited at shared.py:12)" in text and "broken by house-rules" in text
            assert "<b>which</b>" not in text
            # the text change's diff is under its line, escaped
            assert '<span class="dl dl-add">+- Say &lt;b&gt;which&lt;/b&gt; order.</span>' in text
            assert '<span class="dl dl-same"> - Be kind.</span>' in text
            # an htmx refetch gets the block only; the base was evaluated once for both requests
            block = await client.get("/diff?base=HEAD", headers={"HX-Request": "true"})
            assert block.text.lstrip().startswith('<div id="review"') and "<html" not in block.text
            assert app.state.live_diff.base_evaluations == 1
            # the list page's header loads a line saying how many prompts differ, linking here
            assert 'hx-get="/diff/summary"' in page
            badge = (await client.get("/diff/summary")).text
            assert 'data-changed="3"' in badge and "3 prompts differ from HEAD" in badge and 'href="/diff?base=HEAD"' in badge
            # it names the changed prompts, for the marks on their rows; each has an anchor on /diff
            ids = json.loads(re.search(r"data-ids='([^']*)'", badge).group(1))  # type: ignore[union-attr]
            assert len(ids) == 3 and "reply" in ids and "triage" in ids
            assert all(text.count(f'id="diff-{pid}"') == 1 for pid in ids)
            unknown = await client.get("/diff?base=no-such-rev")
            assert unknown.status_code == 200 and "unknown revision &#39;no-such-rev&#39;" in unknown.text


async def test_the_tui_diff_screen_updates_when_a_save_is_reported(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    session = ProjectSession(root, transport=in_process, watch=True, history=False, prewarm=False)
    app = make_tui(session)

    def body() -> str:
        return "\n".join(strip.text for strip in app.screen._compositor.render_strips())

    async with app.run_test(size=(150, 40)) as pilot:
        await until(lambda: session.report is not None, "the first report")
        await pilot.press("d")
        await until(lambda: isinstance(app.screen, DiffScreen) and app.screen.computed >= 1, "the first review")
        await pilot.pause(0.1)
        assert "no prompt changes" in body()
        screen: Any = app.screen
        shown = screen.computed
        add_rule(root)  # saved: the session's watcher reloads and the screen recomputes
        await until(lambda: screen.computed > shown and "house-rules" in body(), "the review after the save")
        text = body()
        assert "reply" in text and "triage" in text and "broken by house-rules" in text
        assert "(edited at shared.py:12)" in text and "+- Say <b>which</b> order." in text  # the text diff, as plain text
        assert live_diff(session).base_evaluations == 1
        # B edits the base revision; an unknown one is said in one line
        shown = screen.computed
        await pilot.press("B", "ctrl+u", *"no-such-rev", "enter")
        await until(lambda: screen.computed > shown, "the review against the new base")
        assert "Cannot compare: unknown revision 'no-such-rev'" in body()
        await pilot.press("escape")
        assert not isinstance(app.screen, DiffScreen)


async def test_the_diff_page_masks_what_the_projects_redact_hook_masks(tmp_path: Path) -> None:
    from diff_helpers import commit_all
    from test_diff_cli import HUSH, SECRET

    root = make_project(tmp_path)
    echo = "from crux_devtools import prompt\n\n\ndef text(i):\n    MARK\n    return 'hi'\n\n\necho = prompt('echo', system='Echo.', prompt=text, examples={'ex': {}})\n"
    (root / "echo.py").write_text(echo.replace("MARK", "pass"))
    (root / "hush.py").write_text(HUSH)
    pyproject = root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('default_model = "house-model"', 'default_model = "house-model"\nredact = "hush:redact"'))
    commit_all(root, "a prompt, and the redact hook")
    async with ProjectSession(root, transport=in_process, watch=False, history=False, prewarm=False) as session:
        app = create_app(session, manage_session=False)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:4400") as client:
            (root / "echo.py").write_text(echo.replace("MARK", f"raise ValueError('the key {SECRET} is refused')"))
            await session.reload(["echo.py"])
            page = (await client.get("/diff")).text
            assert SECRET not in page and "the key " + "*" * len(SECRET) + " is refused" in page, page
            # a hook that fails shows nothing of the review, and says why in one line
            (root / "hush.py").write_text(HUSH.replace("return _walk(run)", "raise RuntimeError('hook broke')"))
            add_rule(root)
            await session.reload(["shared.py"])
            page = (await client.get("/diff")).text
            assert SECRET not in page and "redact hook hush:redact failed: RuntimeError: hook broke" in page


async def test_one_changed_prompt_is_said_in_the_singular_and_unpriced_is_said_once(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    (root / "pyproject.toml").write_text("[tool.crux-devtools]\n")  # no model with a price
    commit_all(root, "unpriced")
    reply = root / "reply.py"
    reply.write_text(reply.read_text().replace('system="You are Ari."', 'system="You are Ari, of the shop."'))
    async with ProjectSession(root, transport=in_process, watch=False, history=False, prewarm=False) as session:
        app = create_app(session, manage_session=False)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:4400") as client:
            badge = (await client.get("/diff/summary")).text
            assert "1 prompt differs from HEAD" in badge and "1 prompt differ " not in badge
            page = (await client.get("/diff")).text
            assert "2 of 4 examples changed in 1 of 3 prompts" in page
            assert page.count("unpriced") == page.count("costs are unpriced") == 1 and "Δ $ / 1,000 calls" not in page
