"""``ProjectSession``: loads a project in a worker, re-evaluates on change, holds the latest report.

The web app and the TUI are thin adapters over it (see ``api.py`` for the contract). The session's
process never imports user code: discovery reads files, and every import, inspection, preview and
run happens in a worker process (``process.py``), module by module (``session_load.py``). Changes are
coalesced: while one evaluation runs, any number of further changes make at most one more.

Staleness is per module: a module that fails to load keeps its last good prompts in the report,
each marked ``"stale": true`` and still answered (budget, custom input) by the worker that loaded
them; the other modules' prompts are current. What a change calls for (a full load, an update, or
nothing but a verification later) and what stays shown stale are decided by the pure functions of
``reload_rules.py``; this class applies their answers, and owns the life cycle, the runner and the
events. The report held and its merge rules are ``held_report.py``'s (one frozen value), the
verification schedule ``verify.py``'s, which workers are held, kept or retired ``workers.py``'s, the
history of shown reports ``report_history.py``'s, the recorded runs' poller ``features/runs/watch.py``'s.

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
import inspect
import logging
import os
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..api import SessionEvent, failed_run, find_prompt
from .discovery import ModuleRef, discover, imported_note, read_model_config, read_tool_keys, read_watch_ignore
from ..errors import FailedExample, LoadError
from .history import History
from ..transport.pool import StartWorker, WorkerPool
from ..transport.process import WorkerError, WorkerProcess
from ..transport.wire import MalformedRequest
from .held_report import HeldReport, Merged, report_texts
from .reload_rules import Change, Held, Incremental, VerifyOnly, concerns, decide, sort_changes
from .report_history import ReportHistory
from ..report_types import ExampleReport, LoadErrorDict, PrepareResult, Report
from ...shapes import PrepareRequest, PrimeRequest
from ..features.runs.watch import RunsWatcher
from .watcher import file_state, is_relevant
from .load import LoadOutcome, load_project, update_project
from .verify import Verifier
from .workers import Workers, holding_stale

log = logging.getLogger(__name__)
MISSING_PAUSE = 0.05  # seconds before the first look for a removed project folder; doubled after each
MISSING_PAUSE_MAX = 2.0  # the longest pause between two looks

class ProjectSession:
    """The inspector's one service: the latest report of the project in ``root``, kept live.

    ``timeout`` bounds each worker job (seconds); ``debounce`` groups file events; ``watch=False``
    loads once (CLI, tests); ``history=False`` keeps no SQLite file; ``prewarm=False`` starts each
    worker only when needed; ``fork=False`` starts each worker as a fresh interpreter instead of
    forking it from the pre-warmed fork server (slower: about a second of CPU per change).

    The session asks ``reload_rules`` what a change calls for and applies the answer; what it holds
    between two loads, and what always holds of it:

    - ``_workers`` (``workers.Workers``): ``held``, the held worker: it imported every healthy module
      of ``_refs`` and answers jobs for their prompts; ``None`` (or dead) means the next change is a
      full load; ``owners``: stale prompt id -> the worker holding that prompt's last good version
      (the held worker, or an older one kept alive for it). Every live worker is held, an owner, the
      pool's spare, or retiring (closed once its job in flight is answered).
    - ``_held`` (``held_report.HeldReport``, one frozen value, replaced after each load): the report
      shown, its version and prompt hashes, and ``known``: module name -> its last good prompts (a
      healthy module's current ones, a broken module's as it last loaded well). Its version grows by
      one per report shown (a verification that agrees keeps it), its hash only with its content.
    - ``_broken``: modules whose last import or evaluation failed; each shows its ``known`` prompts
      marked stale, and keeps its error until a load imports it again.
    - ``_faulted``: modules that hung or ended a worker in the last full load: every change is a full
      load until one loads without them faulting.
    - ``_refs``: the module list the held worker loaded (set by full loads; another list: full load).
    - ``_imported`` and ``_watched``: the project files the held worker imported, and the files it read
      and folders it listed (``"dir/"``) -> the modules that did; a change to one is an update.
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
        self.debounce = debounce
        self.watch = watch
        self.prewarm = prewarm
        # a damaged file or a read-only .crux: no history, one warning (the UIs show it too)
        self._reports = ReportHistory(self.root, history)
        self.history_warning = self._reports.warning
        self._subscribers: list[Callable[[SessionEvent], Any]] = []
        # ``pool``: one already warming (the TUI's launch); ``transport``: how workers start (``inprocess.in_process``: no process)
        self._pool = pool or WorkerPool(self.root, prewarm=prewarm, fork=fork, start=transport)
        self._tasks: set[asyncio.Task[Any]] = set()
        # What is held between two loads: see the class docstring.
        self._held = HeldReport()
        self._workers = Workers(self._spawn)
        self._refs: list[ModuleRef] | None = None
        self._broken: frozenset[str] = frozenset()
        self._faulted: frozenset[str] = frozenset()
        self._watched: dict[str, list[str]] = {}
        self._store_states: dict[str, tuple[int, int] | None] = {}  # watched files the watcher's filter leaves out -> state as loaded
        self._imported: set[str] = set()
        self._dirty = False
        self._full = False  # a full load was asked for (``reload()`` with no files)
        self._pending_files: set[str] = set()
        self._ignore: list[str] = []  # [tool.crux-devtools] watch_ignore
        self.fallbacks = 0  # incremental updates that fell back to a full load (tests, benchmarks)
        self._runner: asyncio.Future[None] | None = None
        self._stop: asyncio.Event | None = None
        self._watch_task: asyncio.Task[None] | None = None
        self._preload: list[str] = []
        self._imported_note: str | None = None  # discovery.imported_note of the last load
        self._counted: dict[str, list[Any]] | None = None  # texts the last load counted (see ``_prime``)
        self._files: list[str] = []  # the project's module files, compiled ahead by the spare
        self.evaluations = 0
        self._runs = RunsWatcher(self.root, self._emit, lambda: bool(self._subscribers), runs_poll)
        # Verification (see "At rest, the truth" in the module docstring).
        self._verify = Verifier(self.root, verify_after, lambda: self._schedule(verify=True))
        # Called with each batch of changed files the watcher passed on, once the session has acted on
        # it (tests: a file written last and seen here means every earlier change was seen too).
        self.on_batch: Callable[[list[str]], object] | None = None
        # The project folder removed (a temporary checkout cleaned up): said once, then looked for
        # with a growing pause until it is back (``_await_folder``), never reloaded meanwhile.
        self._missing: asyncio.Task[None] | None = None
        self.missing_checks = 0  # looks at a missing folder so far (tests)

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
    def _worker(self) -> WorkerProcess | None:
        """The held worker (``Workers.held``)."""
        return self._workers.held

    @property
    def history(self) -> History | None:
        """The history file (``.crux/devtools.sqlite3``), or ``None`` (``history=False``, or it could not be opened)."""
        return self._reports.file

    def subscribe(self, callback: Callable[[SessionEvent], Any]) -> Callable[[], None]:
        self._subscribers.append(callback)
        self._runs.start()

        def unsubscribe() -> None:
            with contextlib.suppress(ValueError):
                self._subscribers.remove(callback)

        return unsubscribe

    def _emit(self, event: SessionEvent) -> None:
        for callback in list(self._subscribers):
            try:
                result = callback(event)
            except Exception:  # a broken subscriber must not stop the others
                log.exception("session subscriber %r failed on %s", callback, event.kind)
                continue
            if inspect.isawaitable(result):
                self._spawn(result)

    def _spawn(self, awaitable: Any) -> None:
        task = asyncio.ensure_future(awaitable)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- life cycle ----------------------------------------------------------------------------
    async def start(self) -> None:
        """Load the project once (the first report), then watch files until ``stop``."""
        preloading = None
        if self.watch and self._watch_task is None:
            from .watcher import preload

            preloading = asyncio.get_running_loop().run_in_executor(None, preload)  # while the worker loads
        if self.prewarm:
            await self._pool.warm()
        await self.reload()
        if self.watch and self._watch_task is None:
            if preloading is not None:
                await preloading

            await self._start_watching()
        self._runs.start()

    async def _start_watching(self) -> None:
        from .watcher import watch

        self._stop = asyncio.Event()
        self._watch_task = asyncio.create_task(watch(self.root, self._changed, self._stop, debounce=self.debounce, watched=self._reads_store))
        self._watch_task.add_done_callback(self._watch_ended)
        # The task's first step creates the inotify watch synchronously: let it run before returning,
        # so a save right after ``start()`` is seen.
        for _ in range(3):
            await asyncio.sleep(0)

    async def stop(self) -> None:
        if self._stop is not None:
            self._stop.set()
        self._verify.cancel()
        if self._missing is not None:
            self._missing.cancel()
        if self._watch_task is not None:
            # A watch that ended with an error (the folder removed) was reported when it ended.
            await asyncio.gather(self._watch_task, return_exceptions=True)
            self._watch_task = None
        if self._runner is not None and not self._runner.done():
            self._runner.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._runner
        await self._runs.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
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
        if self._tasks:  # priming the spare, retiring old workers
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
        await self._reports.settled()

    def _watch_ended(self, task: asyncio.Task[None]) -> None:
        if task.cancelled() or task.exception() is None:
            return
        exc = task.exception()
        if not self.root.is_dir():  # the folder was removed: a load says so once, and waits for it
            log.info("watching %s stopped: the folder is gone (%r)", self.root, exc)
            if self._missing is None:
                self._schedule()
            return
        log.error("watching %s stopped: %r", self.root, exc)
        self._emit(SessionEvent("error", self._held.version, f"Watching files stopped ({type(exc).__name__}: {exc}); reload by hand"))

    def _changed(self, files: list[str]) -> None:
        """Watcher callback: schedule a re-evaluation of the files that can change the report, and a
        verification after any other change (not one the worker's own code wrote, nor ``watch_ignore``)."""
        changes = sort_changes(files, watched=self._watched, ignore=self._ignore, echoes=self._verify.echoes)
        if changes.wanted:
            self._schedule(changes.wanted)
        if changes.unseen:
            self._verify.saw(changes.unseen)
        if changes.wanted or changes.unseen:
            self._verify.arm()
        if self.on_batch is not None:
            self.on_batch(files)

    def _reads_store(self, relative: str) -> bool:
        """Whether the held worker saw user code read this file (a SQLite store or its ``-wal``: the
        watcher's filter leaves those out unless the project reads them)."""
        posix = relative.replace("\\", "/")
        if posix not in self._watched:
            return False
        state = file_state(self.root / posix)
        if posix in self._store_states and self._store_states[posix] == state:
            return False  # opened and closed (a reader, a verification's worker), not written
        self._store_states[posix] = state
        return True

    def is_watched(self, relative: str) -> bool:
        """Whether a change to this project file (path relative to the root) can change the report:
        ``pyproject.toml``, a Python file, or a file (or a folder's entry) user code read while the
        worker loaded it; never one matching ``watch_ignore``."""
        return concerns(relative, self._watched, self._ignore)

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
            if verifying and not self._verify.needed and not await self._unexplained():
                continue  # only files the worker's own code wrote changed: nothing to verify
            if verifying:
                self._reports.release()  # in the background: see ``ReportHistory.remember``
            await self._load(files, full=full or verifying, verifying=verifying)
        if self._verify.pending:
            self._verify.arm()

    async def _await_folder(self) -> None:
        """Look for the removed project folder with a growing pause (``MISSING_PAUSE``, up to
        ``MISSING_PAUSE_MAX`` seconds: a stat, no CPU to speak of); once it is back, watch it and load it."""
        pause = MISSING_PAUSE
        while True:
            await asyncio.sleep(pause)
            self.missing_checks += 1
            if self.root.is_dir():
                break
            pause = min(pause * 2, MISSING_PAUSE_MAX)
        log.info("the project folder %s is back: loading it", self.root)
        if self._watch_task is not None and self._stop is not None and not self._stop.is_set():
            self._stop.set()  # it watched the removed folder: watch the new one
            await asyncio.gather(self._watch_task, return_exceptions=True)
            await self._start_watching()
        self._missing = None
        self._schedule()

    async def _unexplained(self) -> bool:
        """Whether a changed file that no module read is not one the held worker's code wrote (a thread
        it started may write at any time): asks the worker what it wrote."""
        worker = self._worker
        written: list[str] = []
        if worker is not None and worker.alive and not worker.lock.locked():  # busy (a Run): verify rather than wait
            try:
                answer = await worker.call("written", {}, self.timeout)
            except WorkerError as exc:
                log.info("asking the worker which files its code wrote failed: %s", exc)
            else:
                if answer.get("ok") and isinstance(answer.get("result"), dict):
                    written = [f for f in answer["result"].get("written", []) if isinstance(f, str)]
        return self._verify.explained(written)

    # -- loading -------------------------------------------------------------------------------
    async def _load(self, files: list[str], *, full: bool = True, verifying: bool = False) -> None:
        started = time.perf_counter()
        self._verify.since.update(files)
        try:
            discovery, models, config_errors, ignore = await asyncio.to_thread(self._read_project)
            self._imported_note = imported_note(discovery)  # the report says which files run, and why
        except OSError as exc:
            gone = not self.root.is_dir()
            if gone and self._missing is not None:
                return  # said already: ``_await_folder`` reloads when it is back
            self.evaluations += 1
            self._emit(SessionEvent("loading", self._held.version, "Re-evaluating the project…", changed_files=files))
            self._verify.needed = False  # nothing can be loaded: the next change tries again
            said = f"cannot read the project folder: {exc}"
            if gone:
                self._verify.unseen.clear()  # nothing to verify against until it is back
                self._missing = asyncio.ensure_future(self._await_folder())
                said += "; waiting for it to come back, then it is loaded again"
            error = LoadError.plain(type(exc).__name__, said).to_dict()
            failed = LoadOutcome([], [error], {}, frozenset(self._held.known), None)
            self._hold(failed, list(self._held.known), [], files, time.perf_counter() - started, False)
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
            self.evaluations += 1
            self._emit(SessionEvent("loading", self._held.version, "Re-evaluating the changed modules…", changed_files=files))
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
                outcome = self._keep_broken(update, decision, discovery.modules)
                self._verify.needed = True
        elif not verifying:  # a verification runs in the background: the report shown stays until it is done
            self.evaluations += 1
            self._emit(SessionEvent("loading", self._held.version, "Re-evaluating the project…", changed_files=files))
        self._ignore = ignore
        if outcome is None:
            self._verify.fresh_load()  # a change from here on is verified by another load
            self._files = [m.path for m in discovery.modules if m.path and not m.package]
            outcome = await load_project(self._pool, self.root, discovery.modules, self.timeout, models)
            if outcome.worker is not None:
                self._preload, self._counted = outcome.preload, outcome.counted
            self._refs, self._faulted = list(discovery.modules), outcome.faulted
        self._broken = outcome.broken
        self._watched, self._imported = outcome.watched, set(outcome.imported)
        # what the stores the project reads held as this load read them: a later event that leaves them so is no change
        self._store_states = {f: file_state(self.root / f) for f in self._watched if not f.endswith("/") and not is_relevant(self.root, str(self.root / f))}
        self._verify.echoes = set(outcome.written)
        self._hold(outcome, names, errors, files, time.perf_counter() - started, bool(discovery.modules), verifying=verifying)
        if outcome.kind == "incremental":
            return  # the spare made after the last full load still waits for the next one
        # The next change's worker warms up while the person edits, primed with this load's libraries,
        # the texts it counted (token counts are cached by content: unchanged parts then cost nothing)
        # and the project's files compiled as they are now (an unchanged file is not compiled again).
        spare = await self._pool.warm()
        if spare is not None:
            counted = self._counted or {"texts": report_texts(self.report), "separated": []}
            message: PrimeRequest = {"root": str(self.root), "modules": self._preload, "files": self._files, "texts": counted["texts"], "separated": counted["separated"]}
            self._spawn(self._prime(spare, message))

    def _read_project(self) -> tuple[Any, dict[str, Any], list[LoadErrorDict], list[str]]:
        """Discovery, model profiles and watch_ignore of ``pyproject.toml`` (in a thread)."""
        discovery = discover(self.root)
        models, model_errors = read_model_config(self.root)
        ignore, ignore_errors = read_watch_ignore(self.root)
        return discovery, models, read_tool_keys(self.root) + model_errors + ignore_errors, ignore

    def _holding(self, modules: list[ModuleRef]) -> Held:
        """What this session holds, for ``reload_rules.decide``."""
        return Held(
            worker_alive=self._workers.alive,
            same_modules=self._refs == modules,
            has_report=self.report is not None,
            module_files=frozenset(os.path.relpath(m.path, self.root) for m in modules if m.path),
            imported=frozenset(self._imported),
            watched=self._watched,
            broken=self._broken,
            faulted=self._faulted,
            holds_stale=holding_stale(self._held.known, self._broken, self._workers.owners, self._workers.held),
        )

    def _keep_broken(self, update: LoadOutcome, decision: Incremental, modules: list[ModuleRef]) -> LoadOutcome:
        """The broken modules this update did not import again stay broken (``Incremental.still_broken``):
        their errors stay, and so do their last good prompts (stale, see ``HeldReport.merge``)."""
        still = decision.still_broken(update.reimported)
        if not still or self.report is None:
            return update
        files = {os.path.relpath(m.path, self.root) for m in modules if m.name in still and m.path}
        kept = [e for e in self.report["errors"] if e["file"] in files]
        return dataclasses.replace(update, broken=update.broken | still, errors=[*kept, *update.errors])

    def _hold(
        self,
        outcome: LoadOutcome,
        names: list[str],
        errors: list[LoadErrorDict],
        files: list[str],
        elapsed: float,
        found_modules: bool,
        *,
        verifying: bool = False,
    ) -> None:
        """Show a load: merged into the held report (``HeldReport.merge``), compared with the report
        shown when it verifies it (``Verifier.compare``), its workers held (``Workers.swap``), remembered
        and written to the history, and said in one event."""
        merged = self._held.merge(outcome, names, errors)
        errors = merged.errors
        shown = self._held.report
        verified = self._verify.is_verified(outcome.kind, self._dirty)
        disagreements = 0
        if verifying:
            disagreements = self._verify.compare(self._held.hashes, merged.hashes, shown["errors"] if shown is not None else None, errors)
            if not disagreements and shown is not None:
                self._confirm(outcome, merged, shown, verified, files)
                return
        self._held = merged.shown(
            outcome, project=str(self.root), generated_at=datetime.now(UTC).isoformat(), found_modules=found_modules, verified=verified,
            disagreements=disagreements, imported_note=self._imported_note,
        )
        report = self._held.report
        assert report is not None
        self._workers.swap(outcome.worker, merged.stale)
        self._reports.remember(report)
        self._reports.record(report, files)
        version, prompts, changed = self._held.version, merged.prompts, merged.changed
        extra: dict[str, Any] = {"load": outcome.kind, "reevaluated": list(outcome.reevaluated), "verification": "corrected" if disagreements else ""}
        if not errors:
            summary = f"Report {version}: {len(prompts)} prompt(s) in {elapsed * 1000:.0f} ms"
            if disagreements:
                summary += f", verified: a fresh load corrected {len(changed)} prompt(s)"
            if files:
                summary += f" after changes to {', '.join(files[:3])}{'…' if len(files) > 3 else ''}"
            if outcome.kind == "incremental":
                summary += f" ({len(outcome.reevaluated)} re-evaluated)"
            self._emit(SessionEvent("report", version, summary, changed_files=files, changed_prompts=changed, **extra))
        else:
            first = errors[0]
            where = f"{first['file']}:{first['line']}: " if first.get("file") else ""
            summary = f"{where}{first['type']}: {first['message']}".splitlines()[0][:300]
            if report["stale"]:
                summary += " (its module's last good prompts are shown, marked stale)"
            self._emit(SessionEvent("error", version, summary, changed_files=files, changed_prompts=changed, **extra))

    def _confirm(self, outcome: LoadOutcome, merged: Merged, shown: Report, verified: bool, files: list[str]) -> None:
        """A verification that agrees: hold its fresh worker; the report keeps its version and says it is
        verified (``Merged.confirmed``: one "report" event when that changed, so the front ends show it)."""
        self._workers.swap(outcome.worker, merged.stale)
        self._held = merged.confirmed(outcome, verified=verified, imported_note=self._imported_note)
        report = self._held.report
        assert report is not None
        self._reports.replace(shown, report)
        self._reports.record(report, files)
        if verified and not shown["verified"]:
            summary = f"Report {self._held.version} verified: a fresh load of the whole project agrees"
            self._emit(SessionEvent("report", self._held.version, summary, load="full", reevaluated=list(outcome.reevaluated), verification="agreed"))

    async def _prime(self, spare: WorkerProcess, message: PrimeRequest) -> None:
        try:
            await spare.call("prime", message, self.timeout)
        except (WorkerError, MalformedRequest) as exc:  # the spare is replaced when it is taken; the load reports faults
            log.warning("priming the spare worker failed: %s", exc)

    # -- jobs in the worker --------------------------------------------------------------------
    async def _job(self, op: str, request: Mapping[str, Any]) -> dict[str, Any]:
        """Send a job (``op`` and its request) to the worker holding the prompt (the current project,
        or the last good version of a stale prompt's module); ``{"ok", "result" | "error"}``."""
        prompt_id = str(request.get("prompt_id"))
        if prompt_id not in self._workers.owners and not self._workers.alive:
            self._workers.held = None
            await self.reload()
        worker = self._workers.holder(prompt_id)
        if worker is None or not worker.alive:
            prompt = find_prompt(self.report, prompt_id)
            if prompt is not None and prompt.get("stale"):
                why = (
                    f"{prompt.get('kind', 'prompt')} {prompt_id!r} is shown as it was when {prompt.get('file')} last loaded, "
                    "and that version can no longer be evaluated; fix the module's load error to evaluate it again"
                )
                return {"ok": False, "error": LoadError.plain("StaleError", why, file=prompt["file"], line=prompt["line"]).to_dict()}
            errors = (self.report["errors"] if self.report is not None else []) or [LoadError.plain("LoadError", "the project could not be loaded").to_dict()]
            return {"ok": False, "error": errors[0]}
        try:
            return await worker.call(op, request, self.timeout)
        except WorkerError as exc:
            await self._workers.drop(worker)
            error = exc.error
            prompt = find_prompt(self.report, prompt_id)
            if not error.get("file") and prompt is not None:
                error = {**error, "file": prompt.get("file"), "line": prompt.get("line")}
            return {"ok": False, "error": error}

    async def evaluate(
        self,
        prompt_id: str,
        *,
        example: str | None = None,
        input: dict[str, Any] | None = None,
        token_budget: int | None = None,
        input_budget: int | None = None,
        messages: dict[str, Any] | None = None,
        model: str | None = None,
    ) -> ExampleReport:
        """One example (or custom input) re-evaluated in the worker; returns an ``ExampleReport``.
        ``messages`` (``replaying.step_messages``): plan the request as at a later step of a run;
        ``model``: plan it against the model of that name (a capacity profile) instead of the target's."""
        answer = await self._job(
            "evaluate", {"prompt_id": prompt_id, "example": example, "input": input, "token_budget": token_budget, "input_budget": input_budget,
             "messages": messages, "model": model}
        )
        if answer["ok"]:
            return answer["result"]
        name = "custom" if input is not None else (example or "")
        return FailedExample(name, input or {}, LoadError.from_dict(answer["error"])).to_dict()

    async def run(
        self, prompt_id: str, *, example: str | None = None, input: dict[str, Any] | None = None, confirm: str | bool | None = None
    ) -> dict[str, Any]:
        """Run an agent (or a prompt with a model adapter) in the worker; returns the whole run, recorded
        in the project's store with ``origin="inspector"`` (see ``api.py``, "Runs"), or a confirmation
        request when its model is real and ``confirm`` is not that model's token (``run_confirm``)."""
        answer = await self._job("run", {"prompt_id": prompt_id, "example": example, "input": input, "confirm": confirm})
        if answer["ok"]:
            return answer["result"]
        return failed_run(prompt_id, answer["error"], input=input)

    # -- recorded runs -------------------------------------------------------------------------
    def runs(self) -> Any:
        """The project's ``RunStore`` (``.crux/runs.sqlite3``), or ``None`` when it cannot be opened
        (corrupt, newer schema, unreadable: logged once). A missing file is an empty store."""
        return self._runs.store()

    async def replay_step(
        self, run: dict[str, Any], step: int, overrides: dict[str, Any], source: str = "recorded", where: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """A recorded step planned again with ``overrides`` in the worker (the planner never runs in
        this process), from its recording or (``source="current"``) from today's source, ``where``
        naming each context's file and line: ``{"ok", "result" | "error"}``, the result a replay
        document or ``{"error"}`` (``replay_source.replay_variant`` reads it for every front end)."""
        return await self._job("replay_step", {"prompt_id": str(run.get("target")), "run": run.get("id"), "step": step, "overrides": overrides,
                                "source": source, "where": where or {}})

    async def replay_continue(self, run: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
        """The agent forked at a recorded step and run on in the worker (``replay_continue.py``):
        ``{"ok", "result" | "error"}``, the result the child run, ``{"confirm"}`` or ``{"error"}``."""
        return await self._job("replay_continue", {"prompt_id": str(run.get("target")), "run": run.get("id"), **request})

    async def replay_send(self, prompt_id: str, request: dict[str, Any]) -> dict[str, Any]:
        """A replayed request sent to the target's model in the worker (``replay_send.py``):
        ``{"ok", "result" | "error"}``, the result the child run or ``{"confirm": ...}``."""
        return await self._job("replay_send", {"prompt_id": prompt_id, **request})

    async def prepare_summaries(
        self,
        prompt_id: str,
        *,
        example: str | None = None,
        input: dict[str, Any] | None = None,
        contributor: str | None = None,
        allow_models: bool = False,
        token_budget: int | None = None,
    ) -> PrepareResult:
        """Prepare one example's missing summaries into ``DIR/.crux/summaries.sqlite3`` (extractive
        only, unless ``allow_models``), then reload, so every view shows the summary rung measured."""
        message: PrepareRequest = {
            "prompt_id": prompt_id, "example": example, "input": input, "contributor": contributor,
            "allow_models": allow_models, "token_budget": token_budget,
        }
        answer = await self._job("prepare", message)
        if not answer["ok"]:
            return {"prepared": [], "skipped": [], "error": answer["error"]}
        result: PrepareResult = answer["result"]
        if result["prepared"]:
            await self.reload()
        return result

    def previous_system(self, prompt_id: str, example: str) -> str | None:
        """The system text of this prompt and example in the previous distinct report, if any
        (this session's reports, then the history file's)."""
        return self._reports.previous_system(self.report, prompt_id, example)
