"""Which workers a session holds, keeps for stale prompts, and retires, as rules over plain values
(any object stands for a worker). No processes: test_incremental.py and test_isolation.py check
that a live session's workers follow them (a stale prompt still evaluated, a crashed one replaced)."""

from __future__ import annotations

from typing import cast

from crux_devtools.inspector.report_types import PromptReport
from crux_devtools.inspector.session.workers import holding_stale, replaced, stale_owners


class Worker:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


OLD, NEW, KEEPER = Worker("old"), Worker("new"), Worker("keeper")


def test_a_load_retires_the_worker_it_replaces_each_once() -> None:
    assert replaced([OLD, OLD, None], [NEW]) == [OLD]
    assert replaced([None], [NEW]) == []  # nothing was held


def test_a_worker_that_still_answers_a_stale_prompt_is_kept() -> None:
    assert replaced([OLD, KEEPER], [NEW, KEEPER]) == [OLD]
    assert replaced([OLD], [NEW, OLD]) == []  # the old held worker now answers a broken module's prompts


def test_a_failed_load_keeps_nothing_but_the_owners_of_stale_prompts() -> None:
    assert replaced([OLD, KEEPER], [None, KEEPER]) == [OLD]


def test_each_stale_prompt_stays_with_its_worker_else_goes_to_the_worker_held_until_now() -> None:
    assert stale_owners(["beta", "gamma"], {"beta": KEEPER}, OLD) == {"beta": KEEPER, "gamma": OLD}
    assert stale_owners(["beta"], {}, None) == {}  # no worker holds it: it cannot be evaluated
    assert stale_owners([], {"beta": KEEPER}, OLD) == {}  # fixed: no longer stale, no longer kept


def prompts(*ids: str) -> list[PromptReport]:
    return [cast(PromptReport, {"id": i}) for i in ids]


def test_the_held_worker_holds_a_broken_modules_last_good_version_only_when_it_answers_its_prompts() -> None:
    known = {"beta": prompts("b1", "b2"), "gamma": prompts("g1"), "alpha": prompts("a1")}
    broken = frozenset({"beta", "gamma"})
    owners = {"b2": OLD, "g1": KEEPER}
    assert holding_stale(known, broken, owners, OLD) == frozenset({"beta"})
    assert holding_stale(known, broken, owners, NEW) == frozenset()
    assert holding_stale(known, broken, owners, None) == frozenset()
    assert holding_stale(known, frozenset(), owners, OLD) == frozenset()  # nothing broken, nothing to protect
