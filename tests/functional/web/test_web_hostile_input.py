"""Bad input never gives a 500: non-UTF-8 file names, deep or surrogate-laden custom input, and
file names too long for the file system, each against a real uvicorn on 127.0.0.1."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from waits import WAIT
from web_conftest_helpers import LiveServer, live_server
from web_fakes import FakeSession, default_prompts

from crux_devtools import prompt
from crux_devtools.web.app import create_app

REPO = Path(__file__).resolve().parents[3]
DEEP = '{"message": "hi", "lang": ' + "[" * 5000 + "]" * 5000 + "}"
SURROGATE = '{"message": "\\ud800"}'  # valid JSON, not valid Unicode text


def non_utf8_project(root: Path) -> Path:
    """A project with a module and a folder whose names are not UTF-8 (Latin-1 é, a 0xff byte)."""
    raw = os.fsencode(root)
    os.makedirs(raw + b"/sub\xff")
    with open(raw + b"/caf\xe9.py", "w") as f:
        f.write('from crux_devtools import prompt\n\ncafe = prompt("cafe", system="Caf\\u00e9 menu.", examples={"a": {}})\n')
    with open(raw + b"/sub\xff/broken.py", "w") as f:
        f.write("import crux_devtools\n\nraise KeyError('boom')\n")
    return root


@pytest.fixture(scope="module")
def real_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    from crux_devtools.inspector.session.service import ProjectSession

    root = non_utf8_project(tmp_path_factory.mktemp("nonutf8") / "project")
    with live_server(create_app(ProjectSession(root, history=False, watch=False))) as server:
        yield server


@pytest.fixture(scope="module")
def fake_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    root = tmp_path_factory.mktemp("fake")
    (root / "prompts.py").write_text("import crux_devtools\n")
    lone = prompt("lone-surrogate", system="User code made this: \ud800 and caf\udce9.", examples={"only": {}})
    with live_server(create_app(FakeSession(root, [*default_prompts(), lone], agent_ids=("support-reply",)))) as server:
        yield server


def test_a_non_utf8_file_name_is_shown_with_replacement_characters(real_server: LiveServer) -> None:
    with httpx.Client(base_url=real_server.url, timeout=WAIT) as client:
        page = client.get("/")
        assert page.status_code == 200
        assert "caf\ufffd.py" in page.text  # the row of the prompt it defines
        assert "sub\ufffd/broken.py" in page.text and "KeyError" in page.text  # its load error
        listing = client.get("/api/prompts")
        assert listing.status_code == 200
        assert [(p["id"], p["file"]) for p in listing.json()] == [("cafe", "caf\ufffd.py")]
        one = client.get("/api/prompts/cafe")
        assert one.status_code == 200 and one.json()["errors"][0]["file"] == "sub\ufffd/broken.py"
        assert client.get("/prompts/cafe").status_code == 200


def test_the_source_link_of_a_non_utf8_file_opens_that_file(real_server: LiveServer) -> None:
    with httpx.Client(base_url=real_server.url, timeout=WAIT) as client:
        page = client.get("/").text
        link = re.search(r'href="(/source\?file=sub%FF/broken\.py[^"]*)"', page)
        assert link, "the load error links to its file by the file's own bytes"
        source = client.get(link.group(1).replace("&amp;", "&"))
        assert source.status_code == 200
        assert "raise KeyError(&#39;boom&#39;)" in source.text and "sub\ufffd/broken.py" in source.text


@pytest.mark.parametrize("text", [DEEP, SURROGATE], ids=["nested-5000", "lone-surrogate"])
def test_unusable_custom_input_is_an_inline_error_on_the_page_and_a_422_on_run(fake_server: LiveServer, text: str) -> None:
    with httpx.Client(base_url=fake_server.url, timeout=WAIT) as client:
        page = client.get("/prompts/support-reply", params={"input": text})
        assert page.status_code == 200
        errors = re.search(r'<section class="banner banner-error" id="input-errors".*?</section>', page.text, re.S)
        assert errors, page.text[:500]
        assert ("nested too deeply" in errors.group(0)) if text is DEEP else ("lone surrogate" in errors.group(0))
        run = client.post("/prompts/support-reply/run", data={"input": text})
        assert run.status_code == 422
        assert "nested too deeply" in run.text or "lone surrogate" in run.text


def test_text_with_lone_surrogates_from_user_code_is_shown_not_a_500(fake_server: LiveServer) -> None:
    with httpx.Client(base_url=fake_server.url, timeout=WAIT) as client:
        page = client.get("/prompts/lone-surrogate")
        assert page.status_code == 200 and "User code made this: \ufffd and caf\ufffd." in page.text
        assert client.get("/api/prompts/lone-surrogate").json()["examples"][0]["inspection"]["system"].startswith("User code made this: \ufffd")


@pytest.mark.parametrize("name", ["a" * 300 + ".py", "x/" * 3000 + "y.py", "b" * 5000], ids=["300-chars", "6000-char-path", "5000-chars"])
def test_a_source_file_name_too_long_for_the_file_system_is_a_clean_404(fake_server: LiveServer, name: str) -> None:
    r = httpx.get(fake_server.url + "/source", params={"file": name, "line": 3}, timeout=WAIT)
    assert r.status_code == 404
    assert "cannot read this file" in r.text or "no such source file" in r.text


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (DEEP, "--input: the input is nested too deeply (more than 100 levels of objects and arrays)"),
        ('{"question": ' + "[" * 150 + "]" * 150 + "}", "--input: question[0][0]"),
        ('{"question": "\\ud800"}', "--input: question: the text holds a lone surrogate (\\ud800 at character 1)"),
        ("[1]", "--input: the input must be a JSON object, not an array"),
        ("{", "--input: not valid JSON"),
    ],
    ids=["nested-5000", "nested-150", "lone-surrogate", "array", "broken"],
)
def test_inspect_with_unusable_input_prints_one_line_and_exits_1(payload: str, message: str) -> None:
    done = subprocess.run(
        [str(Path(sys.executable).parent / "crux-devtools"), "inspect", str(REPO / "tests" / "projects" / "good"), "--prompt", "support", "--input", payload],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("Error: " + message), done.stderr


def test_the_input_error_names_the_field_that_holds_the_problem() -> None:
    from crux_devtools.inspector.features.shown.custom_input import InputError, parse_input

    with pytest.raises(InputError) as caught:
        parse_input(json.dumps({"a": {"b": ["ok", "bad \ud800"]}}))
    assert caught.value.field == "a.b[1]"
    assert parse_input(json.dumps({"a": [[["deep but fine"]]]})) == {"a": [[["deep but fine"]]]}


async def test_a_change_under_a_non_utf8_name_does_not_stop_watching(tmp_path: Path) -> None:
    """watchfiles cannot name a path that is not UTF-8 and stops; the watcher starts again, so later
    saves still reach the page and stopping the session raises nothing."""
    import asyncio

    from crux_devtools.inspector.api import SessionEvent
    from crux_devtools.inspector.session.service import ProjectSession
    from crux_devtools.inspector.transport.inprocess import in_process

    root = tmp_path / "project"
    root.mkdir()
    (root / "hello.py").write_text("from crux_devtools import prompt\n\nhello = prompt('hello', system='One.')\n")
    events: list[SessionEvent] = []
    session = ProjectSession(root, debounce=0.02, history=False, transport=in_process)  # the watcher is the subject
    session.subscribe(events.append)
    await session.start()
    try:
        os.makedirs(os.fsencode(root) + b"/sub\xff")
        with open(os.fsencode(root) + b"/sub\xff/notes.txt", "w") as f:
            f.write("a change watchfiles cannot name")
        await asyncio.sleep(0.5)  # usually a batch of its own; together with the next save it proves the same
        (root / "hello.py").write_text("from crux_devtools import prompt\n\nhello = prompt('hello', system='Two.')\n")
        deadline = asyncio.get_running_loop().time() + WAIT
        while "Two." not in json.dumps(session.report):
            assert asyncio.get_running_loop().time() < deadline, [e.summary for e in events]
            await asyncio.sleep(0.05)
        assert not [e for e in events if "Watching files stopped" in e.summary]
    finally:
        await session.stop()
