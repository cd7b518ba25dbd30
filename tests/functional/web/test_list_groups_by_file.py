"""The prompt list groups by the file that defines each prompt, on the real web app over a real
session (its worker in process): a file whose name is not a Python identifier (``01_contexts.py``, imported by
the inspector under an internal name) and a file in a folder (``agents/support.py``) are headed by
their paths in the project, never by the module names the inspector imported them by."""

from __future__ import annotations

import html
import re
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from crux_devtools.inspector.features.shown.groups import group_prompts, prompt_group
from crux_devtools.inspector.session.service import ProjectSession
from crux_devtools.inspector.transport.inprocess import in_process
from crux_devtools.web.app import create_app

NUMBERED = '''
from crux_devtools import prompt

first = prompt("first", system="One.", examples={"one": {}})
second = prompt("second", system="Two.", examples={"one": {}})
'''

FOLDER = '''
from crux_devtools import prompt

support = prompt("support", system="Help.", examples={"one": {}})
'''


@pytest.fixture
async def session(tmp_path: Path) -> AsyncIterator[ProjectSession]:
    (tmp_path / "01_contexts.py").write_text(NUMBERED, encoding="utf-8")
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "support.py").write_text(FOLDER, encoding="utf-8")
    async with ProjectSession(tmp_path, transport=in_process, watch=False, history=False, prewarm=False) as s:
        assert s.report is not None and not s.report["errors"], s.report
        yield s


async def test_the_web_list_is_headed_by_each_files_path_not_its_internal_module_name(session: ProjectSession) -> None:
    app = create_app(session, manage_session=False)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:4400") as client:
        page = (await client.get("/")).text
    names = [html.unescape(m) for m in re.findall(r'<span class="mono strong group-name">(.*?)</span>', page)]
    assert sorted(names) == ["01_contexts.py", "agents/support.py"]
    assert "crux_project" not in page
    numbered = page.split('data-group="01_contexts.py"')[1].split("</details>")[0]
    assert re.findall(r'data-id="([^"]+)"', numbered) == ["first", "second"]


async def test_every_front_end_groups_with_the_same_function(session: ProjectSession) -> None:
    assert session.report is not None
    groups = dict(group_prompts(session.report["prompts"], prompt_group))
    assert {name: [p["id"] for p in prompts] for name, prompts in groups.items()} == {
        "01_contexts.py": ["first", "second"], "agents/support.py": ["support"],
    }
