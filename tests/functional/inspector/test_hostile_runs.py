"""Recorded runs with hostile or odd values, read by every reader: the web pages and JSON, the
``runs`` command and the TUI's Runs rendering. A run is data written by another process (or by a
tool's error message, or an HTTP response): no value may crash a reader or drive the terminal.

The runs are real ``generate`` runs written to a real ``.crux/runs.sqlite3`` with the real store.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from rich.console import Console
from web_runs_fakes import RecordingSession, run_record

from crux_devtools.core.record.runstore import RunStore
from crux_devtools.inspector.features.shown.visible import visible
from crux_devtools.tui.runs_render import render_run_detail, render_run_header, render_run_preview, run_row
from crux_devtools.web.app import create_app

CLI = str(Path(sys.executable).with_name("crux-devtools"))
TITLE = "\x1b]0;pwned\x07"  # OSC: sets the terminal's title
CLEAR = "\x1b[2J"  # CSI: clears the screen
C1 = "\x9b31m"  # the one-byte CSI of C1
HOSTILE = f"evil{TITLE}{CLEAR}{C1}\r\x08\x7fend"
EXTREME = "0001-01-01T00:00:00+01:00"  # a valid date with no local time (astimezone overflows)
SURROGATE = "broken \udcff bytes"
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def hostile_runs() -> list[dict[str, Any]]:
    base = run_record
    escaped = base(run_id="escapes", target=f"billing-agent{TITLE}", answer=f"answer {CLEAR}")
    escaped["model"] = f"model{CLEAR}"
    escaped["error"] = {"type": f"Err{TITLE}", "message": f"from a tool: {HOSTILE}", "traceback": f"tb {CLEAR}"}
    escaped["status"] = "error"
    extreme = base(run_id="extreme")
    extreme["started_at"] = EXTREME
    no_usage = base(run_id="no-usage")
    no_usage["usage"] = None
    text_usage = base(run_id="text-usage")
    text_usage["usage"] = "lots"
    odd_usage = base(run_id="odd-usage")
    odd_usage["usage"] = {"input_tokens": "12", "output_tokens": None}
    surrogate = base(run_id="surrogate", answer=SURROGATE)
    return [escaped, extreme, no_usage, text_usage, odd_usage, surrogate]


@pytest.fixture
def session(tmp_path: Path) -> RecordingSession:
    session = RecordingSession(tmp_path, agent_ids=("billing-agent",))
    for run in hostile_runs():
        session.record(run)
    return session


@pytest.fixture
async def client(session: RecordingSession) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(session)), base_url="http://127.0.0.1:4400") as c:
        yield c


# ---------------------------------------------------------------- the shared helper


def test_visible_shows_every_control_character_and_keeps_lines_only_where_asked() -> None:
    shown = visible(HOSTILE + "\n\tx")
    assert not CONTROL.search(shown) and "\n" not in shown and "\t" not in shown
    assert shown == "evil\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\r\\x08\\x7fend\\n\\tx"
    assert visible("a\n\tb\x1b", lines=True) == "a\n\tb\\x1b"
    assert visible(SURROGATE) == "broken \\udcff bytes"
    assert visible("plain ünïcode → ok") == "plain ünïcode → ok"


# ---------------------------------------------------------------- web


async def test_every_runs_page_serves_the_hostile_runs(client: httpx.AsyncClient) -> None:
    listed = await client.get("/runs")
    assert listed.status_code == 200, listed.text
    assert EXTREME in listed.text  # shown as recorded, since it has no local time
    for run_id in ("escapes", "extreme", "no-usage", "text-usage", "odd-usage", "surrogate"):
        page = await client.get(f"/runs/{run_id}")
        assert page.status_code == 200, (run_id, page.text[:500])
    assert (await client.get("/prompts/billing-agent")).status_code == 200


async def test_the_json_of_a_reply_with_a_lone_surrogate_is_valid_and_keeps_it(client: httpx.AsyncClient) -> None:
    listed = await client.get("/api/runs", params={"limit": 100})
    assert listed.status_code == 200
    assert {r["id"] for r in listed.json()} >= {"surrogate", "extreme"}
    one = await client.get("/api/runs/surrogate")
    assert one.status_code == 200
    assert json.loads(one.content.decode("utf-8"))["text"] == SURROGATE  # the escape reads back as the same text


@pytest.mark.parametrize("offset", [str(2**63), str(2**64), "99999999999999999999999"])
async def test_an_offset_beyond_any_store_is_a_400_with_a_reason(client: httpx.AsyncClient, offset: str) -> None:
    r = await client.get("/api/runs", params={"offset": offset})
    assert r.status_code == 400 and "offset must be a whole number" in r.json()["detail"]


async def test_a_page_number_beyond_any_store_is_an_empty_page(client: httpx.AsyncClient) -> None:
    r = await client.get("/runs", params={"page": str(2**70)})
    assert r.status_code == 200


def test_the_store_takes_any_offset_and_limit(session: RecordingSession) -> None:
    assert session.store.list(offset=2**63) == [] and session.store.list(offset=2**80, limit=2**80) == []
    assert len(session.store.list(limit=2**64)) == 6


# ---------------------------------------------------------------- the runs command


def test_runs_prints_every_hostile_run_without_a_control_character(session: RecordingSession) -> None:
    done = subprocess.run([CLI, "runs", str(session.root)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 7, done.stdout
    assert not CONTROL.search(done.stdout)
    assert "billing-agent\\x1b]0;pwned\\x07" in done.stdout and "model\\x1b[2J" in done.stdout
    assert EXTREME in done.stdout and "12/-" in done.stdout


def test_runs_json_keeps_a_lone_surrogate_as_valid_json(session: RecordingSession) -> None:
    done = subprocess.run([CLI, "runs", str(session.root), "--json"], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    runs = json.loads(done.stdout.decode("utf-8"))
    assert {r["id"]: r["text"] for r in runs}["surrogate"] == SURROGATE


# ---------------------------------------------------------------- the TUI's rendering


def shown(renderable: Any) -> str:
    """What a terminal would get for a renderable (no colours: only the text itself)."""
    out = io.StringIO()
    Console(file=out, width=200, color_system=None, force_terminal=False, legacy_windows=False).print(renderable)
    return out.getvalue()


def test_the_tui_renders_every_hostile_run_without_a_control_character(session: RecordingSession) -> None:
    with RunStore.for_project(session.root, create=False) as store:
        summaries = store.list(limit=100)
        whole = [store.get(s["id"]) for s in summaries]
    for summary, run in zip(summaries, whole, strict=True):
        assert run is not None
        for renderable in (*run_row(summary), render_run_preview(summary), render_run_header(run), render_run_detail(run, 0)):
            text = shown(renderable)
            assert not CONTROL.search(text.replace("\n", "")), (run["id"], text)
    header = shown(render_run_header(next(r for r in whole if r and r["id"] == "escapes")))
    assert "\\x1b]0;pwned\\x07" in header and "model\\x1b[2J" in header
    assert EXTREME in shown(run_row(next(s for s in summaries if s["id"] == "extreme"))[0])
