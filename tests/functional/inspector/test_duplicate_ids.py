"""Two prompts with one id: the prompt shown and the error agree on which is which, after a full load
and after incremental saves of either module (a real session and worker)."""

from __future__ import annotations

from pathlib import Path

from crux_devtools.inspector.session.service import ProjectSession
from crux_devtools.inspector.transport.inprocess import in_process

ORIGINAL = 'from crux_devtools import prompt\n\nsecond = prompt("x", system="from b", examples={"one": {}})\n'
NEWER = 'from crux_devtools import prompt\n\n\nfirst = prompt("x", system="from a", examples={"one": {}})\n'


def shown_and_errors(session: ProjectSession) -> tuple[list[tuple[str, str, int | None, str]], list[tuple[str | None, int | None, str, str]]]:
    report = session.report
    assert report is not None
    shown = [(p["id"], p["file"], p["line"], p["examples"][0]["inspection"]["system"]) for p in report["prompts"]]
    return shown, [(e["file"], e["line"], e["type"], e["message"]) for e in report["errors"]]


async def test_the_error_names_the_prompt_shown_and_sits_at_the_duplicate_that_is_not(tmp_path: Path) -> None:
    (tmp_path / "b.py").write_text(ORIGINAL, encoding="utf-8")
    async with ProjectSession(tmp_path, transport=in_process, watch=False, history=False, prewarm=False) as session:
        assert shown_and_errors(session) == ([("x", "b.py", 3, "from b")], [])
        (tmp_path / "a.py").write_text(NEWER, encoding="utf-8")  # a second module with the same id
        await session.reload(["a.py"])
        expected_error = (
            "b.py", 3, "DuplicateIdError",
            "two prompts share the id 'x': a.py:4 is shown, b.py:3 is not (the module that comes first in "
            "discovery order wins); ids must be unique: rename one",
        )
        assert shown_and_errors(session) == ([("x", "a.py", 4, "from a")], [expected_error])
        # Saving either module (an incremental update in the held worker) keeps the same one shown.
        (tmp_path / "b.py").write_text(ORIGINAL.replace("from b", "from b, edited"), encoding="utf-8")
        await session.reload(["b.py"])
        assert shown_and_errors(session) == ([("x", "a.py", 4, "from a")], [expected_error])
        (tmp_path / "a.py").write_text(NEWER.replace("from a", "from a, edited"), encoding="utf-8")
        await session.reload(["a.py"])
        assert shown_and_errors(session) == ([("x", "a.py", 4, "from a, edited")], [expected_error])
