"""The jobs a session sends to its workers, against stand-in workers (no process): where a job goes,
what is answered when no worker can take it, and each op's failure in its result's own shape. The
process tests (test_session.py, test_incremental.py, test_isolation.py) send the same jobs to live workers."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from crux_devtools.inspector.errors import LoadError
from crux_devtools.inspector.report_types import LoadErrorDict, PromptReport, Report
from crux_devtools.inspector.session.jobs import Jobs, located, unavailable
from crux_devtools.inspector.session.workers import Workers
from crux_devtools.inspector.transport.process import WorkerError


def prompt(prompt_id: str, *, stale: bool = False) -> PromptReport:
    return cast(PromptReport, {"id": prompt_id, "kind": "agent", "file": f"{prompt_id}.py", "line": 4, "stale": stale})


def report(*prompts: PromptReport, errors: list[LoadErrorDict] | None = None) -> Report:
    return cast(Report, {"prompts": list(prompts), "errors": errors or []})


def load_error(file: str, message: str) -> LoadErrorDict:
    return LoadError.plain("ValueError", message, file=file, line=2).to_dict()


class Worker:
    """Answers each job with ``answer`` (or raises it), and says what it was asked."""

    def __init__(self, answer: dict[str, Any] | Exception, *, alive: bool = True) -> None:
        self.answer = answer
        self.alive = alive
        self.lock = asyncio.Lock()
        self.asked: list[tuple[str, dict[str, Any]]] = []
        self.closed = False

    async def call(self, op: str, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        self.asked.append((op, dict(request)))
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer

    async def close(self) -> None:
        self.closed = True
        self.alive = False


def jobs_over(held: Worker | None, shown: Report | None = None, owners: dict[str, Worker] | None = None) -> tuple[Jobs, Workers, list[str]]:
    workers = Workers(lambda awaitable: None)
    workers.held = cast(Any, held)
    workers.owners = cast(Any, owners or {})
    reloads: list[str] = []

    async def reload() -> None:
        reloads.append("reload")

    return Jobs(workers, lambda: shown, reload, timeout=1.0), workers, reloads


def test_a_stale_prompt_no_worker_holds_says_it_cannot_be_evaluated_at_its_own_line() -> None:
    answer = unavailable(report(prompt("beta", stale=True)), "beta")
    error = answer["error"]
    assert answer["ok"] is False and error["type"] == "StaleError"
    assert (error["file"], error["line"]) == ("beta.py", 4)
    assert "agent 'beta' is shown as it was when beta.py last loaded" in error["message"] and "fix the module's load error" in error["message"]


def test_without_a_worker_the_answer_is_the_projects_first_load_error_else_that_it_did_not_load() -> None:
    first, second = load_error("a.py", "first"), load_error("b.py", "second")
    assert unavailable(report(prompt("alpha"), errors=[first, second]), "alpha") == {"ok": False, "error": first}
    for shown in (None, report()):
        answer = unavailable(shown, "alpha")
        assert answer["error"]["type"] == "LoadError" and answer["error"]["message"] == "the project could not be loaded"


def test_a_workers_fault_that_names_no_file_is_placed_at_the_prompt() -> None:
    fault = LoadError.plain("WorkerCrashed", "the worker ended").to_dict()
    assert located(fault, prompt("alpha"))["file"] == "alpha.py" and located(fault, prompt("alpha"))["line"] == 4
    assert located(fault, None) == fault
    own = load_error("lib.py", "raised")
    assert located(own, prompt("alpha")) == own


async def test_a_job_goes_to_the_owner_of_a_stale_prompt_and_every_other_to_the_held_worker() -> None:
    held, keeper = Worker({"ok": True, "result": "held"}), Worker({"ok": True, "result": "keeper"})
    jobs, _, reloads = jobs_over(held, owners={"beta": keeper})
    assert (await jobs.call("evaluate", {"prompt_id": "beta"}))["result"] == "keeper"
    assert (await jobs.call("evaluate", {"prompt_id": "alpha"}))["result"] == "held"
    assert reloads == []


async def test_with_no_live_worker_the_project_is_loaded_again_before_the_job() -> None:
    jobs, workers, reloads = jobs_over(Worker({"ok": True}, alive=False), report(prompt("alpha")))
    answer = await jobs.call("evaluate", {"prompt_id": "alpha"})
    assert reloads == ["reload"] and workers.held is None
    assert answer["error"]["message"] == "the project could not be loaded"  # the reload (a stand-in here) held no worker


async def test_a_worker_that_fails_a_job_is_dropped_and_its_fault_is_placed_at_the_prompt() -> None:
    held = Worker(WorkerError(LoadError.plain("WorkerTimeout", "no answer in 1 s")))
    jobs, workers, _ = jobs_over(held, report(prompt("alpha")))
    answer = await jobs.call("run", {"prompt_id": "alpha"})
    assert answer["ok"] is False and answer["error"]["type"] == "WorkerTimeout" and answer["error"]["file"] == "alpha.py"
    assert workers.held is None and held.closed


async def test_a_failed_evaluation_is_a_failed_example_named_after_the_example_or_custom() -> None:
    jobs, _, _ = jobs_over(Worker({"ok": False, "error": load_error("alpha.py", "bad input")}), report(prompt("alpha")))
    named = await jobs.evaluate({"prompt_id": "alpha", "example": "short"})
    custom = await jobs.evaluate({"prompt_id": "alpha", "example": "short", "input": {"q": "hi"}})
    assert named["name"] == "short" and custom["name"] == "custom" and custom["input"] == {"q": "hi"}
    assert named["status"] == "error" and "bad input" in str(named["error"])


async def test_a_failed_run_is_a_run_that_never_started_and_a_failed_preparation_prepared_nothing() -> None:
    error = load_error("alpha.py", "not runnable")
    jobs, _, _ = jobs_over(Worker({"ok": False, "error": error}), report(prompt("alpha")))
    run = await jobs.run({"prompt_id": "alpha", "input": {"q": 1}})
    assert (run["target"], run["status"], run["error"], run["input"], run["recorded"]) == ("alpha", "error", error, {"q": 1}, False)
    assert await jobs.prepare({"prompt_id": "alpha"}) == {"prepared": [], "skipped": [], "error": error}


async def test_the_replay_jobs_send_their_request_as_it_is_under_their_own_op() -> None:
    held = Worker({"ok": True, "result": {}})
    jobs, _, _ = jobs_over(held)
    await jobs.replay_step({"prompt_id": "a", "run": "r1", "step": 2, "overrides": {}})
    await jobs.replay_continue({"prompt_id": "a", "run": "r1", "step": 2, "overrides": {}, "live_tools": True})
    await jobs.replay_send({"prompt_id": "a", "ask": True})
    assert [op for op, _ in held.asked] == ["replay_step", "replay_continue", "replay_send"]
    assert held.asked[1][1]["live_tools"] is True and held.asked[2][1] == {"prompt_id": "a", "ask": True}


async def test_what_the_worker_wrote_is_not_asked_of_a_busy_or_failing_worker() -> None:
    wrote = Worker({"ok": True, "result": {"written": ["out.txt", 3]}})
    jobs, _, _ = jobs_over(wrote)
    assert await jobs.written() == ["out.txt"]  # what is not a path is left out
    async with wrote.lock:  # a Run holds it: a verification is cheaper than the wait
        assert await jobs.written() == []
    failing, _, _ = jobs_over(Worker(WorkerError(LoadError.plain("WorkerCrashed", "gone"))))
    assert await failing.written() == []
    assert await jobs_over(None)[0].written() == []
