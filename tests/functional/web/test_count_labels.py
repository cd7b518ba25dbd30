"""One contributor, several token counts on one page, each labelled with what it counts; and the
labels are true: the figures the page shows relate exactly as the labels say (real session, real
worker, the sample project's catalog, sent as its authored index)."""

from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

import httpx

from crux_devtools.inspector.features.shown.count_labels import AS_SENT, FULL_TEXT, WHOLE_REQUEST, WITH_TOOLS
from crux_devtools.inspector.session.service import ProjectSession
from crux_devtools.web.app import create_app
from crux_devtools.inspector.transport.inprocess import in_process

REPO = Path(__file__).resolve().parents[3]


def section(page: str, heading: str) -> str:
    """The text from a heading to the next ``<h3`` or card."""
    start = page.index(heading)
    ends = [i for i in (page.find("<h3", start + len(heading)), page.find('<section', start)) if i != -1]
    return html.unescape(re.sub(r"<[^>]+>", " ", page[start:min(ends) if ends else None]))


async def test_every_token_figure_of_a_contributor_says_what_it_counts_and_they_add_up(tmp_path: Path) -> None:
    project = tmp_path / "sample"
    shutil.copytree(REPO / "sample_project", project, ignore=shutil.ignore_patterns(".crux", "__pycache__"))
    async with ProjectSession(project, transport=in_process, watch=False, history=False, prewarm=False) as session:
        app = create_app(session, manage_session=False)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:4400") as client:
            page = (await client.get("/prompts/ladder-reply?example=big-catalog")).text
        prompt = next(p for p in session.report["prompts"] if p["id"] == "ladder-reply")  # type: ignore[index]
    example = next(e for e in prompt["examples"] if e["name"] == "big-catalog")
    preview = example["preview"]
    resolved = next(p["tokens"] for p in example["inspection"]["parts"] if p["source"] == "catalog")
    sent = next(c["tokens"] for c in preview["contributions"] if c["contributor"] == "catalog")
    adapted = next(a for a in preview["adaptations"] if a["contributor"] == "catalog")
    tool = preview["tool_tokens"]["lookup_sku"]
    # the four figures differ, and by exactly what their labels say
    assert adapted["full_tokens"] == resolved + tool and adapted["selected_tokens"] == sent + tool
    assert len({resolved, sent, adapted["full_tokens"], adapted["selected_tokens"]}) == 4
    # each one is on the page beside its label
    active = section(page, "Active <span")
    assert f"tokens: {FULL_TEXT}" in active and re.search(rf"catalog\s+{resolved}\b", active), active
    changed = section(page, "Adapted by the planner")
    assert f"tokens: {WITH_TOOLS}, full → {AS_SENT}" in changed and f"{adapted['full_tokens']} → {adapted['selected_tokens']} tok" in changed
    bar = section(page, 'aria-label="request tokens"')
    assert f"each part {AS_SENT};" in bar and re.search(rf"catalog\s+{sent}\b", bar), bar
    candidates = section(page, "Candidate rungs")
    assert f"tokens: {WHOLE_REQUEST} with that rung" in candidates
    full_request = next(c["input_tokens"] for c in preview["candidates"] if c["contributor"] == "catalog" and c["representation"] == "full")
    assert str(full_request) in section(page, 'data-contributor="catalog"')
