"""``ProjectSession``: loads a project in a worker, re-evaluates on change, holds the latest report.

The web app and the TUI are thin adapters over it (see ``api.py`` for the contract). The session's
process never imports user code: discovery reads files, and every import, inspection, preview and
run happens in a worker process (``process.py``), module by module (``load.py``). Changes are
coalesced: while one evaluation runs, any number of further changes make at most one more.

Staleness is per module: a module that fails to load keeps its last good prompts in the report,
each marked ``"stale": true`` and still answered (budget, custom input) by the worker that loaded
them; the other modules' prompts are current. What a change calls for (a full load, an update, or
nothing but a verification later) and what stays shown stale are decided by the pure functions of
``reload_rules.py``; this class applies their answers, and owns the life cycle and the runner of
loads. The report held and its merge rules are ``held_report.py``'s (one frozen value), what the
held worker loaded ``loaded.py``'s (another), the verification schedule ``verify.py``'s, which
workers are held, kept or retired ``workers.py``'s, the jobs sent to them ``jobs.py``'s, the
subscribers and what each load says ``events.py``'s, the watch of the folder ``folder_watch.py``'s,
the history of shown reports ``report_history.py``'s, the recorded runs' poller ``features/runs/watch.py``'s.

Incremental evaluation. The first load is full: every module is imported in a fresh
worker, which records the import graph and the files user code read (``graph.py``). The session
keeps that worker, and a save becomes an ``update`` request to it: the worker forgets the changed
modules and the modules that (transitively) import them or read the changed file, imports them
again, and evaluates only their targets; every other prompt keeps its last report, and the other
modules' import-time code does not run again. Why an update in the held worker and not a fork of it:
a fork needs a second channel set up per save and would copy a heap the update mostly leaves alone;
the held worker already answers ``evaluate``/``run``/``prepare`` for what it holds, and every fault
has a safe way out. Any fault in an update (the worker crashed or hung, an exception in the
inspector's own code, a malformed answer) falls back to a full load in a fresh worker, as does a
change the held worker cannot take: ``pyproject.toml``, the module list, a changed library outside
the project (the worker compares the library files it imported with the disk), a module that hung or
ended a worker, and a module whose last good version (shown stale) the held worker keeps: an update
that crashed it would lose that version, so that save loads in full and the old worker keeps it.

At rest, the truth. The import graph cannot see everything user code does at import (a module that
appends to another's list, ``importlib`` in a callback, ``Path(...).exists()``, a symlink, a
process-wide registry), so an update's report is not *verified*: once no change came for
``verify_after`` seconds, a fresh worker (the warm spare) loads the whole project, its report
replaces the shown one where they differ (each difference logged and counted in ``disagreements``),
and it becomes the held worker (memory stays flat; process-wide state starts clean). Any change under
the project that no module imported or read (a file created, a link re-pointed) leads to a
verification too, except a file the worker's own code wrote (its echo: asked of the worker, which
records writes at any time). ``settled()`` waits for the verification.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from ..api import SessionEvent
from .discovery import ModuleRef, imported_note, read_project
from ..errors import LoadError
from .events import Background, Subscribers, shown_event, verified_event
from .folder_watch import FolderWatch
from .history import History
from ..transport.pool import StartWorker, WorkerPool
from ..transport.process import WorkerProcess
from .held_report import HeldReport, Merged
from .jobs import Jobs
from .loaded import Loaded, keep_broken, store_states
from .reload_rules import Change, Held, Incremental, VerifyOnly, concerns, decide, sort_changes
from .report_history import ReportHistory
from ..report_types import ExampleReport, LoadErrorDict, PrepareResult, Report
from ..features.runs.watch import RunsWatcher
from ...shapes import ReplayContinueRequest, ReplaySendRequest, ReplayStepRequest
from .load import LoadOutcome, load_project, update_project
from .verify import Verifier
from .workers import Workers, holding_stale

log = logging.getLogger(__name__)


class ProjectSession:
    """The inspector's one service: the latest report of the project in ``root``, kept live.

    ``timeout`` bounds each worker job (seconds); ``debounce`` groups file events; ``watch=False``
    loads once (CLI, tests); ``history=False`` keeps no SQLite file; ``prewarm=False`` starts each
    worker only when needed; ``fork=False`` starts each worker as a fresh interpreter instead of
    forking it from the pre-warmed fork server (slower: about a second of CPU per change).

    The session asks ``reload_rules`` what a change calls for and applies the answer; what it holds
    between two loads, and what always holds of it:

    - ``_workers`` (``workers.Workers``): ``held``, the held worker: it imported every healthy module
      of ``_loaded.modules`` and answers jobs for their prompts; ``None`` (or dead) means the next
      change is a full load; ``owners``: stale prompt id -> the worker holding that prompt's last good
      version (the held worker, or an older one kept alive for it). Every live worker is held, an
      owner, the pool's spare, or retiring (closed once its job in flight is answered).
    - ``_held`` (``held_report.HeldReport``, one frozen value, replaced after each load): the report
      shown, its version and prompt hashes, and ``known``: module name -> its last good prompts (a
      healthy module's current ones, a broken module's as it last loaded well). Its version grows by
      one per report shown (a verification that agrees keeps it), its hash only with its content.
    - ``_loaded`` (``loaded.Loaded``, one frozen value, replaced after each load): what the held
      worker loaded (``modules``: another list is a full load), which modules are ``broken`` (each
      shows its ``known`` prompts marked stale, and keeps its error until a load imports it again) or
      ``faulted`` (every change is a full load until one loads without them faulting), and what it
      ``imported`` and ``watched`` (read, or listed: a change to one is an update).
    - ``_verify`` (``verify.Verifier``): ``echoes``, files the held worker's own code wrote (their
      change is not a change); ``needed``, ``unseen``, ``since``: the report shown is not yet
      verified (an update's, or one a change skipped), the changed files no module read, and every
      change since the last verified report; a fresh full load at rest clears them.
    """

    def __init__(
        self,
        root: str | Path,
        *,
        timeout: float = 10.0,
        debounce: float = 0.05,
        watch: bool = True,
        history: bool = True,
        prewarm: bool = True,
        fork: bool = True,
        runs_poll: float = 0.1,
        verify_after: float = 0.3,
        pool: WorkerPool | None = None,
        transport: StartWorker | None = None,
    ) -> None:
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise NotADirectoryError(f"project folder {str(self.root)!r} does not exist or is not a folder")
        self.timeout = timeout
        self.watch = watch
        self.prewarm = prewarm
        # a damaged file or a read-only .crux: no history, one warning (the UIs show it too)
        self._reports = ReportHistory(self.root, history)
        self.history_warning = self._reports.warning
        self._background = Background()  # subscribers' awaitables, priming the spare, retiring workers
        self._subscribers = Subscribers(self._background.spawn)
        # ``pool``: one already warming (the TUI's launch); ``transport``: how workers start (``inprocess.in_process``: no process)
        self._pool = pool or WorkerPool(self.root, prewarm=prewarm, fork=fork, start=transport)
        # What is held between two loads: see the class docstring.
        self._held = HeldReport()
        self._workers = Workers(self._background.spawn)
        self._loaded = Loaded()
        self._jobs = Jobs(self._workers, lambda: self.report, self.reload, timeout)
        # The runner: one load at a time; what came meanwhile waits for the next (``_schedule``).
        self._runner: asyncio.Future[None] | None = None
        self._dirty = False
        self._full = False  # a full load was asked for (``reload()`` with no files)
        self._pending_files: set[str] = set()
        self.fallbacks = 0  # incremental updates that fell back to a full load (tests, benchmarks)
        self.evaluations = 0
        self._runs = RunsWatcher(self.root, self._emit, lambda: bool(self._subscribers), runs_poll)
        # Verification (see "At rest, the truth" in the module docstring).
        self._verify = Verifier(self.root, verify_after, lambda: self._schedule(verify=True))
        self._folder = FolderWatch(
            self.root, debounce, self._changed, lambda relative: self._loaded.reads_store(self.root, relative), self._schedule, self._watch_failed
        )
        # Called with each batch of changed files the watcher passed on, once the session has acted on
        # it (tests: a file written last and seen here means every earlier change was seen too).
        self.on_batch: Callable[[list[str]], object] | None = None

    # -- reading -------------------------------------------------------------------------------
    @property
    def report(self) -> Report | None:
        return self._held.report

    @property
    def verify_after(self) -> float:
        """Seconds with no change before a verification."""
        return self._verify.after

    @property
    def verifications(self) -> int:
        """Verification loads run (tests, benchmarks)."""
        return self._verify.verifications

    @property
    def disagreements(self) -> int:
        """Prompts (and error lists) a verification corrected, in total."""
        return self._verify.disagreements

    @property
    def missing_checks(self) -> int:
        """Looks at a missing project folder so far (tests)."""
        return self._folder.checks

    @property
    def _worker(self) -> WorkerProcess | None:
        """The held worker (``Workers.held``)."""
        return self._workers.held

    @property
    def history(self) -> History | None:
        """The history file (``.crux/devtools.sqlite3``), or ``None`` (``history=False``, or it could not be opened)."""
        return self._reports.file

    def subscribe(self, callback: Callable[[SessionEvent], Any]) -> Callable[[], None]:
        unsubscribe = self._subscribers.add(callback)
        self._runs.start()
        return unsubscribe

    def _emit(self, event: SessionEvent) -> None:
        self._subscribers.emit(event)

    def _loading(self, files: list[str], what: str) -> None:
        """A load of what changed begins (a verification, in the background, says nothing)."""
        self.evaluations += 1
        self._emit(SessionEvent("loading", self._held.version, f"Re-evaluating {what}…", changed_files=files))

    # -- life cycle ----------------------------------------------------------------------------
    async def start(self) -> None:
        """Load the project once (the first report), then watch files until ``stop``."""
        watching = self.watch and not self._folder.started
        preloading = self._folder.preload() if watching else None  # while the worker loads
        if self.prewarm:
            await self._pool.warm()
        await self.reload()
        if watching and not self._folder.started:
            await self._folder.start(preloading)
        self._runs.start()

    async def stop(self) -> None:
        self._verify.cancel()
        await self._folder.close()
        if self._runner is not None and not self._runner.done():
            self._runner.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._runner
        await self._runs.close()
        await self._background.cancel()
        await self._workers.close()
        await self._pool.close()
        await self._reports.close()

    async def __aenter__(self) -> ProjectSession:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def settled(self) -> None:
        """Wait until no evaluation or verification is running or pending (the report shown is then
        verified), the next worker is warm and the history is written (benchmarks, tests)."""
        while True:
            if self._runner is not None and not self._runner.done():
                await asyncio.shield(self._runner)
            elif self._verify.timer is not None and not self._verify.timer.done():
                await asyncio.wait({self._verify.timer})
            else:
                break
        await self._pool.ready()
        await self._background.settled()  # priming the spare, retiring old workers
        await self._reports.settled()

    def _watch_failed(self, exc: BaseException) -> None:
        self._emit(SessionEvent("error", self._held.version, f"Watching files stopped ({type(exc).__name__}: {exc}); reload by hand"))

    def _changed(self, files: list[str]) -> None:
        """Watcher callback: schedule a re-evaluation of the files that can change the report, and a
        verification after any other change (not one the worker's own code wrote, nor ``watch_ignore``)."""
        changes = sort_changes(files, watched=self._loaded.watched, ignore=self._loaded.ignore, echoes=self._verify.echoes)
        if changes.wanted:
            self._schedule(changes.wanted)
        if changes.unseen:
            self._verify.saw(changes.unseen)
        if changes.wanted or changes.unseen:
            self._verify.arm()
        if self.on_batch is not None:
            self.on_batch(files)

    def is_watched(self, relative: str) -> bool:
        """Whether a change to this project file (path relative to the root) can change the report:
        ``pyproject.toml``, a Python file, or a file (or a folder's entry) user code read while the
        worker loaded it; never one matching ``watch_ignore``."""
        return concerns(relative, self._loaded.watched, self._loaded.ignore)

    def _schedule(self, files: list[str] | tuple[str, ...] = (), *, verify: bool = False) -> asyncio.Future[None]:
        self._pending_files.update(files)
        if verify:
            self._verify.asked = True
        else:
            self._full = self._full or not files
        self._dirty = True
        if self._runner is None or self._runner.done():
            self._runner = asyncio.ensure_future(self._run_pending())
        return self._runner

    async def reload(self, changed_files: list[str] | tuple[str, ...] = ()) -> None:
        """Re-evaluate the project now (joining an evaluation already under way)."""
        await asyncio.shield(self._schedule(changed_files))

    async def _run_pending(self) -> None:
        while self._dirty:
            self._dirty = False
            files = sorted(self._pending_files)
            self._pending_files.clear()
            full, self._full = self._full, False
            verifying = self._verify.take(files, full)  # a change to a module first: it is verified later
            # only files the worker's own code wrote changed (asked of it): nothing to verify
            if verifying and not self._verify.needed and not self._verify.explained(await self._jobs.written()):
                continue
            if verifying:
                self._reports.release()  # in the background: see ``ReportHistory.remember``
            await self._load(files, full=full or verifying, verifying=verifying)
        if self._verify.pending:
            self._verify.arm()

    # -- loading -------------------------------------------------------------------------------
    async def _load(self, files: list[str], *, full: bool = True, verifying: bool = False) -> None:
        started = time.perf_counter()
        self._verify.since.update(files)
        try:
            discovery, models, config_errors, ignore = await asyncio.to_thread(read_project, self.root)
            self._loaded = dataclasses.replace(self._loaded, note=imported_note(discovery))  # the report says which files run, and why
        except OSError as exc:
            self._unreadable(exc, files, started)
            return
        names = [m.name for m in discovery.modules]
        errors = list(discovery.errors) + config_errors
        outcome: LoadOutcome | None = None
        decision = decide(Change(tuple(files), full), self._holding(discovery.modules))
        if isinstance(decision, VerifyOnly):
            # Nothing the held worker imported or read changed: no update, no event; a fresh load
            # verifies it (a new module behind ``try: import``, a file looked at but not opened).
            log.debug("%s: %s; verifying in the background", self.root, decision.reason)
            self._verify.needed = True
            return
        if isinstance(decision, Incremental):
            self._loading(files, "the changed modules")
            # The prompts of the modules that are not kept stale are current: a target the update does
            # not evaluate again keeps its report.
            previous = {p["id"]: p for name, ps in self._held.known.items() if name not in decision.keep_stale for p in ps}
            assert self._worker is not None
            update = await update_project(
                self._worker, discovery.modules, files, self.timeout, retry=decision.retry, previous=previous, protect=decision.protect
            )
            if isinstance(update, str):
                self.fallbacks += 1
                log.info("incremental update of %s fell back to a full load: %s", self.root, update)
            else:
                outcome = keep_broken(update, decision, discovery.modules, self.root, self.report)
                self._verify.needed = True
        elif not verifying:  # a verification runs in the background: the report shown stays until it is done
            self._loading(files, "the project")
        self._loaded = dataclasses.replace(self._loaded, ignore=ignore)
        loaded_all = outcome is None
        if outcome is None:
            self._verify.fresh_load()  # a change from here on is verified by another load
            outcome = await load_project(self._pool, self.root, discovery.modules, self.timeout, models)
        # what the stores the project reads held as this load read them: a later event that leaves them so is no change
        stores = store_states(self.root, outcome.watched)
        self._loaded = self._loaded.after(outcome, stores=stores, full=discovery.modules if loaded_all else None)
        self._verify.echoes = set(outcome.written)
        self._hold(outcome, names, errors, files, time.perf_counter() - started, bool(discovery.modules), verifying=verifying)
        if outcome.kind == "incremental":
            return  # the spare made after the last full load still waits for the next one
        # The next change's worker warms up while the person edits, primed with this load's libraries,
        # the texts it counted (token counts are cached by content: unchanged parts then cost nothing)
        # and the project's files compiled as they are now (an unchanged file is not compiled again).
        spare = await self._pool.warm()
        if spare is not None:
            self._background.spawn(self._jobs.prime(spare, self._loaded.prime_request(self.root, self.report)))

    def _unreadable(self, exc: OSError, files: list[str], started: float) -> None:
        """The project folder could not be read: a report with that one error. A folder removed is
        said once and looked for until it is back (``FolderWatch.look_for_folder``), never reloaded meanwhile."""
        gone = not self.root.is_dir()
        if gone and self._folder.missing:
            return  # said already: the folder watch reloads when it is back
        self._loading(files, "the project")
        self._verify.needed = False  # nothing can be loaded: the next change tries again
        said = f"cannot read the project folder: {exc}"
        if gone:
            self._verify.unseen.clear()  # nothing to verify against until it is back
            self._folder.look_for_folder()
            said += "; waiting for it to come back, then it is loaded again"
        error = LoadError.plain(type(exc).__name__, said).to_dict()
        failed = LoadOutcome([], [error], {}, frozenset(self._held.known), None)
        self._hold(failed, list(self._held.known), [], files, time.perf_counter() - started, False)

    def _holding(self, modules: list[ModuleRef]) -> Held:
        """What this session holds, for ``reload_rules.decide``: what the held worker loaded, and whether it lives."""
        holds_stale = holding_stale(self._held.known, self._loaded.broken, self._workers.owners, self._workers.held)
        return self._loaded.holding(modules, self.root, worker_alive=self._workers.alive, has_report=self.report is not None, holds_stale=holds_stale)

    def _hold(
        self, outcome: LoadOutcome, names: list[str], errors: list[LoadErrorDict], files: list[str], elapsed: float, found_modules: bool, *,
        verifying: bool = False,
    ) -> None:
        """Show a load: merged into the held report (``HeldReport.merge``), compared with the report
        shown when it verifies it (``Verifier.compare``), its workers held (``Workers.swap``), remembered
        and written to the history, and said in one event (``events.shown_event``)."""
        merged = self._held.merge(outcome, names, errors)
        shown = self._held.report
        verified = self._verify.is_verified(outcome.kind, self._dirty)
        disagreements = 0
        if verifying:
            disagreements = self._verify.compare(self._held.hashes, merged.hashes, shown["errors"] if shown is not None else None, merged.errors)
            if not disagreements and shown is not None:
                self._confirm(outcome, merged, shown, verified, files)
                return
        self._held = merged.shown(
            outcome, project=str(self.root), generated_at=datetime.now(UTC).isoformat(), found_modules=found_modules, verified=verified,
            disagreements=disagreements, imported_note=self._loaded.note,
        )
        report = self._held.report
        assert report is not None
        self._workers.swap(outcome.worker, merged.stale)
        self._reports.remember(report)
        self._reports.record(report, files)
        self._emit(shown_event(report, outcome, merged.changed, files, elapsed))

    def _confirm(self, outcome: LoadOutcome, merged: Merged, shown: Report, verified: bool, files: list[str]) -> None:
        """A verification that agrees: hold its fresh worker; the report keeps its version and says it is
        verified (``Merged.confirmed``: one "report" event when that changed, so the front ends show it)."""
        self._workers.swap(outcome.worker, merged.stale)
        self._held = merged.confirmed(outcome, verified=verified, imported_note=self._loaded.note)
        report = self._held.report
        assert report is not None
        self._reports.replace(shown, report)
        self._reports.record(report, files)
        if verified and not shown["verified"]:
            self._emit(verified_event(report, outcome.reevaluated))

    # -- jobs in the worker (``jobs.Jobs``: the request's shape in, the result's shape out) ----------
    async def evaluate(
        self, prompt_id: str, *, example: str | None = None, input: dict[str, Any] | None = None, token_budget: int | None = None,
        input_budget: int | None = None, messages: dict[str, Any] | None = None, model: str | None = None,
    ) -> ExampleReport:
        """One example (or custom input) re-evaluated in the worker; returns an ``ExampleReport``.
        ``messages`` (``replaying.step_messages``): plan the request as at a later step of a run;
        ``model``: plan it against the model of that name (a capacity profile) instead of the target's."""
        return await self._jobs.evaluate({
            "prompt_id": prompt_id, "example": example, "input": input, "token_budget": token_budget, "input_budget": input_budget,
            "messages": messages, "model": model,
        })

    async def run(
        self, prompt_id: str, *, example: str | None = None, input: dict[str, Any] | None = None, confirm: str | bool | None = None
    ) -> dict[str, Any]:
        """Run an agent (or a prompt with a model adapter) in the worker; returns the whole run, recorded
        in the project's store with ``origin="inspector"`` (see ``api.py``, "Runs"), or a confirmation
        request when its model is real and ``confirm`` is not that model's token (``run_confirm``)."""
        return await self._jobs.run({"prompt_id": prompt_id, "example": example, "input": input, "confirm": confirm})

    async def replay_step(
        self, run: dict[str, Any], step: int, overrides: dict[str, Any], source: str = "recorded", where: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """A recorded step planned again with ``overrides`` in the worker (the planner never runs in
        this process), from its recording or (``source="current"``) from today's source, ``where``
        naming each context's file and line: ``{"ok", "result" | "error"}``, the result a replay
        document or ``{"error"}`` (``replay_source.replay_variant`` reads it for every front end)."""
        request = {"prompt_id": str(run.get("target")), "run": run.get("id"), "step": step, "overrides": overrides, "source": source, "where": where or {}}
        return await self._jobs.replay_step(cast(ReplayStepRequest, request))  # loose as handed in: ``wire.check_request`` checks it

    async def replay_continue(self, run: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
        """The agent forked at a recorded step and run on in the worker (``replay_continue.py``):
        ``{"ok", "result" | "error"}``, the result the child run, ``{"confirm"}`` or ``{"error"}``."""
        return await self._jobs.replay_continue(cast(ReplayContinueRequest, {"prompt_id": str(run.get("target")), "run": run.get("id"), **request}))

    async def replay_send(self, prompt_id: str, request: dict[str, Any]) -> dict[str, Any]:
        """A replayed request sent to the target's model in the worker (``replay_send.py``):
        ``{"ok", "result" | "error"}``, the result the child run or ``{"confirm": ...}``."""
        return await self._jobs.replay_send(cast(ReplaySendRequest, {"prompt_id": prompt_id, **request}))

    async def prepare_summaries(
        self, prompt_id: str, *, example: str | None = None, input: dict[str, Any] | None = None, contributor: str | None = None,
        allow_models: bool = False, token_budget: int | None = None,
    ) -> PrepareResult:
        """Prepare one example's missing summaries into ``DIR/.crux/summaries.sqlite3`` (extractive
        only, unless ``allow_models``), then reload, so every view shows the summary rung measured."""
        result = await self._jobs.prepare({
            "prompt_id": prompt_id, "example": example, "input": input, "contributor": contributor,
            "allow_models": allow_models, "token_budget": token_budget,
        })
        if result["prepared"]:
            await self.reload()
        return result

    # -- recorded runs and the history ---------------------------------------------------------
    def runs(self) -> Any:
        """The project's ``RunStore`` (``.crux/runs.sqlite3``), or ``None`` when it cannot be opened
        (corrupt, newer schema, unreadable: logged once). A missing file is an empty store."""
        return self._runs.store()

    def previous_system(self, prompt_id: str, example: str) -> str | None:
        """The system text of this prompt and example in the previous distinct report, if any
        (this session's reports, then the history file's)."""
        return self._reports.previous_system(self.report, prompt_id, example)
