"""Loading a project module by module, so one module's fault costs only that module.

The worker reports each step of a load as it starts (importing a module, evaluating a prompt, one
example) and streams each prompt's report (``wire.py``). The timeout applies to each step. When user
code hangs a step, or ends the worker (``os._exit``, a segfault), the step in flight names the
module or prompt to blame: it gets a load error with its file and line, and a fresh worker loads the
project again without it, keeping the reports already received. The common case, no fault, is one
worker and one request, as before.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .discovery import ModuleRef
from ..errors import LoadError, relative
from ..transport.pool import WorkerPool
from ..transport.process import WorkerError, WorkerProcess
from ..report_types import LoadErrorDict, PromptReport
from ...shapes import LoadRequest, UpdateRequest
from ..transport.wire import (
    ExampleStarted,
    ExitCalled,
    Imported,
    ImportStarted,
    MalformedReport,
    TargetReported,
    TargetStarted,
    check_load_error,
    malformed_error,
    parse_event,
)


@dataclass(frozen=True, slots=True)
class LoadOutcome:
    """What a load found: current prompts, errors, and which modules' prompts are not current.

    ``owners`` maps each prompt id to the discovered module it was found in (``ModuleRef.name``);
    ``broken`` names modules that failed (import error, hang, crash, a prompt that could not be
    evaluated): the session shows their last good prompts, marked stale. ``worker`` holds the loaded
    project (every module but those that hung or crashed it), or is None when no worker finished.
    """

    prompts: list[PromptReport]
    errors: list[LoadErrorDict]
    owners: dict[str, str]
    broken: frozenset[str]
    worker: WorkerProcess | None
    duration_ms: float = 0.0
    preload: list[str] = field(default_factory=list)
    counted: dict[str, list[Any]] | None = None
    workers_started: int = 1
    kind: Literal["full", "incremental"] = "full"  # "full": every module imported in a fresh worker; "incremental": ``update_project``
    reevaluated: list[str] = field(default_factory=list)  # ids of the targets evaluated by this load
    watched: dict[str, list[str]] = field(default_factory=dict)  # data file or folder/ -> modules that read it
    imported: list[str] = field(default_factory=list)  # project files the worker imported (relative)
    faulted: frozenset[str] = frozenset()  # modules that hung or ended a worker (import, or one of its targets)
    written: list[str] = field(default_factory=list)  # project files user code wrote (relative): their change is its own echo
    reimported: list[str] = field(default_factory=list)  # modules an update imported again


@dataclass(slots=True)
class Attempt:
    """What one worker said during a load, and so which step was in flight when it stopped."""

    module: ImportStarted | None = None
    target: TargetStarted | None = None
    example: str | None = None
    imported: dict[str, Imported] = field(default_factory=dict)
    targets: dict[str, TargetStarted] = field(default_factory=dict)
    reports: dict[str, TargetReported] = field(default_factory=dict)
    malformed: list[LoadErrorDict] = field(default_factory=list)

    def on_event(self, message: dict[str, Any]) -> None:
        try:
            event = parse_event(message)
        except MalformedReport as problem:
            self._malformed(message, problem)
            return
        if isinstance(event, ImportStarted):
            self.module = event
        elif isinstance(event, Imported):
            self.imported[event.module] = event
            self.module = None
        elif isinstance(event, TargetStarted):
            self.target, self.example = event, None
            self.targets[event.target] = event
        elif isinstance(event, ExampleStarted):
            self.example = event.example
        elif isinstance(event, TargetReported):
            self.reports[event.target] = event
            self.target = None
        elif isinstance(event, ExitCalled):
            pass  # the worker process keeps it for the error (``WorkerProcess.exit_call``)

    def _malformed(self, message: dict[str, Any], problem: MalformedReport) -> None:
        target = message.get("target") if message.get("event") == "report" else None
        if isinstance(target, str) and target in self.targets:
            started = self.targets[target]
            error = malformed_error(problem, what=f"report of {target!r}", file=started.file, line=started.line)
            self.reports[target] = TargetReported(target, None, error)
            self.target = None
        elif not self.malformed:
            self.malformed.append(malformed_error(problem, what="progress event"))


@dataclass(slots=True)
class Loader:
    """One load of one project version, over as many workers as faults require."""

    pool: WorkerPool
    root: Path
    refs: list[ModuleRef]
    timeout: float
    models: dict[str, Any] | None = None  # the project's model profiles (pyproject.toml), for every plan
    skip_modules: list[str] = field(default_factory=list)
    faults: dict[str, LoadErrorDict] = field(default_factory=dict)  # module name -> its error
    target_faults: dict[str, LoadErrorDict] = field(default_factory=dict)  # target id -> its error
    targets: dict[str, TargetStarted] = field(default_factory=dict)
    reports: dict[str, TargetReported] = field(default_factory=dict)
    started: int = 0

    async def run(self) -> LoadOutcome:
        # Each fault takes one module or prompt out, so this ends; the cap guards against a worker
        # broken in a way that names nothing new (user code replacing the inspector's functions).
        stale_retried = False
        for _ in range(2 * len(self.refs) + 5):
            try:
                worker = await self.pool.take()
            except OSError as exc:
                error = LoadError.plain("WorkerError", f"cannot start a worker process ({exc}); check the Python environment").to_dict()
                return self._give_up(error)
            self.started += 1
            attempt = Attempt()
            request: LoadRequest = {
                "root": str(self.root),
                "modules": [m.to_dict() for m in self.refs],
                "progress": True,
                "models": self.models,
                "skip_modules": self.skip_modules,
                "skip_targets": [*self.target_faults, *self.reports],
            }
            try:
                answer = await worker.call("load", request, self.timeout, on_event=attempt.on_event)
            except WorkerError as exc:
                await worker.close()
                self._keep(attempt)
                if not self._blame(attempt, exc.error):
                    return self._give_up(exc.error, attempt)
                continue
            if not answer.get("ok"):
                await worker.close()
                error = _checked_error(answer.get("error"))
                if error["type"] == "StaleWorker" and not stale_retried:
                    stale_retried = True  # a library the spare pre-imported changed: load in a fresh one
                    continue
                return self._give_up(error, attempt)
            self._keep(attempt)
            return self._finish(worker, attempt, answer)
        message = "the worker failed too many times while loading; the modules not yet loaded are not shown"
        return self._give_up(LoadError.plain("WorkerError", message).to_dict())

    def _keep(self, attempt: Attempt) -> None:
        """Keep the reports of an attempt: a later worker skips those prompts."""
        self.targets.update(attempt.targets)
        self.reports.update(attempt.reports)

    def _file_of(self, name: str) -> str | None:
        ref = next((r for r in self.refs if r.name == name), None)
        return relative(self.root, ref.path) if ref is not None and ref.path else None

    def _blame(self, attempt: Attempt, error: LoadErrorDict) -> bool:
        """Record a fault against the module or prompt in flight; False when nothing was in flight."""
        if attempt.target is not None:
            started = attempt.target
            example = f" (example {attempt.example!r})" if attempt.example else ""
            self.target_faults[started.target] = _fault(error, f"evaluating {started.kind} {started.target!r}{example}", started.file, started.line)
            return True
        if attempt.module is not None:
            name = attempt.module.module
            file = self._file_of(name) or attempt.imported.get(name, Imported(name, None, None)).file
            self.faults[name] = _fault(error, f"importing {file or name}", file, 1)
            self.skip_modules.append(name)
            return True
        return False  # between steps: no module or prompt to blame

    def _give_up(self, error: LoadErrorDict, attempt: Attempt | None = None) -> LoadOutcome:
        """No worker finished the load: every module not known to be fine is broken."""
        prompts, errors, owners, broken = self._collect(attempt.imported if attempt else {}, [], [])
        errors.append(error)
        everything = frozenset(r.name for r in self.refs)
        return LoadOutcome(prompts, errors, owners, everything, None, workers_started=self.started, faulted=everything)

    def _finish(self, worker: WorkerProcess, attempt: Attempt, answer: dict[str, Any]) -> LoadOutcome:
        result = answer.get("result")
        extra: list[LoadErrorDict] = []
        if not isinstance(result, dict):
            extra.append(malformed_error(MalformedReport(f"the result is {type(result).__name__}"), what="load result"))
            result = {}
        order = result.get("order")
        if not isinstance(order, list) or not all(isinstance(t, str) for t in order):
            extra.append(malformed_error(MalformedReport("it has no list of prompt ids ('order')"), what="load result"))
            order = []
        errors_in = result.get("errors")
        others: list[LoadErrorDict] = []
        for error in errors_in if isinstance(errors_in, list) else []:
            try:
                others.append(check_load_error(error))
            except MalformedReport as problem:
                extra.append(malformed_error(problem, what="load error"))
        done = {*self.reports, *self.target_faults}
        for target in order:
            if target not in done:  # found by the worker, never reported on: say so, never drop it silently
                missing = MalformedReport(f"it found {target!r} but sent no report of it")
                extra.append(malformed_error(missing, what="load"))
        prompts, errors, owners, broken = self._collect(attempt.imported, others, attempt.malformed + extra, order)
        preload = result.get("preload")
        counted = result.get("counted")
        duration = answer.get("duration_ms")
        return LoadOutcome(
            prompts,
            errors,
            owners,
            frozenset(broken),
            worker,
            duration_ms=float(duration) if isinstance(duration, int | float) else 0.0,
            preload=[p for p in preload if isinstance(p, str)] if isinstance(preload, list) else [],
            counted=counted if _is_counted(counted) else None,
            workers_started=self.started,
            reevaluated=[p["id"] for p in prompts],
            watched=_watched(result.get("watched")),
            imported=_strings(result.get("imported")),
            written=_strings(result.get("written")),
            faulted=frozenset(self.faults) | {self.targets[t].module for t in self.target_faults if t in self.targets},
        )

    def _collect(
        self,
        imported: dict[str, Imported],
        others: list[LoadErrorDict],
        malformed: list[LoadErrorDict],
        order: Iterable[str] = (),
    ) -> tuple[list[PromptReport], list[LoadErrorDict], dict[str, str], set[str]]:
        """Prompts in project order and errors (modules in discovery order, then the rest)."""
        broken: set[str] = set(self.faults)
        errors: list[LoadErrorDict] = []
        for ref in self.refs:
            if ref.name in self.faults:
                errors.append(self.faults[ref.name])
            elif ref.name in imported and imported[ref.name].error is not None:
                errors.append(imported[ref.name].error)  # type: ignore[arg-type]
                broken.add(ref.name)
        errors.extend(others)
        rank = {target: i for i, target in enumerate(order)}
        prompts: list[PromptReport] = []
        owners: dict[str, str] = {}
        target_errors: list[tuple[int, LoadErrorDict]] = []
        for target, started in self.targets.items():
            report = self.reports.get(target)
            fault = self.target_faults.get(target)
            position = rank.get(target, len(rank))
            if report is not None and report.prompt is not None:
                prompts.append(report.prompt)
                owners[target] = started.module
                continue
            broken.add(started.module)
            error = fault if fault is not None else report.error if report is not None else None
            if error is not None:
                target_errors.append((position, error))
        prompts.sort(key=lambda p: rank.get(p["id"], len(rank)))
        errors.extend(error for _, error in sorted(target_errors, key=lambda pair: pair[0]))
        errors.extend(malformed)
        return prompts, errors, owners, broken


def _fault(error: LoadErrorDict, doing: str, file: str | None, line: int | None) -> LoadErrorDict:
    """The load error of a step that hung or ended the worker, located in the user's code."""
    fault = LoadError.from_dict(error)
    if fault.type == "TimeoutError":
        message = fault.message.replace("(load); the worker was killed.", f"while {doing}; the worker was killed and the rest was loaded without it.")
    else:
        message = f"{fault.message} while {doing}; the rest was loaded in a fresh worker without it"
    return dataclasses.replace(fault, message=message).located(file, line).to_dict()


def _checked_error(value: Any) -> LoadErrorDict:
    try:
        return check_load_error(value)
    except MalformedReport as problem:
        return malformed_error(problem, what="load error")


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _watched(value: Any) -> dict[str, list[str]]:
    if not isinstance(value, dict):
        return {}
    return {k: _strings(v) for k, v in value.items() if isinstance(k, str)}


def _is_counted(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("texts"), list) and isinstance(value.get("separated"), list)


async def load_project(pool: WorkerPool, root: Path, refs: list[ModuleRef], timeout: float, models: dict[str, Any] | None = None) -> LoadOutcome:
    """Load the project's modules in workers from ``pool``; see the module docstring."""
    return await Loader(pool, root, refs, timeout, models).run()


async def update_project(
    worker: WorkerProcess,
    refs: list[ModuleRef],
    files: list[str],
    timeout: float,
    *,
    retry: Iterable[str],
    previous: dict[str, PromptReport],
    protect: Iterable[str] = (),
) -> LoadOutcome | str:
    """Update the project held by ``worker`` after ``files`` changed (the ``update`` op).

    ``previous`` holds the current report of each target by id: a target the worker did not
    re-evaluate keeps it. Returns the outcome, or why a full load is needed instead (the worker
    crashed or hung, answered with an error, or a library changed): the caller then loads in full.
    """
    attempt = Attempt()
    request: UpdateRequest = {
        "files": list(files), "retry": sorted(retry), "known": sorted(previous), "protect": sorted(protect), "progress": True,
    }
    try:
        answer = await worker.call("update", request, timeout, on_event=attempt.on_event)
    except WorkerError as exc:
        return f"the update stopped the worker ({exc.error.get('type')}: {exc.error.get('message')})"
    if not answer.get("ok"):
        error = _checked_error(answer.get("error"))
        return f"the update failed ({error['type']}: {error['message']})"
    result = answer.get("result")
    if not isinstance(result, dict):
        return "the update answered no result"
    if isinstance(result.get("full"), str):
        return str(result["full"])
    order, refs_of, reevaluated = result.get("order"), result.get("refs"), result.get("reevaluated")
    if not (
        isinstance(order, list) and all(isinstance(t, str) for t in order)
        and isinstance(refs_of, dict) and all(isinstance(v, str) for v in refs_of.values())
        and isinstance(reevaluated, list) and all(isinstance(t, str) for t in reevaluated)
    ):
        return "the update answered a malformed result"
    errors: list[LoadErrorDict] = []
    broken: set[str] = set()
    for ref in refs:
        imported = attempt.imported.get(ref.name)
        if imported is not None and imported.error is not None:
            errors.append(imported.error)
            broken.add(ref.name)
    errors_in = result.get("errors")
    for error in errors_in if isinstance(errors_in, list) else []:
        try:
            errors.append(check_load_error(error))
        except MalformedReport as problem:
            errors.append(malformed_error(problem, what="load error"))
    prompts: list[PromptReport] = []
    owners: dict[str, str] = {}
    fresh: list[str] = []
    for target in order:
        module = refs_of.get(target, "")
        report = attempt.reports.get(target)
        if report is not None and report.prompt is not None:
            prompts.append(report.prompt)
            owners[target] = module
            fresh.append(target)
        elif report is not None and report.error is not None:
            broken.add(module)
            errors.append(report.error)
        elif target not in reevaluated and target in previous:
            prompts.append(previous[target])
            owners[target] = module
        else:  # found, never reported on: say so, never drop it silently
            broken.add(module)
            errors.append(malformed_error(MalformedReport(f"it found {target!r} but sent no report of it"), what="update"))
    errors.extend(attempt.malformed)
    duration = answer.get("duration_ms")
    return LoadOutcome(
        prompts,
        errors,
        owners,
        frozenset(broken),
        worker,
        duration_ms=float(duration) if isinstance(duration, int | float) else 0.0,
        workers_started=0,
        kind="incremental",
        reevaluated=fresh,
        watched=_watched(result.get("watched")),
        imported=_strings(result.get("imported")),
        written=_strings(result.get("written")),
        reimported=_strings(result.get("reimported")),
    )
