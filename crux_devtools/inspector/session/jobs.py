"""Jobs sent to the worker that holds a prompt: one generic ``call``, and one typed method per op.

A job on a prompt goes to the worker that holds it (``Workers.holder``: the owner of a stale
prompt's last good version, else the held worker); the answer is ``{"ok", "result" | "error"}``.
When no worker holds the project, the session reloads it first (``reload``). What cannot be asked of
any worker (a stale prompt whose version is gone, a project that did not load) is answered here
(``unavailable``, pure); a worker that fails a job (it crashed or hung) is dropped, so the next job
loads the project again, and its error is placed at the prompt (``located``, pure). The typed
methods turn a failed answer into their result's own shape (a failed example, a run that never
started, nothing prepared), so every front end shows it as it shows any other result.

Besides the jobs on a prompt: ``written`` (what the held worker's code wrote, for the verifier) and
``prime`` (a spare readied for the next load), neither of which may fail the session.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ...shapes import EvaluateRequest, PrepareRequest, PrimeRequest, ReplayContinueRequest, ReplaySendRequest, ReplayStepRequest, RunRequest
from ..api import failed_run, find_prompt
from ..errors import FailedExample, LoadError
from ..report_types import ExampleReport, LoadErrorDict, PrepareResult, PromptReport, Report
from ..transport.process import WorkerError, WorkerProcess
from ..transport.wire import MalformedRequest
from .workers import Workers

log = logging.getLogger(__name__)


def unavailable(report: Report | None, prompt_id: str) -> dict[str, Any]:
    """The answer when no live worker holds the prompt: a stale prompt's last good version is gone
    (fix the module to evaluate it again), else the project's first load error."""
    prompt = find_prompt(report, prompt_id)
    if prompt is not None and prompt.get("stale"):
        why = (
            f"{prompt.get('kind', 'prompt')} {prompt_id!r} is shown as it was when {prompt.get('file')} last loaded, "
            "and that version can no longer be evaluated; fix the module's load error to evaluate it again"
        )
        return {"ok": False, "error": LoadError.plain("StaleError", why, file=prompt["file"], line=prompt["line"]).to_dict()}
    errors = (report["errors"] if report is not None else []) or [LoadError.plain("LoadError", "the project could not be loaded").to_dict()]
    return {"ok": False, "error": errors[0]}


def located(error: LoadErrorDict, prompt: PromptReport | None) -> LoadErrorDict:
    """A worker's fault that names no file, placed at the prompt whose job it failed."""
    if not error.get("file") and prompt is not None:
        return {**error, "file": prompt.get("file"), "line": prompt.get("line")}
    return error


class Jobs:
    """The jobs one session sends to its workers (``report``: the report shown; ``reload``: a full load)."""

    def __init__(self, workers: Workers, report: Callable[[], Report | None], reload: Callable[[], Awaitable[None]], timeout: float) -> None:
        self._workers = workers
        self._report = report
        self._reload = reload
        self.timeout = timeout

    async def call(self, op: str, request: Mapping[str, Any]) -> dict[str, Any]:
        """Send a job (``op`` and its request) to the worker holding the prompt (the current project,
        or the last good version of a stale prompt's module); ``{"ok", "result" | "error"}``."""
        prompt_id = str(request.get("prompt_id"))
        if prompt_id not in self._workers.owners and not self._workers.alive:
            self._workers.held = None
            await self._reload()
        worker = self._workers.holder(prompt_id)
        if worker is None or not worker.alive:
            return unavailable(self._report(), prompt_id)
        try:
            return await worker.call(op, request, self.timeout)
        except WorkerError as exc:
            await self._workers.drop(worker)
            return {"ok": False, "error": located(exc.error, find_prompt(self._report(), prompt_id))}

    async def evaluate(self, request: EvaluateRequest) -> ExampleReport:
        """An ``ExampleReport``; a failure is a failed example (``custom`` for a custom input)."""
        answer = await self.call("evaluate", request)
        if answer["ok"]:
            return answer["result"]
        input = request.get("input")
        name = "custom" if input is not None else (request.get("example") or "")
        return FailedExample(name, input or {}, LoadError.from_dict(answer["error"])).to_dict()

    async def run(self, request: RunRequest) -> dict[str, Any]:
        """The whole run; a failure is a run that never started (``api.failed_run``)."""
        answer = await self.call("run", request)
        if answer["ok"]:
            return answer["result"]
        return failed_run(request["prompt_id"], answer["error"], input=request.get("input"))

    async def prepare(self, request: PrepareRequest) -> PrepareResult:
        """What was prepared and skipped; a failure prepared nothing and says why."""
        answer = await self.call("prepare", request)
        if not answer["ok"]:
            return {"prepared": [], "skipped": [], "error": answer["error"]}
        result: PrepareResult = answer["result"]
        return result

    async def replay_step(self, request: ReplayStepRequest) -> dict[str, Any]:
        return await self.call("replay_step", request)

    async def replay_continue(self, request: ReplayContinueRequest) -> dict[str, Any]:
        return await self.call("replay_continue", request)

    async def replay_send(self, request: ReplaySendRequest) -> dict[str, Any]:
        return await self.call("replay_send", request)

    async def written(self) -> list[str]:
        """The project files the held worker's code wrote (a thread it started may write at any
        time); none when it is busy (a Run: a verification is cheaper than the wait) or cannot say."""
        worker = self._workers.held
        if worker is None or not worker.alive or worker.lock.locked():
            return []
        try:
            answer = await worker.call("written", {}, self.timeout)
        except WorkerError as exc:
            log.info("asking the worker which files its code wrote failed: %s", exc)
            return []
        if answer.get("ok") and isinstance(answer.get("result"), dict):
            return [f for f in answer["result"].get("written", []) if isinstance(f, str)]
        return []

    async def prime(self, spare: WorkerProcess, message: PrimeRequest) -> None:
        """Ready the spare for the next load; a failure only costs that load its head start."""
        try:
            await spare.call("prime", message, self.timeout)
        except (WorkerError, MalformedRequest) as exc:  # the spare is replaced when it is taken; the load reports faults
            log.warning("priming the spare worker failed: %s", exc)
