"""History in DIR/.crux/devtools.sqlite3: a version per change of each prompt and example, every run,
retention, and the migration of the earlier one-report-per-row file. Every test uses a real SQLite file."""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from crux_devtools.inspector.session.history import (
    DEFAULT_KEEP,
    DEFAULT_MAX_MB,
    SCHEMA_VERSION,
    History,
    HistoryUnavailable,
    Retention,
    open_history,
    read_retention,
    system_of,
)


def report(digest: str, text: str, prompt_id: str = "p", example: str = "basic") -> dict[str, Any]:
    inspection = {"system": text}
    return {"hash": digest, "duration_ms": 1.0, "prompts": [{"id": prompt_id, "examples": [{"name": example, "inspection": inspection}]}]}


def project_report(digest: str, texts: dict[tuple[str, str], str]) -> dict[str, Any]:
    """A report of several prompts and examples: {(prompt id, example): system text}."""
    prompts: dict[str, list[dict[str, Any]]] = {}
    for (prompt_id, example), text in texts.items():
        prompts.setdefault(prompt_id, []).append({"name": example, "inspection": {"system": text}})
    return {"hash": digest, "duration_ms": 1.0, "prompts": [{"id": p, "examples": exs} for p, exs in prompts.items()]}


def rows(root: Path, table: str) -> int:
    with sqlite3.connect(root / ".crux" / "devtools.sqlite3") as db:
        return int(db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


def test_the_state_folder_is_created_and_kept_out_of_git(tmp_path: Path) -> None:
    History(tmp_path).close()
    assert (tmp_path / ".crux" / ".gitignore").read_text(encoding="utf-8") == "*\n"
    with sqlite3.connect(tmp_path / ".crux" / "devtools.sqlite3") as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert db.execute("PRAGMA auto_vacuum").fetchone()[0] == 2  # incremental: trimmed pages go back


def test_each_change_is_one_version_and_every_run_is_recorded(tmp_path: Path) -> None:
    history = History(tmp_path)
    history.record(report("a", "one"), ok=True, errors=[])
    history.record(report("a", "one"), ok=True, errors=[], changed_files=["x.py"])
    history.record(report("b", "two"), ok=True, errors=[])
    history.record(report("b", "two"), ok=False, errors=[{"type": "SyntaxError"}])
    assert [(v["system"], v["report_hash"]) for v in history.versions("p", "basic")] == [("two", "b"), ("one", "a")]
    runs = history.runs()
    assert [(r["hash"], r["ok"]) for r in runs] == [("a", True), ("a", True), ("b", True), ("b", False)]
    assert runs[1]["changed_files"] == ["x.py"] and runs[3]["errors"] == [{"type": "SyntaxError"}]
    history.close()


def test_a_failed_load_adds_versions_of_the_prompts_that_loaded_and_none_for_stale_ones(tmp_path: Path) -> None:
    history = History(tmp_path)
    history.record(project_report("a", {("p", "basic"): "p1", ("q", "basic"): "q1"}), ok=True, errors=[])
    failed = project_report("b", {("p", "basic"): "p2", ("q", "basic"): "q-stale"})
    failed["prompts"][1]["stale"] = True  # its module failed: the session marks what it shows as stale
    history.record(failed, ok=False, errors=[{"type": "NameError"}])
    assert [v["system"] for v in history.versions("p", "basic")] == ["p2", "p1"]
    assert [v["system"] for v in history.versions("q", "basic")] == ["q1"]
    history.close()


def test_an_unchanged_prompt_costs_no_new_text_or_version_over_many_saves(tmp_path: Path) -> None:
    history = History(tmp_path)
    texts = {("still", "basic"): "I never change. " * 50, ("moving", "basic"): "edit 0"}
    history.record(project_report("r0", texts), ok=True, errors=[])
    assert (rows(tmp_path, "blobs"), rows(tmp_path, "versions")) == (2, 2)
    for n in range(1, 31):
        texts[("moving", "basic")] = f"edit {n}"
        history.record(project_report(f"r{n}", texts), ok=True, errors=[], changed_files=["moving.py"])
    # 30 saves: one new text and one version each, all for the prompt that moved
    assert (rows(tmp_path, "blobs"), rows(tmp_path, "versions")) == (32, 32)
    assert len(history.versions("still", "basic")) == 1
    assert len(history.versions("moving", "basic")) == 31
    assert len(history.runs()) == 31
    history.close()


def test_previous_system_skips_versions_where_this_prompt_did_not_change(tmp_path: Path) -> None:
    history = History(tmp_path)
    history.record(report("a", "old text"), ok=True, errors=[])
    history.record(report("b", "new text"), ok=True, errors=[])
    # Another prompt changed; this one did not: its previous version is still "old text".
    other = report("c", "new text")
    other["prompts"].append({"id": "q", "examples": [{"name": "basic", "inspection": {"system": "q1"}}]})
    history.record(other, ok=True, errors=[])
    assert history.previous_system("p", "basic", "new text") == "old text"
    assert history.previous_system("q", "basic", "q1") is None
    assert history.previous_system("p", "missing-example", "new text") is None
    assert history.previous_system("p", "basic", None) == "new text"  # nothing shown now: the newest stored
    history.close()


def test_previous_system_is_right_after_edits_back_and_forth(tmp_path: Path) -> None:
    history = History(tmp_path)
    seen = []
    for digest, text in [("a", "A"), ("b", "B"), ("a", "A"), ("b", "B"), ("c", "C"), ("a", "A")]:
        history.record(report(digest, text), ok=True, errors=[])
        seen.append(history.previous_system("p", "basic", text))
    assert seen == [None, "A", "B", "A", "B", "C"]
    assert rows(tmp_path, "blobs") == 3  # A, B and C once each, however often they come back
    assert [v["system"] for v in history.versions("p", "basic")] == ["A", "C", "B", "A", "B", "A"]
    history.close()


def test_previous_system_reads_the_stored_versions_while_the_newest_is_still_being_written(tmp_path: Path) -> None:
    history = History(tmp_path)
    history.record(report("a", "one"), ok=True, errors=[])
    # the session shows "two" before its write lands: the previous version is the same either way
    assert history.previous_system("p", "basic", "two") == "one"
    history.record(report("b", "two"), ok=True, errors=[])
    assert history.previous_system("p", "basic", "two") == "one"
    history.close()


def test_history_survives_reopening_the_file(tmp_path: Path) -> None:
    first = History(tmp_path)
    first.record(report("a", "one"), ok=True, errors=[])
    first.record(report("b", "two"), ok=True, errors=[])
    first.close()
    again = History(tmp_path)
    assert again.previous_system("p", "basic", "two") == "one"
    again.record(report("b", "two"), ok=True, errors=[])  # reopened and unchanged: no new version
    assert len(again.versions("p", "basic")) == 2
    again.close()


def test_a_version_written_by_another_process_is_not_taken_for_the_newest_of_this_one(tmp_path: Path) -> None:
    mine, theirs = History(tmp_path), History(tmp_path)
    mine.record(report("a", "one"), ok=True, errors=[])
    theirs.record(report("b", "two"), ok=True, errors=[])
    mine.record(report("a", "one"), ok=True, errors=[])  # "one" again after their "two": a new version
    assert [v["system"] for v in mine.versions("p", "basic")] == ["one", "two", "one"]
    assert mine.previous_system("p", "basic", "one") == "two"
    mine.close()
    theirs.close()


# -- retention -----------------------------------------------------------------------------------

def test_retention_by_count_keeps_the_newest_versions_and_deletes_texts_no_version_uses(tmp_path: Path) -> None:
    history = History(tmp_path, retention=Retention(keep=3))
    history.record(project_report("s", {("other", "basic"): "shared"}), ok=True, errors=[])
    for n in range(10):
        history.record(project_report(f"r{n}", {("other", "basic"): "shared", ("p", "basic"): f"text {n}"}), ok=True, errors=[])
    assert [v["system"] for v in history.versions("p", "basic")] == ["text 9", "text 8", "text 7"]
    assert history.previous_system("p", "basic", "text 9") == "text 8"
    with sqlite3.connect(tmp_path / ".crux" / "devtools.sqlite3") as db:
        texts = sorted(t for (t,) in db.execute("SELECT text FROM blobs"))
    assert texts == ["shared", "text 7", "text 8", "text 9"]
    history.close()


def test_retention_by_size_deletes_the_oldest_versions_first_and_keeps_the_two_newest_of_each(tmp_path: Path) -> None:
    limit = 0.5  # MB
    history = History(tmp_path, retention=Retention(keep=1000, max_mb=limit))
    big = 40_000  # bytes per text: 40 versions are 1.6 MB of text, three times the limit
    history.record(project_report("s", {("small", "basic"): "s0"}), ok=True, errors=[])
    history.record(project_report("s1", {("small", "basic"): "s1"}), ok=True, errors=[])
    for n in range(40):
        texts = {("small", "basic"): "s1", ("p", "basic"): f"{n:03d}" + "x" * big}
        history.record(project_report(f"r{n}", texts), ok=True, errors=[])
    kept = [v["system"][:3] for v in history.versions("p", "basic")]
    assert 2 <= len(kept) < 40 and kept == [f"{n:03d}" for n in range(39, 39 - len(kept), -1)]
    assert [v["system"] for v in history.versions("small", "basic")] == ["s1", "s0"]  # oldest overall, but one of its two newest
    with sqlite3.connect(tmp_path / ".crux" / "devtools.sqlite3") as db:
        assert db.execute("SELECT COUNT(*) FROM blobs").fetchone()[0] == len(kept) + 2
        used = db.execute("PRAGMA page_count").fetchone()[0] * db.execute("PRAGMA page_size").fetchone()[0]
    history.close()
    assert used <= limit * 1024 * 1024
    assert (tmp_path / ".crux" / "devtools.sqlite3").stat().st_size <= limit * 1024 * 1024  # freed pages were given back


def test_the_two_newest_versions_stay_even_when_they_alone_pass_the_size_limit(tmp_path: Path) -> None:
    history = History(tmp_path, retention=Retention(keep=10, max_mb=0.01))
    for n in range(4):
        history.record(report(f"r{n}", f"{n}" + "y" * 20_000), ok=True, errors=[])
    assert [v["system"][0] for v in history.versions("p", "basic")] == ["3", "2"]
    assert history.previous_system("p", "basic", "3" + "y" * 20_000)[0] == "2"  # type: ignore[index]
    history.close()


def write_pyproject(root: Path, body: str) -> None:
    root.mkdir(exist_ok=True)
    (root / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.crux-devtools]\n' + body, encoding="utf-8")


def test_the_retention_settings_are_read_from_pyproject_with_clear_defaults(tmp_path: Path) -> None:
    assert read_retention(tmp_path) == Retention(DEFAULT_KEEP, DEFAULT_MAX_MB) == Retention(200, 50.0)
    write_pyproject(tmp_path, "history_keep = 20\nhistory_max_mb = 2.5\n")
    assert read_retention(tmp_path) == Retention(20, 2.5)
    history, warning = open_history(tmp_path)
    assert warning is None and history is not None and history.retention == Retention(20, 2.5)
    history.close()


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('history_keep = "lots"\n', "pyproject.toml:5: [tool.crux-devtools] history_keep must be a whole number of versions kept per prompt and example, at least 2 (default 200), got 'lots'"),
        ("history_keep = 1\n", "pyproject.toml:5: [tool.crux-devtools] history_keep must be a whole number of versions kept per prompt and example, at least 2 (default 200), got 1"),
        ("history_keep = 5\nhistory_max_mb = 0\n", "pyproject.toml:6: [tool.crux-devtools] history_max_mb must be a size in megabytes above 0, such as 50 (default 50), got 0"),
        ('history_max_mb = "50MB"\n', "pyproject.toml:5: [tool.crux-devtools] history_max_mb must be a size in megabytes above 0, such as 50 (default 50), got '50MB'"),
        ("history_max_mb = true\n", "pyproject.toml:5: [tool.crux-devtools] history_max_mb must be a size in megabytes above 0, such as 50 (default 50), got True"),
    ],
)
def test_a_bad_retention_setting_names_its_line_and_turns_history_off_with_one_warning(
    tmp_path: Path, body: str, expected: str, caplog: pytest.LogCaptureFixture
) -> None:
    write_pyproject(tmp_path, body)
    with pytest.raises(HistoryUnavailable) as raised:
        read_retention(tmp_path)
    assert str(raised.value) == expected
    with caplog.at_level(logging.WARNING, logger="crux_devtools.inspector.session.history"):
        history, warning = open_history(tmp_path)
    assert history is None
    assert warning == f"history is off: {expected}; diffs against earlier versions are unavailable"
    assert [r.getMessage() for r in caplog.records] == [warning]


# -- opening files of other releases -------------------------------------------------------------

OLD_SCHEMA = """
CREATE TABLE IF NOT EXISTS reports (
    hash TEXT PRIMARY KEY,
    first_seen TEXT NOT NULL,
    seq INTEGER NOT NULL,
    report TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    started_at TEXT NOT NULL,
    hash TEXT,
    ok INTEGER NOT NULL,
    duration_ms REAL,
    errors TEXT NOT NULL,
    changed_files TEXT NOT NULL
);
"""


def old_record(db: sqlite3.Connection, report: dict[str, Any], ok: bool, n: int) -> None:
    """What the earlier release wrote per load (a whole report per distinct report)."""
    stamp = f"2026-11-01T10:00:{n:02d}+00:00"
    if ok:
        seq = db.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM reports").fetchone()[0]
        db.execute(
            "INSERT INTO reports(hash, first_seen, seq, report) VALUES (?, ?, ?, ?) ON CONFLICT(hash) DO UPDATE SET seq = excluded.seq",
            (report["hash"], stamp, seq, json.dumps(report)),
        )
    db.execute(
        "INSERT INTO runs(started_at, hash, ok, duration_ms, errors, changed_files) VALUES (?, ?, ?, ?, ?, ?)",
        (stamp, report["hash"], int(ok), 1.0, json.dumps([] if ok else [{"type": "E"}]), json.dumps([f"f{n}.py"])),
    )


def old_previous_system(db: sqlite3.Connection, prompt_id: str, example: str) -> str | None:
    """The earlier release's answer for the newest report: walk back to the first differing text."""
    stored = [json.loads(r) for (r,) in db.execute("SELECT report FROM reports ORDER BY seq DESC")]
    now = system_of(stored[0], prompt_id, example)
    for old in stored[1:]:
        text = system_of(old, prompt_id, example)
        if text is not None and text != now:
            return text
    return None


def test_a_file_of_the_earlier_release_is_migrated_and_keeps_every_previous_version_answer(tmp_path: Path) -> None:
    (tmp_path / ".crux").mkdir()
    path = tmp_path / ".crux" / "devtools.sqlite3"
    keys = [(p, e) for p in ("p", "q", "r") for e in ("plain", "other")]
    # a history with edits back and forth, a prompt that goes away and comes back, a failed load,
    # an example without an inspection, and a report seen again (its seq moves up)
    plan: list[tuple[dict[tuple[str, str], str], bool]] = [
        ({k: f"{k[0]}{k[1]} v1" for k in keys}, True),
        ({**{k: f"{k[0]}{k[1]} v1" for k in keys}, ("p", "plain"): "p v2"}, True),
        ({**{k: f"{k[0]}{k[1]} v1" for k in keys}, ("p", "plain"): "p v2", ("q", "other"): "q v2"}, False),
        ({k: f"{k[0]}{k[1]} v1" for k in keys if k[0] != "r"} | {("p", "plain"): "p v1b"}, True),
        ({k: f"{k[0]}{k[1]} v1" for k in keys} | {("p", "plain"): "p v2"}, True),
        ({k: f"{k[0]}{k[1]} v1" for k in keys} | {("p", "plain"): "p v2", ("r", "other"): "r v3"}, True),
    ]
    with sqlite3.connect(path) as db:
        db.executescript(OLD_SCHEMA)
        for n, (texts, ok) in enumerate(plan):
            body = project_report("h" + json.dumps(sorted(texts.items())), texts)
            body["prompts"].append({"id": "s", "examples": [{"name": "plain", "inspection": None, "error": {"type": "E"}}]})
            old_record(db, body, ok, n)
        expected = {k: old_previous_system(db, *k) for k in [*keys, ("s", "plain"), ("nope", "plain")]}
        newest = json.loads(db.execute("SELECT report FROM reports ORDER BY seq DESC LIMIT 1").fetchone()[0])
        old_runs = db.execute("SELECT started_at, hash, ok, errors, changed_files FROM runs ORDER BY id").fetchall()
    db.close()
    assert expected[("p", "plain")] == "p v1b" and expected[("r", "other")] == "rother v1"  # the fixture is not trivial

    history = History(tmp_path)
    for key, answer in expected.items():
        assert history.previous_system(*key, system_of(newest, *key)) == answer, key
    # the old file kept a report seen twice once, at its later place: so do the versions
    assert [v["system"] for v in history.versions("p", "plain")] == ["p v2", "p v1b", "pplain v1"]
    assert [(r["started_at"], r["hash"], r["ok"], r["errors"], r["changed_files"]) for r in history.runs()] == [
        (s, h, bool(ok), json.loads(e), json.loads(c)) for s, h, ok, e, c in old_runs
    ]
    history.record(newest, ok=True, errors=[])  # the newest report again: nothing new to store
    assert len(history.versions("p", "plain")) == 3
    history.close()
    with sqlite3.connect(path) as db:
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert "reports" not in tables and {"blobs", "versions", "runs"} <= tables
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert db.execute("PRAGMA auto_vacuum").fetchone()[0] == 2  # incremental from now on


def test_migrating_a_large_old_file_gives_its_space_back(tmp_path: Path) -> None:
    (tmp_path / ".crux").mkdir()
    path = tmp_path / ".crux" / "devtools.sqlite3"
    with sqlite3.connect(path) as db:
        db.executescript(OLD_SCHEMA)
        filler = [{"id": f"x{i}", "examples": [{"name": "e", "inspection": {"system": "same " * 200}}]} for i in range(50)]
        for n in range(20):  # 20 whole reports that differ in one prompt
            body = project_report(f"h{n}", {("p", "e"): f"v{n}"})
            body["prompts"] += filler
            old_record(db, body, True, n)
    db.close()
    before = path.stat().st_size
    History(tmp_path).close()
    after = path.stat().st_size
    assert after < before / 5, (before, after)


def test_a_file_from_a_newer_release_is_refused_and_left_as_it_was(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    History(tmp_path).close()
    path = tmp_path / ".crux" / "devtools.sqlite3"
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with caplog.at_level(logging.WARNING, logger="crux_devtools.inspector.session.history"):
        history, warning = open_history(tmp_path)
    assert history is None and warning is not None
    assert warning.startswith(f"history is off: {path} was written by a newer release of crux_devtools (schema version {SCHEMA_VERSION + 1}; ")
    assert "upgrade crux_devtools, or move the file away" in warning
    assert [r.getMessage() for r in caplog.records] == [warning]
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION + 1


def test_a_damaged_file_is_history_off_with_one_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / ".crux").mkdir()
    (tmp_path / ".crux" / "devtools.sqlite3").write_bytes(b"not a database, one flipped page" * 200)
    with caplog.at_level(logging.WARNING, logger="crux_devtools.inspector.session.history"):
        history, warning = open_history(tmp_path)
    assert history is None and warning is not None
    assert "move the damaged file away to start a new history" in warning
    assert len(caplog.records) == 1


# -- through a real session ----------------------------------------------------------------------

async def test_a_session_answers_the_previous_version_from_the_file_after_edits_back_and_forth(tmp_path: Path) -> None:
    import asyncio

    from crux_devtools.inspector.session.service import ProjectSession
    from crux_devtools.inspector.transport.inprocess import in_process

    source = tmp_path / "hello_prompts.py"
    module = "from crux_devtools import prompt\n\nhello = prompt('hello', system={text!r}, examples={{'e': {{}}}})\nother = prompt('other', system='Same.', examples={{'e': {{}}}})\n"
    source.write_text(module.format(text="A."), encoding="utf-8")
    answers = []
    async with ProjectSession(tmp_path, transport=in_process, watch=False, prewarm=False) as session:
        assert session.history is not None
        for text in ["B.", "A.", "C.", "A."]:
            source.write_text(module.format(text=text), encoding="utf-8")
            await session.reload()
            while session._reports.writes:  # the write runs off the event loop; then the file alone answers
                await asyncio.gather(*list(session._reports.writes))
            answers.append(session.previous_system("hello", "e"))
        assert session.previous_system("other", "e") is None
        assert len(session._reports.recent) <= 4  # with a history file, only the reports a write may still hold
        assert [v["system"] for v in session.history.versions("hello", "e")] == ["A.", "C.", "A.", "B.", "A."]
        assert len(session.history.versions("other", "e")) == 1
    assert answers == ["A.", "B.", "A.", "C."]
    async with ProjectSession(tmp_path, transport=in_process, watch=False, prewarm=False) as later:
        assert later.previous_system("hello", "e") == "C."


SURROGATE = "read from a file that is not UTF-8: \udcff\udcfe"


def test_a_text_with_a_lone_surrogate_is_stored_as_it_is_and_later_writes_go_on(tmp_path: Path) -> None:
    history = History(tmp_path)
    history.record(project_report("a", {("p", "basic"): SURROGATE, ("q", "basic"): "q one", ("r\udcff", "e\udcfe"): "odd key"}), ok=True, errors=[])
    history.record(project_report("b", {("p", "basic"): "fixed", ("q", "basic"): "q two", ("r\udcff", "e\udcfe"): "odd key 2"}), ok=True, errors=[])
    assert [v["system"] for v in history.versions("p", "basic")] == ["fixed", SURROGATE]
    assert history.previous_system("p", "basic", "fixed") == SURROGATE
    assert history.previous_system("q", "basic", "q two") == "q one"  # every other prompt keeps its history
    assert history.previous_system("r\udcff", "e\udcfe", "odd key 2") == "odd key"
    history.close()
    reopened = History(tmp_path)  # the newest versions are read back with the same keys: nothing is written twice
    reopened.record(project_report("b", {("p", "basic"): "fixed", ("q", "basic"): "q two", ("r\udcff", "e\udcfe"): "odd key 2"}), ok=True, errors=[])
    assert len(reopened.versions("r\udcff", "e\udcfe")) == 2 and len(reopened.versions("p", "basic")) == 2
    reopened.close()


async def test_an_old_file_holding_a_lone_surrogate_is_migrated_and_the_session_starts(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from crux_devtools.inspector.session.service import ProjectSession
    from crux_devtools.inspector.transport.inprocess import in_process

    (tmp_path / ".crux").mkdir()
    with sqlite3.connect(tmp_path / ".crux" / "devtools.sqlite3") as db:
        db.executescript(OLD_SCHEMA)
        old_record(db, report("h1", SURROGATE, prompt_id="hello", example="e"), True, 0)  # json.dumps writes "\udcff" escapes
        old_record(db, report("h2", "B.", prompt_id="hello", example="e"), True, 1)
    db.close()
    (tmp_path / "hello_prompts.py").write_text("from crux_devtools import prompt\n\nhello = prompt('hello', system='B.', examples={'e': {}})\n")
    caplog.set_level(logging.WARNING)
    async with ProjectSession(tmp_path, transport=in_process, watch=False, prewarm=False) as session:
        assert session.history is not None and session.history_warning is None
        assert session.previous_system("hello", "e") == SURROGATE
    assert not [r for r in caplog.records if "history is off" in r.getMessage()]
