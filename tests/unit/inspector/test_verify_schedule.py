"""Verification at rest as rules over plain values: what a verification compares, when one is
asked for, and which job of the runner it is. No processes, no files, no sockets; the timer runs on
the test's event loop with no wait (``after=0``). test_verify.py checks a live session verifies."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import cast

import pytest

from crux_devtools.inspector.report_types import LoadErrorDict
from crux_devtools.inspector.session.verify import Disagreement, Verifier, disagreement


def error(message: str, traceback: str = "Traceback (most recent call last): ...") -> LoadErrorDict:
    return cast(LoadErrorDict, {"file": "beta.py", "line": 2, "type": "ValueError", "message": message, "traceback": traceback})


SHOWN = {"alpha": "a1", "beta": "b1"}

# case, fresh hashes, errors shown, fresh errors, the disagreement
CASES: list[tuple[str, dict[str, str], list[LoadErrorDict] | None, list[LoadErrorDict], Disagreement]] = [
    ("the same prompts and errors", dict(SHOWN), [], [], Disagreement()),
    ("one prompt differs", {"alpha": "a1", "beta": "b2"}, [], [], Disagreement(("beta",))),
    ("a prompt only the fresh load has, and one it lacks", {"alpha": "a1", "gamma": "g1"}, [], [], Disagreement(("beta", "gamma"))),
    ("an error only the fresh load has", dict(SHOWN), [], [error("bad")], Disagreement((), True)),
    ("the same error with another traceback (its frames differ)", dict(SHOWN), [error("bad", "one")], [error("bad", "two")], Disagreement()),
    ("no report shown yet: its errors cannot differ", dict(SHOWN), None, [error("bad")], Disagreement()),
]


@pytest.mark.parametrize(("case", "fresh", "shown_errors", "fresh_errors", "expected"), CASES, ids=[c[0] for c in CASES])
def test_what_a_verification_compares(case: str, fresh: dict[str, str], shown_errors: list[LoadErrorDict] | None,
                                      fresh_errors: list[LoadErrorDict], expected: Disagreement) -> None:
    found = disagreement(SHOWN, fresh, shown_errors, fresh_errors)
    assert found == expected, case
    assert found.count == len(expected.changed) + int(expected.errors_differ)


def verifier(after: float = 0.0) -> tuple[Verifier, list[str]]:
    asked: list[str] = []
    return Verifier(Path("/p"), after, lambda: asked.append("verify")), asked


def test_compare_counts_every_disagreement_logs_the_changes_since_the_last_verification_and_forgets_them(caplog: pytest.LogCaptureFixture) -> None:
    v, _ = verifier()
    v.saw(["notes.md"])
    v.since.add("beta.py")
    caplog.set_level(logging.INFO, logger="crux_devtools.inspector.session.verify")
    assert v.compare(SHOWN, {"alpha": "a2", "beta": "b1"}, [], [error("bad")]) == 2
    assert (v.verifications, v.disagreements, v.since) == (1, 2, set())
    [warning] = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert "disagreed with the report shown on 1 prompt(s) and the load errors: alpha" in warning.getMessage()
    assert "beta.py, notes.md" in warning.getMessage()
    assert v.compare(SHOWN, dict(SHOWN), [], []) == 0
    assert (v.verifications, v.disagreements) == (2, 2)
    assert "agrees with the report shown (changes since the last verified report: none)" in caplog.records[-1].getMessage()


def test_the_runner_takes_a_verification_only_when_no_change_came_with_it() -> None:
    v, _ = verifier()
    assert not v.take([], False)  # none asked for
    v.asked = True
    assert v.take([], False) and not v.asked and not v.needed  # the verification, taken once
    v.asked = True
    assert not v.take(["beta.py"], False) and v.needed  # the save is loaded first, and verified later
    v.needed, v.asked = False, True
    assert not v.take([], True) and v.needed  # a full load asked for: the same


def test_a_report_is_verified_only_from_a_full_load_with_nothing_left_to_verify_and_no_change_pending() -> None:
    v, _ = verifier()
    assert v.is_verified("full", dirty=False)
    assert not v.is_verified("incremental", dirty=False)
    assert not v.is_verified("full", dirty=True)
    v.needed = True
    assert not v.is_verified("full", dirty=False)
    v.fresh_load()
    v.saw(["notes.md"])
    assert not v.is_verified("full", dirty=False) and v.pending
    v.fresh_load()
    assert v.is_verified("full", dirty=False) and not v.pending


def test_files_the_workers_own_code_wrote_are_echoes_not_changes() -> None:
    v, _ = verifier()
    v.saw(["heartbeat.txt", "notes.md"])
    assert v.explained(["heartbeat.txt"])  # notes.md is still unexplained
    assert v.unseen == {"notes.md"} and v.echoes == {"heartbeat.txt"}
    assert not v.explained(["notes.md"]) and not v.pending
    assert v.since == {"heartbeat.txt", "notes.md"}  # still said in the next verification's log


async def test_the_timer_asks_once_after_the_last_change_and_only_when_something_is_left() -> None:
    v, asked = verifier()
    v.arm()
    assert v.timer is not None
    await v.timer
    assert asked == []  # nothing to verify
    v.saw(["notes.md"])
    v.arm()
    first = v.timer
    v.arm()  # another change: the wait starts again
    assert first is not None and v.timer is not first
    await asyncio.gather(first, return_exceptions=True)
    assert first.cancelled()
    await v.timer
    assert asked == ["verify"] and not v.waiting
    v.arm()
    v.cancel()  # the session stops
    await asyncio.gather(v.timer, return_exceptions=True)
    assert v.timer.cancelled() and asked == ["verify"]
