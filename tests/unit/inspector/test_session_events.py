"""The session's events as values: what a shown load says (one sentence for a notification), and how
each subscriber hears each event. No processes: test_session.py and test_verify.py check the events
of a live session."""

from __future__ import annotations

import asyncio
import logging
from typing import cast

import pytest

from crux_devtools.inspector.api import SessionEvent
from crux_devtools.inspector.report_types import LoadErrorDict, PromptReport, Report
from crux_devtools.inspector.session.events import Background, Subscribers, shown_event, verified_event
from crux_devtools.inspector.session.load import LoadOutcome


def report(prompts: int = 2, *, errors: list[LoadErrorDict] | None = None, stale: bool = False, disagreements: int = 0) -> Report:
    listed = [cast(PromptReport, {"id": f"p{i}"}) for i in range(prompts)]
    return cast(Report, {"version": 7, "prompts": listed, "errors": errors or [], "stale": stale, "disagreements": disagreements})


def load(kind: str = "full", reevaluated: tuple[str, ...] = ()) -> LoadOutcome:
    return LoadOutcome([], [], {}, frozenset(), None, kind=kind, reevaluated=list(reevaluated))  # type: ignore[arg-type]


def test_a_load_with_no_error_says_how_many_prompts_how_fast_and_after_which_changes() -> None:
    event = shown_event(report(), load(), ["p1"], ["a.py", "b.py", "c.py", "d.py"], 0.0424)
    assert event.summary == "Report 7: 2 prompt(s) in 42 ms after changes to a.py, b.py, c.py…"
    assert (event.kind, event.version, event.changed_prompts, event.load, event.verification) == ("report", 7, ["p1"], "full", "")
    assert shown_event(report(), load(), [], [], 0.001).summary == "Report 7: 2 prompt(s) in 1 ms"


def test_an_update_says_how_many_it_re_evaluated_and_a_verification_what_it_corrected() -> None:
    update = shown_event(report(), load("incremental", ("p0",)), ["p0"], ["a.py"], 0.01)
    assert update.summary == "Report 7: 2 prompt(s) in 10 ms after changes to a.py (1 re-evaluated)"
    assert (update.load, update.reevaluated) == ("incremental", ["p0"])
    corrected = shown_event(report(disagreements=2), load(), ["p0", "p1"], [], 0.5)
    assert corrected.summary == "Report 7: 2 prompt(s) in 500 ms, verified: a fresh load corrected 2 prompt(s)"
    assert corrected.verification == "corrected"


def test_a_load_with_errors_says_the_first_one_where_it_is_and_that_stale_prompts_are_shown() -> None:
    first = cast(LoadErrorDict, {"file": "alpha.py", "line": 3, "type": "SyntaxError", "message": "invalid syntax\n  x = (\n"})
    other = cast(LoadErrorDict, {"file": "beta.py", "line": 1, "type": "ValueError", "message": "second"})
    event = shown_event(report(errors=[first, other], stale=True), load(), [], ["alpha.py"], 0.1)
    assert event.kind == "error" and event.changed_files == ["alpha.py"]
    assert event.summary == "alpha.py:3: SyntaxError: invalid syntax (its module's last good prompts are shown, marked stale)"
    nowhere = cast(LoadErrorDict, {"file": None, "line": None, "type": "OSError", "message": "x" * 400})
    assert shown_event(report(errors=[nowhere]), load(), [], [], 0.1).summary == "OSError: " + "x" * 291  # one line of 300 characters


def test_a_verification_that_agrees_says_the_same_version_is_verified() -> None:
    event = verified_event(report(), ["p0", "p1"])
    assert event.summary == "Report 7 verified: a fresh load of the whole project agrees"
    assert (event.kind, event.version, event.load, event.reevaluated, event.verification) == ("report", 7, "full", ["p0", "p1"], "agreed")


async def test_every_subscriber_hears_each_event_in_order_though_one_fails(caplog: pytest.LogCaptureFixture) -> None:
    background = Background()
    subscribers = Subscribers(background.spawn)
    heard: list[str] = []

    def broken(event: SessionEvent) -> None:
        raise RuntimeError("a broken listener")

    async def later(event: SessionEvent) -> None:
        heard.append(f"later {event.summary}")

    subscribers.add(broken)
    stop = subscribers.add(lambda event: heard.append(event.summary))
    subscribers.add(later)
    assert subscribers
    with caplog.at_level(logging.ERROR, logger="crux_devtools.inspector.session.events"):
        subscribers.emit(SessionEvent("report", 1, "one"))
        await background.settled()
        stop()
        stop()  # twice: no error
        subscribers.emit(SessionEvent("error", 2, "two"))
        await background.settled()
    assert heard == ["one", "later one", "later two"]
    assert [r.getMessage().split(" failed on ")[1] for r in caplog.records] == ["report", "error"]  # logged, each time


def test_no_subscriber_is_no_listener() -> None:
    subscribers = Subscribers(lambda awaitable: None)
    assert not subscribers
    subscribers.add(print)()
    assert not subscribers


async def test_the_background_keeps_each_task_until_it_ends_and_cancels_the_rest_with_the_session() -> None:
    background = Background()
    done = asyncio.Event()

    async def quick() -> None:
        done.set()

    async def forever() -> None:
        await asyncio.Event().wait()

    background.spawn(quick())
    await background.settled()
    assert done.is_set() and not background.tasks
    background.spawn(forever())
    assert len(background.tasks) == 1
    await background.cancel()
    assert not background.tasks
