"""``crux-devtools diff`` on the repositories people have: git-ignored local data, untracked work,
non-ASCII and spaced file names, submodules, symlinks, non-UTF-8 text, odd revisions, a stop by
SIGTERM. Real git repositories built here; the command in this process with in-process workers
(``test_diff_cli.diff``), and as a process where the process is the subject: the bytes it prints
and its stop by a signal."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from diff_helpers import commit_all, git, make_project
from test_diff_cli import as_json, diff, diff_process
from waits import until

STORE_PROMPT = '''\
import sqlite3
from pathlib import Path

from crux_devtools import prompt

STORE = Path(__file__).parent / "data" / "memory.sqlite3"


def remembered() -> str:
    STORE.parent.mkdir(exist_ok=True)
    with sqlite3.connect(STORE) as db:
        db.execute("CREATE TABLE IF NOT EXISTS notes (text TEXT)")
        rows = [r[0] for r in db.execute("SELECT text FROM notes ORDER BY rowid")]
    return "You remember: " + ("; ".join(rows) or "nothing yet")


recall = prompt("recall", system=remembered(), examples={"a": {}})
'''


def with_memory_store(root: Path) -> None:
    """A prompt that reads a git-ignored SQLite store the application filled (never committed)."""
    (root / ".gitignore").write_text("data/\n")
    (root / "recall.py").write_text(STORE_PROMPT)
    commit_all(root, "a prompt that reads the local memory store")
    (root / "data").mkdir()
    with sqlite3.connect(root / "data" / "memory.sqlite3") as db:
        db.execute("CREATE TABLE notes (text TEXT)")
        db.execute("INSERT INTO notes VALUES ('Dana prefers email')")


def test_git_ignored_local_data_is_the_same_at_both_revisions_whatever_else_is_in_the_tree(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    with_memory_store(root)
    done = diff(root)
    assert done.returncode == 0 and done.stdout.strip().endswith("no prompt changes"), done.stdout
    (root / "scratch.py").write_text("x = 1\n")  # untracked, unrelated: it cannot flip the verdict
    document = as_json(root)
    assert document["summary"]["examples"]["changed"] == 0, document
    # the base read the working tree's copy: the store itself was not written by the base's code
    with sqlite3.connect(root / "data" / "memory.sqlite3") as db:
        assert [r[0] for r in db.execute("SELECT text FROM notes")] == ["Dana prefers email"]


def test_an_untracked_file_that_git_does_not_ignore_is_new_work_at_head_only(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    (root / "fresh.py").write_text("from crux_devtools import prompt\n\nfresh = prompt('fresh', system='New.', examples={'a': {}})\n")
    document = as_json(root)
    assert {p["id"]: p["status"] for p in document["prompts"]}["fresh"] == "added"


@pytest.mark.parametrize("name", ["café.py", "my prompts.py"])
def test_an_edit_to_a_file_with_a_non_ascii_or_spaced_name_is_seen(tmp_path: Path, name: str) -> None:
    root = make_project(tmp_path)
    (root / name).write_text("from crux_devtools import prompt\n\nmenu = prompt('menu', system='Serve coffee.', examples={'a': {}})\n")
    commit_all(root, "a prompt in a file with an unusual name")
    (root / name).write_text("from crux_devtools import prompt\n\nmenu = prompt('menu', system='Serve tea.', examples={'a': {}})\n")
    document = as_json(root)
    menu = next(p for p in document["prompts"] if p["id"] == "menu")
    assert menu["status"] == "changed" and menu["file"] == name


def test_a_submodule_is_compared_with_its_content_at_each_revision(tmp_path: Path) -> None:
    library = tmp_path / "rules-lib"
    library.mkdir()
    git(library, "init", "-q")
    (library / "rules_text.py").write_text("RULE = 'Be exact.'\n")
    commit_all(library, "rules")
    root = make_project(tmp_path)
    git(root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "vendor")
    (root / "ruled.py").write_text(
        "import sys\nfrom pathlib import Path\n\nsys.path.insert(0, str(Path(__file__).parent / 'vendor'))\n\n"
        "from rules_text import RULE  # noqa: E402\n\nfrom crux_devtools import prompt  # noqa: E402\n\n"
        "ruled = prompt('ruled', system=RULE, examples={'a': {}})\n"
    )
    commit_all(root, "a prompt whose rule lives in a submodule")
    assert as_json(root)["summary"]["examples"]["changed"] == 0
    (root / "vendor" / "rules_text.py").write_text("RULE = 'Be exact and brief.'\n")  # an edit inside the submodule
    document = as_json(root)
    ruled = next(p for p in document["prompts"] if p["id"] == "ruled")
    assert ruled["status"] == "changed", document
    assert not [f for f in document["failures"] if f["revision"] == "base"], document["failures"]


def test_symlinks_are_exported_and_one_leaving_the_repository_is_a_finding(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("Shared greeting.")
    root = make_project(tmp_path)
    (root / "texts").mkdir()
    (root / "texts" / "inner.txt").write_text("Inner greeting.")
    os.symlink(str(outside), root / "greeting.txt")  # absolute, outside the repository
    os.symlink("texts/inner.txt", root / "inner.txt")  # relative, inside
    (root / "greet.py").write_text(
        "from pathlib import Path\n\nfrom crux_devtools import prompt\n\nHERE = Path(__file__).parent\n"
        "greet = prompt('greet', system=(HERE / 'greeting.txt').read_text() + (HERE / 'inner.txt').read_text(), examples={'a': {}})\n"
    )
    commit_all(root, "prompts reading through symlinks")
    done = diff(root, "--fail-on", "error")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no prompt changes" in done.stdout
    assert "SymlinkOutside: symlink greeting.txt points outside the repository" in done.stdout
    document = as_json(root)
    assert {f["revision"] for f in document["failures"] if f["type"] == "SymlinkOutside"} == {"base", "head"}


NON_UTF8_PROMPT = '''\
from pathlib import Path

from crux_devtools import prompt

TEXT = (Path(__file__).parent / "legacy.txt").read_text(encoding="utf-8", errors="surrogateescape")
if "\\udcff" in TEXT:
    raise ValueError("unreadable rule: " + TEXT)
legacy = prompt("legacy", system=TEXT, examples={"a": {}})
'''


def test_non_utf8_text_is_replaced_and_the_output_is_valid_utf8_json(tmp_path: Path) -> None:
    from test_diff_cli import HUSH

    root = make_project(tmp_path)
    (root / "legacy.txt").write_bytes(b"Caf\xe9 rules.")
    (root / "legacy.py").write_text(NON_UTF8_PROMPT)
    (root / "hush.py").write_text(HUSH)
    pyproject = root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('default_model = "house-model"', 'default_model = "house-model"\nredact = "hush:redact"'))
    commit_all(root, "a prompt reading latin-1 text")
    (root / "legacy.txt").write_bytes(b"Caf\xe9 rules, \xff always.")
    out = tmp_path / "review.json"
    done = diff(root, "--format", "json", "--output", str(out))
    assert done.returncode == 0, done.stderr
    document = json.loads(out.read_bytes().decode("utf-8"))  # strict: valid UTF-8
    legacy = next(p for p in document["prompts"] if p["id"] == "legacy")
    assert legacy["status"] == "removed"
    [failure] = [f for f in document["failures"] if f["revision"] == "head"]
    assert failure["message"] == "unreadable rule: Caf\ufffd rules, \ufffd always.", failure
    text = diff_process(root)  # what a process prints on its stdout
    assert text.returncode == 0 and "unreadable rule: Caf\ufffd rules" in text.stdout, text.stderr


@pytest.mark.parametrize("rev", ["HEAD\x01", "HEAD\nmain", "\t"])
def test_a_revision_with_a_control_character_exits_2_with_one_line(tmp_path: Path, rev: str) -> None:
    root = make_project(tmp_path)
    done = diff(root, "--base", rev)
    assert done.returncode == 2, done.stdout + done.stderr
    [line] = done.stderr.strip().splitlines()
    assert "control character" in line or "the revision is empty" in line, line


def test_fail_on_error_ignores_an_error_the_base_had_whose_message_holds_an_absolute_path(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    (root / "broken.py").write_text(
        "from pathlib import Path\n\nimport crux_devtools\n\n(Path(__file__).parent / 'missing.txt').read_text()\n"
    )
    commit_all(root, "a module that reads a missing file")
    (root / ".gitignore").write_text("local.txt\n")
    (root / "local.txt").write_text("kept out of git\n")
    shared = root / "shared.py"
    shared.write_text(shared.read_text().replace("- Be kind.", "- Be kind and exact."))
    done = diff(root, "--fail-on", "error")
    assert done.returncode == 0, done.stdout + done.stderr
    document = as_json(root)
    messages = {f["revision"]: f["message"] for f in document["failures"] if f["file"] == "broken.py"}
    assert messages["base"] == messages["head"] and str(root) not in messages["head"], messages


def test_the_text_says_which_revisions_code_ran(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    sha = git(root, "rev-parse", "HEAD").strip()
    done = diff(root)
    assert done.stdout.splitlines()[0] == f"ran the code of HEAD ({sha[:12]}, exported, with the working tree's ignored files) and of the working tree; no model was called"


def test_runs_asked_for_and_not_compared_are_listed_with_the_reason(tmp_path: Path) -> None:
    from crux_devtools.core.record.runstore import RunStore

    root = make_project(tmp_path)
    store = RunStore.for_project(root)
    store.write({"id": "r0", "target": "reply", "kind": "prompt", "status": "ok", "input": {"question": "Where?"},
                 "started_at": "2026-01-01T00:00:00+00:00", "steps": []})
    store.write({"id": "g0", "target": "gone", "kind": "prompt", "status": "ok", "input": {},
                 "started_at": "2026-01-02T00:00:00+00:00", "steps": []})
    store.close()
    document = as_json(root, "--runs", "2")
    reply = next(p for p in document["prompts"] if p["id"] == "reply")
    assert "run:r0" in [e["name"] for e in reply["examples"]]
    reasons = {i["id"]: i["reason"] for i in document["not_compared"]}
    assert reasons["runs of reply"] == "1 recorded run (asked for 2)"
    assert reasons["run:g0"] == "its target gone is at neither revision"
    text = diff(root, "--runs", "2").stdout
    assert "not compared: run:g0 (.crux/runs.sqlite3): its target gone is at neither revision" in text


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT])
def test_sigterm_or_sigint_stops_diff_and_removes_the_base_export(tmp_path: Path, number: signal.Signals) -> None:
    root = make_project(tmp_path)
    (root / "slow.py").write_text("import crux_devtools\n\nwhile True:\n    pass\n")
    commit_all(root, "a module that hangs")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    cli = str(Path(sys.executable).parent / "crux-devtools")
    child = subprocess.Popen([cli, "diff", str(root), "--timeout", "600"], env={**os.environ, "TMPDIR": str(scratch)},
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=root)
    try:
        until(lambda: any((p / "base" / "slow.py").exists() for p in scratch.glob("crux-diff-*")), "the base is exported")
        child.send_signal(number)
        _, err = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 128 + number, err
    assert f"stopped by {number.name}" in err and "Traceback" not in err, err
    assert not list(scratch.glob("crux-diff-*")), list(scratch.iterdir())
