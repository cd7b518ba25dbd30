"""A tool that raises: the run views say where in the user's code, up front, as ``crux-devtools run``
prints it. One run recorded by the real CLI (in this process with an in-process worker,
``cli_in_process``; a real store), then shown by the web page
(``/runs/{id}`` through httpx on the app, a real session) and the TUI's run detail (a Pilot over
a real session); all three name the same ``shop.py:LINE``, from the one ``user_frame``."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path
from typing import Any

import httpx
import pytest
from cli_in_process import cli

from test_cli_run_errors import RAISES  # noqa: E402
from waits import pilot_until  # noqa: E402

from crux_devtools.inspector.session.service import ProjectSession  # noqa: E402
from crux_devtools.tui.app import make_tui  # noqa: E402
from crux_devtools.web.app import create_app  # noqa: E402
from crux_devtools.inspector.transport.inprocess import in_process  # noqa: E402

RAISE = 'raise RuntimeError("the catalog service is down")'


@pytest.fixture
def recorded_failure(tmp_path: Path) -> tuple[str, str]:
    """The id of the run the CLI recorded in ``tmp_path``, and the location it printed first (a fixture:
    the command runs its own event loop, outside the test's)."""
    (tmp_path / "shop.py").write_text(textwrap.dedent(RAISES))
    done = cli("run", str(tmp_path), "--prompt", "bot", "--json")
    assert done.returncode == 1, done.stderr
    run = json.loads(done.stdout)
    assert run["recorded"] and run["status"] == "error", run
    site = done.stderr.splitlines()[0].split(": ")[0]
    line = next(n for n, text in enumerate(textwrap.dedent(RAISES).splitlines(), 1) if RAISE in text)
    assert site == f"shop.py:{line}"
    return run["id"], site


async def test_the_run_page_names_the_users_line_in_its_error_block(tmp_path: Path, recorded_failure: tuple[str, str]) -> None:
    run_id, site = recorded_failure
    async with ProjectSession(tmp_path, transport=in_process, watch=False, history=False, prewarm=False) as session:
        app = create_app(session, manage_session=False)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:4400") as client:
            page = await client.get(f"/runs/{run_id}")
    assert page.status_code == 200, page.text
    block = re.search(r'<section class="error-block[^"]*" id="run-error".*?</section>', page.text, re.S)
    assert block is not None, page.text
    file, line = site.split(":")
    assert f'<a class="mono loc" href="/source?file={file}&amp;line={line}">{site}</a>' in block.group(0)
    assert "the catalog service is down" in block.group(0)


def screen_text(app: Any) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def test_the_tui_run_detail_names_the_users_line_before_the_error(tmp_path: Path, recorded_failure: tuple[str, str]) -> None:
    from test_tui_runs import open_runs_tab

    from crux_devtools.tui.screens import RunDetailScreen

    run_id, site = recorded_failure
    session = ProjectSession(tmp_path, transport=in_process, watch=False, history=False, prewarm=False)
    app = make_tui(session)
    async with app.run_test(size=(160, 60)) as pilot:
        await pilot_until(pilot, lambda: session.report is not None and app.screen.query("PromptTree"), "the first report is shown")
        await open_runs_tab(pilot)
        await pilot_until(pilot, lambda: run_id[:6] in screen_text(app), "the recorded run is listed")
        await pilot.press("enter")
        await pilot_until(pilot, lambda: isinstance(app.screen, RunDetailScreen), "the run's detail opens")
        await pilot_until(pilot, lambda: f"{site}: RuntimeError: " in screen_text(app), f"{site} is shown before the error", )
