"""One status per example, decided once in the worker: the web list and page, ``/api``, the TUI tree
and status line, ``inspect`` and ``check`` all say the same thing about the same project.

``tests/projects/statuses`` holds one prompt per state (crux_devtools/statuses.py); each surface is the
real one over a real ``ProjectSession`` with its worker in-process (the web app through httpx, the
TUI as a Textual app, the CLI commands through ``cli_in_process``, run before the test's event loop
starts).
"""

from __future__ import annotations

import asyncio
import html
import json
import re
import subprocess
from pathlib import Path

import httpx
import pytest
from cli_in_process import cli as command

from crux_devtools.inspector.session.service import ProjectSession
from crux_devtools.statuses import fails, term, word
from crux_devtools.tui.app import make_tui
from crux_devtools.tui.widgets import ErrorsView, PromptTree, StatusLine
from crux_devtools.tui.widgets.status_line import status_text
from crux_devtools.web.app import create_app
from waits import pilot_until
from crux_devtools.inspector.transport.inprocess import in_process

PROJECT = Path(__file__).parents[2] / "projects" / "statuses"
REPO = Path(__file__).resolve().parents[3]
EXPECTED = {
    "fine": "fits",
    "too-big": "over-limit",
    "wordy": "over-budget",
    "modes": "unmatched",
    "orders": "invalid-input",
    "broken": "error",
    "unchecked": "not-checked",
    "roomy": "over-optimize-at",
}


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return command(*args, str(PROJECT), "--timeout", "30", cwd=REPO)


@pytest.fixture(scope="module")
def commands() -> tuple[subprocess.CompletedProcess[str], ...]:
    """``inspect``, ``check`` and ``check --strict`` on the project (each command runs its own event loop)."""
    return cli("inspect"), cli("check"), cli("check", "--strict")


def text_of(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment)).strip()


async def web_statuses() -> tuple[dict[str, str], dict[str, str], dict[str, str], dict[str, str]]:
    """(list chip, page chip, page data-status, /api status) of every prompt, from the real app."""
    async with ProjectSession(PROJECT, transport=in_process, watch=False, history=False, prewarm=False) as session:
        app = create_app(session, manage_session=False)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:4400") as client:
            listing = (await client.get("/")).text
            rows = re.findall(r'<tr class="prompt-row" data-id="([^"]*)">.*?<span class="chip [^"]*"[^>]*>(.*?)</span>', listing, re.S)
            listed = {html.unescape(pid): text_of(chip) for pid, chip in rows}
            page_chip, page_status = {}, {}
            for prompt_id in EXPECTED:
                page = (await client.get(f"/prompts/{prompt_id}")).text
                page_status[prompt_id] = re.search(r'<div id="report"[^>]* data-status="([^"]*)"', page).group(1)  # type: ignore[union-attr]
                status_line = page.split('class="status-line"', 1)[1]
                page_chip[prompt_id] = text_of(re.search(r'<span class="chip [^"]*"[^>]*>(.*?)</span>', status_line).group(1))  # type: ignore[union-attr]
            api = {p["id"]: p["status"] for p in (await client.get("/api/prompts")).json()}
    return listed, page_chip, page_status, api


async def tui_statuses() -> tuple[dict[str, str], dict[str, str]]:
    """(tree label, status line) of every prompt, from the real Textual app over a real session."""
    session = ProjectSession(PROJECT, transport=in_process, history=False, prewarm=False)
    app = make_tui(session)
    tree_words: dict[str, str] = {}
    line_words: dict[str, str] = {}
    async with app.run_test(size=(160, 40)) as pilot:

        def tree_shows_every_prompt() -> bool:  # the report reached the session *and* the tree drew it
            if session.report is None or not app.screen.query("PromptTree"):
                return False
            return {n.data.prompt_id for n in app.query_one(PromptTree)._prompt_nodes() if n.data is not None} >= set(EXPECTED)

        await pilot_until(pilot, tree_shows_every_prompt, "the tree lists every prompt of the report")
        tree = app.query_one(PromptTree)
        for node in tree._prompt_nodes():
            assert node.data is not None
            tree_words[node.data.prompt_id] = str(node.label)
        for prompt_id in EXPECTED:
            tree.select_prompt(prompt_id)
            for _ in range(1200):
                await pilot.pause(0.05)
                if app.prompt_id == prompt_id and (prompt_id == "unchecked" or app.shown is not None):
                    break
            data = app.query_one(StatusLine).data
            line_words[prompt_id] = status_text(**data).plain if data else ""
            if prompt_id == "unchecked":  # the Errors tab says why it was not checked, and what was imported
                _errors, _stale, notes = app.detail.pane(ErrorsView).data
                assert notes[0].startswith("not checked: prompt 'unchecked' has required inputs and no examples"), notes
                assert notes[1].startswith("imported: prompts.py (every .py file that imports crux_devtools"), notes
    return tree_words, line_words


async def test_every_surface_shows_the_one_status_the_worker_decided(commands: tuple[subprocess.CompletedProcess[str], ...]) -> None:
    inspected, checked, strict = commands
    (listed, page_chip, page_status, api), (tree, line) = await asyncio.gather(web_statuses(), tui_statuses())
    # /api and the page carry the key; the list and the page show its one word
    assert api == EXPECTED
    assert page_status == EXPECTED
    assert listed == {pid: word(key) for pid, key in EXPECTED.items()}
    assert page_chip == {pid: word(key) for pid, key in EXPECTED.items()}
    # the TUI tree: the mark and word (the tokens, for a prompt that fits)
    for pid, key in EXPECTED.items():
        mark = term(key).mark
        assert tree[pid].startswith(f"{mark} {pid}"), tree[pid]
        assert tree[pid].endswith(" tok" if key == "fits" else f" {word(key)}"), tree[pid]
    # the TUI status line of each example (for a prompt that was not checked, of the prompt)
    for pid, key in EXPECTED.items():
        assert f"{term(key).mark} {word(key)}" in line[pid], (pid, line[pid])
        if key != "not-checked":
            others = [word(k) for k in EXPECTED.values() if k != key and word(k) not in word(key)]
            assert not any(f" {w}" in line[pid] for w in others), (pid, line[pid])
    # inspect: each prompt's status line, and exit 1 (something printed failed)
    found = dict(re.findall(r"^(?:prompt|agent) (\S+)  \(.*?\)  status: ([^,]+),", inspected.stdout, re.M))
    assert found == {pid: word(key) for pid, key in EXPECTED.items()}, inspected.stdout
    assert inspected.returncode == 1
    # check: exactly the failing statuses fail, each once; the unchecked one is named on stderr
    failing = {pid for pid, key in EXPECTED.items() if fails(key)}
    named = set(re.findall(r"prompt '([^']+)' example", checked.stdout))
    assert named == failing, checked.stdout
    assert checked.returncode == 1
    assert "prompts.py:47: not checked: prompt 'unchecked' has required inputs and no examples" in checked.stderr
    assert "unchecked" not in checked.stdout
    assert "prompts.py:47: NotChecked: prompt 'unchecked'" in strict.stdout and strict.returncode == 1


@pytest.fixture
def unchecked_only(tmp_path: Path) -> Path:
    (tmp_path / "prompts.py").write_text(
        "from pydantic import BaseModel\n"
        "from crux_devtools import prompt\n\n\n"
        "class Order(BaseModel):\n    order_id: int\n\n\n"
        "fine = prompt('fine', system='Hello.', examples={'default': {}})\n"
        "orders = prompt('orders', system='Help with orders.', input=Order)\n"
    )
    return tmp_path


def run_check(root: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return command("check", str(root), "--timeout", "30", *flags, cwd=REPO)


def test_check_names_a_prompt_it_could_not_check_and_strict_fails_on_it(unchecked_only: Path) -> None:
    plain = run_check(unchecked_only)
    assert plain.returncode == 0, plain.stdout + plain.stderr
    assert "prompts.py:10: not checked: prompt 'orders' has required inputs and no examples" in plain.stderr
    assert "ok: 1 prompt(s), 1 example(s), no failures; 1 not checked" in plain.stdout
    strict = run_check(unchecked_only, "--strict")
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert strict.stdout.splitlines() == [
        "prompts.py:10: NotChecked: prompt 'orders' has required inputs and no examples; "
        "add examples={'name': {...}} to its definition to see it resolved"
    ]


async def test_a_custom_input_that_does_not_match_the_schema_is_never_a_green_fits() -> None:
    async with ProjectSession(PROJECT, transport=in_process, watch=False, history=False, prewarm=False) as session:
        app = create_app(session, manage_session=False)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:4400") as client:
            page = (await client.get("/prompts/fine", params={"input": "{}"})).text
            assert "chip-fits" in page  # an input that matches: the status of its evaluation
            bad = (await client.get("/prompts/orders", params={"input": json.dumps({"order_id": "seven"})})).text
            status_line = bad.split('class="status-line"', 1)[1].split("</div>", 1)[0]
            assert 'data-status="invalid-input"' in bad and "input-errors" in bad
            assert "chip-fits" not in status_line and word("invalid-input") in text_of(status_line)
            unchecked = (await client.get("/prompts/unchecked")).text
            assert 'id="not-checked"' in unchecked and "Not checked: prompt &#39;unchecked&#39; has required inputs" in unchecked
            assert "chip-fits" not in unchecked.split('class="status-line"', 1)[1].split("</div>", 1)[0]
