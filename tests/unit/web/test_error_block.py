"""One error block for every page and one Rich renderer for the TUI.

The web page is fetched from the real app over the fake session (real prompts, real plans) with an
example whose evaluation failed; the TUI renderer is printed on a Rich console.
"""

from __future__ import annotations

import html
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from markupsafe import escape
from rich.console import Console, Group

sys.path.insert(0, str(Path(__file__).parent))
from web_fakes import FakeSession, app_client, load_error, support_prompt  # noqa: E402

from crux_devtools.tui.error_render import error_line, render_error  # noqa: E402
from crux_devtools.tui.widgets.errors import render_errors  # noqa: E402
from crux_devtools.web.paths import asset_dir  # noqa: E402

TEMPLATES = asset_dir("templates")


def test_the_error_markup_is_written_once_in_the_macros() -> None:
    """No template but the macros spells an error out (its traceback fold is the telltale)."""
    spelled = [p.name for p in sorted(TEMPLATES.glob("*.html")) if "<summary>traceback</summary>" in p.read_text()]
    assert spelled == ["_macros.html"]
    users = [p.name for p in sorted(TEMPLATES.glob("*.html")) if "error_block(" in p.read_text() and p.name != "_macros.html"]
    assert len(users) >= 6, users


@pytest.fixture
def session(tmp_path: Path) -> FakeSession:
    return FakeSession(tmp_path, [support_prompt()])


@pytest.fixture
async def client(session: FakeSession) -> AsyncIterator[httpx.AsyncClient]:
    async with app_client(session) as c:
        yield c


async def test_an_examples_error_links_to_its_source_line_as_a_load_error_does(client: httpx.AsyncClient, session: FakeSession) -> None:
    report = session.report
    assert report is not None
    example = report["prompts"][0]["examples"][0]
    example.update(error=load_error("support/prompts.py", 42, "name 'x' is not defined <b>"), inspection=None, preview=None, status="error")
    await session.fail(load_error("support/rules.py", 7, "invalid syntax"))
    page = (await client.get("/prompts/support-reply")).text
    blocks = {label: page.split(f'aria-label="{label}"', 1)[1].split("</section>", 1)[0] for label in ("example error", "load errors")}
    for label, (file, line, message) in {
        "example error": ("support/prompts.py", 42, "name 'x' is not defined <b>"),
        "load errors": ("support/rules.py", 7, "invalid syntax"),
    }.items():
        block = blocks[label]
        assert f'href="/source?file={file}&amp;line={line}">{file}:{line}</a>' in block, label
        assert "SyntaxError" in block and str(escape(message)) in block
        assert "<summary>traceback</summary>" in block and f'File "{file}", line {line}' in html.unescape(block)
    assert "defined &lt;b&gt;" in blocks["example error"]  # escaped


def plain(*renderables: object) -> str:
    console = Console(width=120, record=True, color_system=None)
    console.print(Group(*renderables))  # type: ignore[arg-type]
    return console.export_text()


def test_the_tui_renders_an_error_as_a_block_or_a_line_with_its_traceback() -> None:
    error = load_error("support/prompts.py", 42, "name [bold]x[/] is not defined")
    block = plain(*render_error(error))
    assert re.search(r"support/prompts\.py:42  SyntaxError ─+", block)
    assert "name [bold]x[/] is not defined" in block  # user text, never markup
    assert 'File "support/prompts.py", line 42' in block
    line = plain(*render_error(error, block=False, indent=2))
    assert line.splitlines()[0] == "SyntaxError: name [bold]x[/] is not defined"
    assert line.splitlines()[1].rstrip() == '    File "support/prompts.py", line 42'  # the traceback's own indent, and 2 more
    assert plain(error_line("plain string error")).strip() == "plain string error"
    assert plain(*render_error({"code": "REQUEST_TOO_LARGE", "message": "no fit", "file": None, "line": None, "traceback": None})).startswith("?  REQUEST_TOO_LARGE")


def test_the_errors_tab_draws_each_error_with_the_one_renderer() -> None:
    errors = [load_error("a.py", 1, "first"), load_error("b.py", 2, "second")]
    tab = plain(render_errors(errors, stale=True))  # type: ignore[arg-type]
    assert tab.index("a.py:1  SyntaxError") < tab.index("first") < tab.index("b.py:2  SyntaxError") < tab.index("second")
    assert tab.count("SyntaxError") == 4  # each block's rule and its traceback's last line


async def test_a_field_added_to_the_load_error_shape_reaches_every_front_end(
    client: httpx.AsyncClient, session: FakeSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A load error's fields beyond where, what, message and traceback are not known to any front end:
    each shows whatever ``further_fields`` lists, so adding a field to the shape is enough."""
    from crux_devtools.inspector import errors
    from crux_devtools.inspector.features.text.report import render_error as cli_error
    from crux_devtools.shapes import LoadErrorDict

    assert set(errors.FURTHER_FIELDS) == set(LoadErrorDict.__annotations__) - errors.PLACED_FIELDS
    monkeypatch.setattr(errors, "FURTHER_FIELDS", ("fix_hint",))  # as if the shape had gained the key
    error = {**load_error("support/rules.py", 7, "invalid syntax"), "fix_hint": "close the bracket <here>"}
    assert errors.further_fields(error) == [("fix hint", "close the bracket <here>")]
    assert errors.further_fields({**error, "fix_hint": None}) == [] and errors.further_fields("text") == []

    await session.fail(error)
    page = (await client.get("/prompts/support-reply")).text
    block = page.split('aria-label="load errors"', 1)[1].split("</section>", 1)[0]
    assert "fix hint:</span> close the bracket &lt;here&gt;" in block  # escaped, under the message
    assert "fix hint: close the bracket <here>" in plain(*render_error(error))
    assert "    fix hint: close the bracket <here>" in cli_error(error).splitlines()  # type: ignore[arg-type]
