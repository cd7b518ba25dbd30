"""A broken module that several prompt modules import is one load error, at its own file and line,
not one per importer; fixing it clears the error on the next save (a real session, its worker in process).

Both kinds of shared module are covered: one that is a prompt module itself (it imports
``crux_devtools``, so discovery imports it too) and a plain helper that only the importers reach."""

from __future__ import annotations

from pathlib import Path

import pytest

from crux_devtools.inspector.session.service import ProjectSession
from crux_devtools.inspector.transport.inprocess import in_process

IMPORTER = '''from crux_devtools import prompt
from shared import RULES

{name} = prompt("{name}", system=RULES, examples={{"one": {{}}}})
'''

SHARED = {
    "a prompt module": 'from crux_devtools import context\n\nRULES = "Be kind."\nhouse = context("house", system=RULES)\n',
    "a plain helper": 'RULES = "Be kind."\n',
}
BROKEN_LINE = "def broken(:\n    pass\n"


def errors(session: ProjectSession) -> list[tuple[str | None, int | None, str]]:
    assert session.report is not None
    return [(e["file"], e["line"], e["type"]) for e in session.report["errors"]]


@pytest.mark.parametrize("kind", list(SHARED))
async def test_a_syntax_error_in_a_shared_module_is_one_load_error_and_a_fix_clears_it(tmp_path: Path, kind: str) -> None:
    good = SHARED[kind]
    broken = good + "\n" + BROKEN_LINE
    broken_at = broken.count("\n", 0, broken.index("def broken")) + 1
    (tmp_path / "shared.py").write_text(broken, encoding="utf-8")
    for name in ("first", "second", "third"):
        (tmp_path / f"{name}.py").write_text(IMPORTER.format(name=name), encoding="utf-8")
    async with ProjectSession(tmp_path, transport=in_process, watch=False, history=False, prewarm=False) as session:
        assert errors(session) == [("shared.py", broken_at, "SyntaxError")]
        assert session.report is not None and session.report["prompts"] == []
        (tmp_path / "shared.py").write_text(good, encoding="utf-8")  # the fix, then the save
        await session.reload(["shared.py"])
        assert errors(session) == []
        assert sorted(p["id"] for p in session.report["prompts"]) == ["first", "second", "third"]
        (tmp_path / "shared.py").write_text(broken, encoding="utf-8")  # broken again by a later save
        await session.reload(["shared.py"])
        assert errors(session) == [("shared.py", broken_at, "SyntaxError")]
