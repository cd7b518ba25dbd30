"""The TUI's replay planned from today's source (``t``), compared with ``crux-devtools replay --source current``
for the same step and overrides (real session, in-process workers, real Textual pilot; the command
runs in this process too, ``cli_in_process``, in a thread beside the app's event loop)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from cli_in_process import cli_beside_loop
from recorded_sample import newest_run, record_sample
from test_tui_replay import old_and_gone, open_replay, wait_for

from crux_devtools.core.record.runstore import RunStore
from crux_devtools.inspector.session.service import ProjectSession
from crux_devtools.review.render import describe
from crux_devtools.tui.app import make_tui
from crux_devtools.inspector.transport.inprocess import in_process

OLD_RULE = "- Never ask for passwords or full card numbers.\\n"
NEW_RULE = "- Never ask for passwords, card numbers or one-time codes.\\n"


async def cli(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``crux-devtools replay PROJECT ARGS``, run while the app keeps drawing."""
    return await cli_beside_loop("replay", str(project), *args)


def head(app: Any) -> str:
    return str(app.screen.query_one("#replay-head").content)


async def test_t_plans_the_step_from_todays_source_as_the_cli_does(tmp_path: Path) -> None:
    project = record_sample(tmp_path)
    run = newest_run(project)
    session = ProjectSession(project, transport=in_process, history=False, watch=False)
    app = make_tui(session)
    async with app.run_test(size=(200, 60)) as pilot:
        shared = project / "shared.py"
        shared.write_text(shared.read_text().replace(OLD_RULE, NEW_RULE))
        await session.reload()  # what the watcher does on a save
        await open_replay(app, pilot, run)  # step 1, from its recording
        text = await wait_for(app, pilot, "identical to the recorded request")
        assert "plan from: the recording" in head(app) and "one-time codes" not in text
        await pilot.press("t")
        text = await wait_for(app, pilot, "house-rules now says:")
        assert "plan from: today's source" in head(app) and "now: today's source" in text
        assert "one-time codes" in text  # the new text, in the column
        for _ in range(5):
            await pilot.press("minus")  # optimize_at 2800 -> 1400 (the budget the step was planned at), a tenth at a time
        text = await wait_for(app, pilot, "optimize at 1,400")
        document = app.screen.current[1]
        done = await cli(project, "--run", str(run["id"]), "--step", "1", "--source", "current", "--optimize-at", "1400", "--json")
        assert done.returncode == 0, done.stderr
        expected = json.loads(done.stdout)
        assert document["replayed"]["input_tokens"] == expected["replayed"]["input_tokens"]
        assert document["replayed"]["sent"]["system"] == expected["replayed"]["sent"]["system"]
        assert f"{expected['replayed']['input_tokens']:,} input tokens" in text
        assert document["changes"] == expected["changes"] and [describe(c) for c in expected["changes"]]
        assert f"• {describe(expected['changes'][0])[:30]}" in text  # the change, in the column (wrapped there)
        assert "now: today's source, optimize-at=1400" in text
        await pilot.press("t")  # back to the recording: the edit is not seen
        text = await wait_for(app, pilot, "now: optimize-at=1400")
        assert "plan from: the recording" in head(app) and "one-time codes" not in text


async def test_a_run_recorded_before_plan_inputs_and_a_gone_target_say_what_the_cli_says(tmp_path: Path) -> None:
    project, run, old, gone = old_and_gone(tmp_path)
    session = ProjectSession(project, transport=in_process, history=False, watch=False)
    app = make_tui(session)
    async with app.run_test(size=(200, 60)) as pilot:
        await open_replay(app, pilot, old)
        await wait_for(app, pilot, "recorded before plan inputs were kept")
        assert "press t to plan it from today's source" in app.screen.current[2]
        await pilot.press("t")
        await wait_for(app, pilot, "identical to the recorded request")
        expected = json.loads((await cli(project, "--run", "old-run", "--step", "1", "--source", "current", "--json")).stdout)
        assert app.screen.current[1]["replayed"]["sent"] == expected["replayed"]["sent"]
        await pilot.press("escape", "escape")
        await open_replay(app, pilot, gone)
        await pilot.press("t")
        await wait_for(app, pilot, "no longer exists in the source")
        RunStore.for_project(project).write(gone)  # the CLI reads the run from the store
        done = await cli(project, "--run", str(run["id"]), "--step", "1", "--source", "current")
        assert done.returncode == 1
        assert done.stderr.strip() == f"Error: {app.screen.current[2]}"
