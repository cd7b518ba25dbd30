"""A summary that cannot make the request fit is never suggested: when nothing fits even with a
summary of no tokens (REQUEST_TOO_LARGE), no view offers to prepare it (real session, real worker)."""

from __future__ import annotations

from pathlib import Path

import httpx

from crux_devtools.inspector.session.service import ProjectSession
from crux_devtools.web.app import create_app
from crux_devtools.inspector.transport.inprocess import in_process

PROJECT = '''
from crux_devtools import ModelCapacityProfile, ScriptedModel, context, prompt, summarizable, summarize

LOG = "\\n".join(f"12:{i:02d} INFO request {i} ok" for i in range(600))
MANUAL = " ".join(f"Step {i}: check cable {i} and restart router {i}." for i in range(SIZE))
log = summarizable(context("log", system=LOG), model=ScriptedModel(["short"]), strategy=summarize.hierarchical())
ask = prompt("ask", system="You help.", use=[context("manual", system=MANUAL), log],
             model=ModelCapacityProfile(4_000, 100, "exact"), examples={"default": {}})
'''


async def planned(root: Path, size: int) -> tuple[dict, str]:
    (root / "app.py").write_text(PROJECT.replace("SIZE", str(size)))
    async with ProjectSession(root, transport=in_process, watch=False, history=False, prewarm=False) as session:
        app = create_app(session, manage_session=False)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:4400") as client:
            page = (await client.get("/prompts/ask")).text
        example = next(p for p in session.report["prompts"] if p["id"] == "ask")["examples"][0]  # type: ignore[index]
    return example, page


async def test_a_summary_that_could_make_it_fit_is_offered_and_one_that_cannot_is_not(tmp_path: Path) -> None:
    fits_with_it, page = await planned(tmp_path, 10)  # the manual is small: a summary of the log could fit
    assert fits_with_it["preview"]["error_code"] == "REPRESENTATION_UNAVAILABLE", fits_with_it["preview"]["warnings"]
    assert fits_with_it["summaries"][0]["state"] == "generate-prepares" and "Prepare summary…" in page

    hopeless, page = await planned(tmp_path, 400)  # the required manual alone is over max
    assert hopeless["preview"]["error_code"] == "REQUEST_TOO_LARGE"
    assert hopeless["summaries"][0]["state"] == "cannot-fit"
    assert "Prepare summary…" not in page and "generate</code> prepares the summary" not in page
