"""A run at a glance on ``/runs/{id}``, runs over time on ``/runs``, and context colours by name.

Real ``generate`` runs (ScriptedModel) in a real run store, served by the real app through httpx;
the figures the charts draw are read back from their text equivalents and compared with what the
run recorded.
"""

from __future__ import annotations

import copy
import html
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from web_runs_fakes import Question, RecordingSession, lookup, many_runs, run_record

from crux_devtools import context, prompt
from crux_devtools.inspector.features.runs.series import MAX_POINTS
from crux_devtools.inspector.features.shown.colours import PALETTE, assign_colours
from crux_devtools.web.app import create_app
from crux_devtools.web.views.glance import TABLE_ROWS, TIMELINE_PIECES


@pytest.fixture
def session(tmp_path: Path) -> RecordingSession:
    return RecordingSession(tmp_path, agent_ids=("billing-agent",))


def section(page: str, marker: str, end: str = "</section>") -> str:
    start = page.index(marker)
    return page[start:page.index(end, start)]


def bar_titles(page: str) -> dict[int, str]:
    """Each step bar's title (its figures in words), by step."""
    glance = section(page, 'id="run-glance"')
    return {int(n): html.unescape(t) for n, t in re.findall(r'class="step-bar" data-step="(\d+)"[^>]*><title>([^<]*)</title>', glance)}


def spent(title: str) -> dict[str, int]:
    """``{label: tokens}`` of a bar title ``step 0: 155 input tokens: <prompt> 8 · house-rules 8 ...``."""
    figures = title.split(" input tokens: ", 1)[1]
    return {label: int(n.replace(",", "")) for label, n in (item.rsplit(" ", 1) for item in figures.split(" · "))}


async def test_each_step_bar_adds_up_to_the_input_tokens_its_receipt_recorded(client: httpx.AsyncClient, session: RecordingSession) -> None:
    run = run_record(run_id="agent")
    session.record(run)
    page = (await client.get("/runs/agent")).text
    titles = bar_titles(page)
    assert sorted(titles) == [s["index"] for s in run["steps"]] == [0, 1]
    for step in run["steps"]:
        receipt = step["request"]
        figures = spent(titles[step["index"]])
        assert f"step {step['index']}: {receipt['input_tokens']:,} input tokens" in titles[step["index"]]
        assert sum(figures.values()) == receipt["input_tokens"]  # a difference is its own segment, never dropped
        contexts = {c["contributor"]: c["tokens"] for c in receipt["contributions"] if c["kind"] in ("context", "ladder", "prompt-system")}
        for name, tokens in contexts.items():
            assert figures[name] == tokens
        assert figures["tools"] == sum(c["tokens"] for c in receipt["contributions"] if c["kind"] == "tools")
        assert figures["messages"] == sum(c["tokens"] for c in receipt["contributions"] if c["kind"] in ("user-prompt", "messages"))
    # the table says the same, and each bar opens its step
    table = section(page, 'id="bars-table"', "</table>")
    for step in run["steps"]:
        assert f'<a href="#step-{step["index"]}">' in table and f'{step["request"]["input_tokens"]:,}' in table
        assert f'href="#step-{step["index"]}" class="step-bar"' in page and f'id="step-{step["index"]}"' in page


async def test_the_timeline_shows_model_and_tool_time_as_the_steps_recorded_them(client: httpx.AsyncClient, session: RecordingSession) -> None:
    run = run_record(run_id="timed")
    session.record(run)
    first, second = run["steps"]
    assert first["tool_ms"] is not None and second["tool_ms"] is None  # the answer step called no tools
    assert second["started_ms"] > first["started_ms"] + first["latency_ms"]
    page = (await client.get("/runs/timed")).text
    table = section(page, 'id="timeline-table"', "</table>")
    rows = re.findall(r"<tr><td class=\"mono\">(\d+)</td>", table)
    assert rows == ["0", "1"]
    summary = html.unescape(section(page, 'id="timeline-summary"', "</span>"))
    assert "2 steps over" in summary and "model" in summary and "tools" in summary and "between calls" in summary
    assert page.count('class="tl-model"') == 2 and page.count('class="tl-tools"') == 1


async def test_a_run_of_500_steps_keeps_its_glance_small_and_its_timeline_grouped(client: httpx.AsyncClient, session: RecordingSession) -> None:
    base = run_record(run_id="seed")
    steps = []
    for n in range(500):
        step = copy.deepcopy(base["steps"][n % 2])
        step.update(index=n, started_ms=n * 10.0, latency_ms=6.0, tool_ms=2.0)
        steps.append(step)
    session.record({**base, "id": "long", "steps": steps, "duration_ms": 5_000.0})
    page = (await client.get("/runs/long")).text
    glance = section(page, 'id="run-glance"')
    timeline = section(page, 'id="run-timeline"', "</svg>")
    assert timeline.count("<rect") <= 3 * TIMELINE_PIECES + 1  # slots, not steps
    assert len(glance) < 800 * 500  # bounded bytes a step (the bars stay one short row each)
    assert len(bar_titles(page)) == 500  # still a bar per step, each opening its step
    rows = re.findall(r"<tr><td class=\"mono\">([\d–]+)</td>", section(page, 'id="timeline-table"', "</table>"))
    assert len(rows) <= TABLE_ROWS and rows[0] == "0–9" and rows[-1] == "490–499"
    assert "(10 steps a row)" in glance


async def test_a_run_that_was_not_planned_here_says_so_in_its_bars(client: httpx.AsyncClient, session: RecordingSession) -> None:
    run = run_record(run_id="foreign")
    for step in run["steps"]:
        step["request"] = {}
    session.record(run)
    titles = bar_titles((await client.get("/runs/foreign")).text)
    assert titles[0] == "step 0: not planned here input tokens: not planned here"


# ---------------------------------------------------------------- colours by name


def billing(order: str) -> Any:
    """The billing agent's prompt with its three contexts used in ``order`` (their first letters)."""
    made = {
        "h": context("house-rules", system="## House rules\nNever promise refunds.", priority=100),
        "c": context("catalog", system="## Catalog\nPlan Pro: 2 TB.", priority=60),
        "t": context("tone", system="## Tone\nBe brief and kind.", priority=50),
    }
    return prompt("billing-agent", system="You are Ari, a billing agent.", input=Question, use=[made[k] for k in order],
                  tools=[lookup], prompt=lambda i: i.question, examples={"refund": {"question": "Was INV-1042 charged twice?"}})


def colours_on(page: str) -> dict[str, str]:
    """``{context: c-N}`` of the prompt page's token bar."""
    bar = section(page, 'aria-label="tokens per part of the sent request"', "</ul>")
    return dict((name, css) for css, name in re.findall(r'class="seg (c-\d+)"[^>]*data-source="([^"]+)"', bar))


async def test_a_context_keeps_its_colour_when_the_use_is_reordered(tmp_path: Path) -> None:
    seen = []
    for n, order in enumerate(("hct", "thc")):
        session = RecordingSession(tmp_path / str(n), [billing(order)], agent_ids=("billing-agent",))
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(session)), base_url="http://127.0.0.1:4400") as c:
            page = (await c.get("/prompts/billing-agent")).text
        bar = colours_on(page)
        assert list(bar)[1:] == [{"h": "house-rules", "c": "catalog", "t": "tone"}[k] for k in order]  # drawn in use order
        seen.append(bar)
    before, after = seen
    assert before == after and len(set(before.values())) == 4


def test_colours_depend_on_the_names_only_and_collisions_probe_in_name_order() -> None:
    names = [f"ctx-{n}" for n in range(9)]
    forward, backward = assign_colours(names), assign_colours(list(reversed(names)))
    assert forward == backward
    assert sorted(forward[n] for n in names) == list(range(1, len(PALETTE)))  # nine names, nine colours
    assert forward["<prompt>"] == 0
    # a name added elsewhere in the alphabet moves only names that collide with it, never by position
    assert assign_colours(["house-rules", "catalog"]) == assign_colours(["catalog", "house-rules"])


def test_the_stylesheet_paints_the_palette_the_tui_paints() -> None:
    css = (Path(__file__).resolve().parents[3] / "static" / "app.css").read_text()
    for swatch in PALETTE:
        assert f"--c{swatch.slot}: {swatch.hex};" in css


# ---------------------------------------------------------------- runs over time


def chart_label(page: str, key: str) -> str:
    return html.unescape(re.search(rf'id="chart-{key}".*?aria-label="([^"]*)"', page, re.S).group(1))  # type: ignore[union-attr]


async def test_the_runs_page_charts_each_run_when_there_are_few(client: httpx.AsyncClient, session: RecordingSession) -> None:
    many_runs(session.store, 30)
    page = (await client.get("/runs")).text
    tokens = chart_label(page, "tokens")
    summary = session.store.list(limit=1)[0]
    assert f"input tokens of 30 runs" in tokens and f"the newest {summary['input_tokens']:,}" in tokens and "each of the 30 runs" in tokens
    assert "duration of 30 runs" in chart_label(page, "latency")
    assert section(page, 'id="chart-tokens"', "</svg>").count("<circle") == 30
    filtered = (await client.get("/runs?status=error", headers={"HX-Request": "true"})).text
    assert 'id="run-charts"' not in filtered  # no run matches: no chart


async def test_past_the_point_limit_the_charts_sample_the_runs_and_say_so(client: httpx.AsyncClient, session: RecordingSession) -> None:
    many_runs(session.store, MAX_POINTS + 50)
    page = (await client.get("/runs")).text
    tokens, latency = chart_label(page, "tokens"), chart_label(page, "latency")
    assert f"of the {MAX_POINTS + 50:,} runs: the first at or after each of evenly spaced times" in tokens
    assert "a sample of" in latency
    line = re.search(r'id="chart-tokens".*?<polyline class="rc-line" points="([^"]*)"', page, re.S).group(1)  # type: ignore[union-attr]
    assert 2 <= len(line.split()) <= MAX_POINTS
    # a text search reads its matches anyway: they are grouped, every run counted in the tokens
    searched = (await client.get("/runs?q=answer", headers={"HX-Request": "true"})).text
    grouped = chart_label(searched, "tokens")
    assert f"{MAX_POINTS + 50:,} runs in" in grouped and "the line is each group's mean, the band its min to max" in grouped
    assert "one run of each group is drawn (a sample)" in chart_label(searched, "latency")
