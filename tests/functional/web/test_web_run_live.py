"""A run being recorded, on the inspector's run page (real ``ProjectSession``, real uvicorn on
127.0.0.1): ``/runs/{id}`` shows the streaming step, each piece of text reaches the page's
fragment after a ``run`` event on ``/events``, and once the run is written the fragment asks for a
reload and the page shows the finished step with its time to first token and tokens per second."""

from __future__ import annotations

import shutil
from pathlib import Path

import httpx
from streamed_run import PacedRun
from test_web_sse import read_event
from waits import WAIT
from web_conftest_helpers import live_server

from crux_devtools.core.record.live import figures_text
from crux_devtools.web.app import create_app

REPO = Path(__file__).resolve().parents[3]


def sample(tmp_path: Path) -> Path:
    project = tmp_path / "sample"
    shutil.copytree(REPO / "sample_project", project, ignore=shutil.ignore_patterns("data", "__pycache__", ".crux"))
    return project


async def test_an_open_run_page_gets_each_piece_of_a_streaming_step_then_the_finished_run(tmp_path: Path) -> None:
    from crux_devtools.inspector.session.service import ProjectSession

    project = sample(tmp_path)
    with live_server(create_app(ProjectSession(project, history=False))) as server:
        async with httpx.AsyncClient(base_url=server.url, timeout=WAIT) as client:
            async with client.stream("GET", "/events") as events:
                lines = events.aiter_lines()
                await read_event(lines, "hello")
                paced = PacedRun(project)
                run_id = paced.start()
                page = await client.get(f"/runs/{run_id}")
                assert page.status_code == 200 and 'id="run-live"' in page.text and "waiting for the first token" in page.text
                assert "live-demo" in page.text and "running" in page.text
                line = await client.get("/live-runs")  # /runs links to it while it is recorded
                assert f'href="/runs/{run_id}"' in line.text and "live-demo" in line.text
                for i in range(3):
                    paced.release(i)
                    while True:  # each run event, until the fragment holds piece i
                        event = await read_event(lines, "run")
                        fragment = await client.get(f"/runs/{run_id}/live")
                        if paced.shown(i) in fragment.text:
                            break
                    assert run_id in event["runs"]
                    assert "first token" in fragment.text and 'data-state="live"' in fragment.text
                    if i < 2:
                        assert paced.shown(i + 1) not in fragment.text  # it grows as the pieces come, not at the end
                result = paced.finish()
                await read_event(lines, "runs")
            done = await client.get(f"/runs/{run_id}/live", headers={"HX-Request": "true"})
            assert done.headers.get("hx-refresh") == "true"
            finished = await client.get(f"/runs/{run_id}")
            assert 'id="run-live"' not in finished.text and "step-stream" in finished.text
            ttft = result.steps[0].stream["first_token_ms"]
            assert figures_text(ttft, result.steps[0].latency_ms, None) in finished.text
            assert 'class="run-live-link"' not in (await client.get("/live-runs")).text
            gone = await client.get("/runs/0-nosuchrun/live")
            assert 'data-state="gone"' in gone.text
