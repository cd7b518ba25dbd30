"""``ProjectSession``: loads a project in a worker, re-evaluates on change, holds the latest report.

The web app and the TUI are thin adapters over it (see ``api.py`` for the contract). The session's
process never imports user code: discovery reads files, and every import, inspection, preview and
run happens in a worker process (``process.py``), module by module (``session_load.py``). Changes are
coalesced: while one evaluation runs, any number of further changes make at most one more.

Staleness is per module: a module that fails to load keeps its last good prompts in the report,
each marked ``"stale": true`` and still answered (budget, custom input) by the worker that loaded
them; the other modules' prompts are current. What a change calls for (a full load, an update, or
nothing but a verification later) and what stays shown stale are decided by the pure functions of
``reload_rules.py``; this class applies their answers, and owns the life cycle, the workers and the
events. The history of shown reports is ``report_history.py``'s, the recorded runs' poller
``runs_watch.py``'s.

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
import hashlib
import inspect
import json
import logging
import os
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..api import SessionEvent, failed_run, find_prompt
from .discovery import ModuleRef, discover, imported_note, read_model_config, read_tool_keys, read_watch_ignore
from ..errors import FailedExample, LoadError, distinct
from .history import History
from ..transport.pool import WorkerPool
from ..transport.process import WorkerError, WorkerProcess
from .reload_rules import Change, Held, Incremental, VerifyOnly, concerns, decide, last_good, sort_changes
from .report_history import ReportHistory
from ..report_types import ExampleReport, LoadErrorDict, PrepareResult, PromptReport, Report
from ..features.runs.watch import RunsWatcher
from .watcher import file_state, is_relevant
from .load import LoadOutcome, load_project, update_project

log = logging.getLogger(__name__)
MISSING_PAUSE = 0.05  # seconds before the first look for a removed project folder; doubled after each
MISSING_PAUSE_MAX = 2.0  # the longest pause between two looks

EMPTY_NOTICE = (
    "No prompts found in {root}. Add a .py file that imports crux_devtools and defines a prompt at module "
    "level, e.g. `from crux_devtools import prompt` then `greeter = prompt(\"greeter\", system=\"You are kind.\")`, "
    "or list your modules in pyproject.toml under [tool.crux-devtools] modules = [\"my_prompts\"]."
)


def prompt_hashes(prompts: list[PromptReport], cache: dict[int, tuple[PromptReport, str]] | None = None) -> dict[str, str]:
    """A content hash per prompt report: what changed between two reports.

    ``cache`` (``id(report) -> (report, hash)``) skips the reports hashed before: an incremental
    load hands the unchanged prompts' reports on as the same objects (reports are never changed).
    """
    hashes: dict[str, str] = {}
    for p in prompts:
        known = cache.get(id(p)) if cache is not None else None
        if known is not None and known[0] is p:
            hashes[p["id"]] = known[1]
            continue
        digest = hashlib.sha256(json.dumps(p, sort_keys=True, default=repr).encode()).hexdigest()
        if cache is not None:
            cache[id(p)] = (p, digest)
        hashes[p["id"]] = digest
    return hashes


def content_hash(hashes: dict[str, str], errors: list[LoadErrorDict]) -> str:
    """Hash of what a report says (not when or how fast): the history key."""
    blob = json.dumps({"prompts": list(hashes.items()), "errors": errors}, sort_keys=True, default=repr)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:32]


def report_texts(report: Report | None, limit: int = 2_000) -> list[str]:
    """The distinct full texts of a report (parts, user prompts), to prime the next worker's token cache."""
    if report is None:
        return []
    texts: dict[str, None] = {}
    for prompt in report["prompts"]:
        for example in prompt["examples"]:
            inspection = example.get("inspection")
            if not inspection or example.get("truncated"):
                continue
            for part in inspection["parts"]:
                if part["text"]:
                    texts[part["text"]] = None
            for text in (inspection["system"], inspection["prompt"]):
                if text:
                    texts[text] = None
    return list(texts)[:limit]


class ProjectSession:
    """The inspector's one service: the latest report of the project in ``root``, kept live.

    ``timeout`` bounds each worker job (seconds); ``debounce`` groups file events; ``watch=False``
    loads once (CLI, tests); ``history=False`` keeps no SQLite file; ``prewarm=False`` starts each
    worker only when needed; ``fork=False`` starts each worker as a fresh interpreter instead of
    forking it from the pre-warmed fork server (slower: about a second of CPU per change).

    The session asks ``reload_rules`` what a change calls for and applies the answer; what it holds
    between two loads, and what always holds of it:

    - ``_worker``: the held worker: it imported every healthy module of ``_refs`` and answers jobs for
      their prompts; ``None`` (or dead) means the next change is a full load.
    - ``_owners``: stale prompt id -> the worker holding that prompt's last good version (the held
      worker, or an older one kept alive for it). Every live worker is ``_worker``, in ``_owners``,
      the pool's spare, or retiring (closed once its job in flight is answered).
    - ``_known``: module name -> its last good prompts: a healthy module's current ones, a broken
      module's as it last loaded well (``reload_rules.last_good`` is its only writer).
    - ``_broken``: modules whose last import or evaluation failed; each shows its ``_known`` prompts
      marked stale, and keeps its error until a load imports it again.
    - ``_faulted``: modules that hung or ended a worker in the last full load: every change is a full
      load until one loads without them faulting.
    - ``_refs``: the module list the held worker loaded (set by full loads; another list: full load).
    - ``_imported`` and ``_watched``: the project files the held worker imported, and the files it read
      and folders it listed (``"dir/"``) -> the modules that did; a change to one is an update.
    - ``_echoes``: files the held worker's own code wrote: their change is not a change.
    - ``_needs_verify``, ``_unseen``, ``_since_verified``: the report shown is not yet verified (an
      update's, or one a change skipped), the changed files no module read, and every change since
      the last verified report; a fresh full load at rest clears them.
    - ``_report`` (``_version``, ``_hashes``): the report shown; its version grows by one per report
      that says something new (a verification that agrees keeps it).
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
        self._report: Report | None = None
        self._version = 0
        self._subscribers: list[Callable[[SessionEvent], Any]] = []
        self._pool = pool or WorkerPool(self.root, prewarm=prewarm, fork=fork)  # ``pool``: one already warming (the TUI's launch)
        # What is held between two loads: see the class docstring.
        self._worker: WorkerProcess | None = None
        self._owners: dict[str, WorkerProcess] = {}
        self._known: dict[str, list[PromptReport]] = {}
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
        self._tasks: set[asyncio.Task[Any]] = set()
        self._retiring: set[WorkerProcess] = set()
        self._preload: list[str] = []
        self._imported_note: str | None = None  # discovery.imported_note of the last load
        self._counted: dict[str, list[Any]] | None = None  # texts the last load counted (see ``_prime``)
        self._files: list[str] = []  # the project's module files, compiled ahead by the spare
        self._hashes: dict[str, str] = {}
        self._copies: dict[int, tuple[PromptReport, PromptReport]] = {}  # see ``_merge``
        self._hash_cache: dict[int, tuple[PromptReport, str]] = {}  # see ``prompt_hashes``
        self.evaluations = 0
        self._runs = RunsWatcher(self.root, self._emit, lambda: bool(self._subscribers), runs_poll)
        # Verification (see "At rest, the truth" in the module docstring).
        self.verify_after = verify_after
        self._needs_verify = False
        self._unseen: set[str] = set()
        self._verify_next = False  # the runner's next job is a verification
        self._verifier: asyncio.Task[None] | None = None  # waits for the saves to settle, then verifies
        self._since_verified: set[str] = set()
        self._echoes: set[str] = set()
        self.verifications = 0  # verification loads run (tests, benchmarks)
        # The project folder removed (a temporary checkout cleaned up): said once, then looked for
        # with a growing pause until it is back (``_await_folder``), never reloaded meanwhile.
        self._missing: asyncio.Task[None] | None = None
        self.missing_checks = 0  # looks at a missing folder so far (tests)
        self.disagreements = 0  # prompts (and error lists) a verification corrected, in total

    # -- reading -------------------------------------------------------------------------------
    @property
    def report(self) -> Report | None:
        return self._report

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
        if self._verifier is not None:
            self._verifier.cancel()
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
        for worker in {id(w): w for w in [self._worker, *self._owners.values()] if w is not None}.values():
            await worker.close()
        self._worker = None
        self._owners = {}
        await self._pool.close()
        for worker in list(self._retiring):
            await worker.close()
        self._retiring.clear()
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
            elif self._verifier is not None and not self._verifier.done():
                await asyncio.wait({self._verifier})
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
        self._emit(SessionEvent("error", self._version, f"Watching files stopped ({type(exc).__name__}: {exc}); reload by hand"))

    def _changed(self, files: list[str]) -> None:
        """Watcher callback: schedule a re-evaluation of the files that can change the report, and a
        verification after any other change (not one the worker's own code wrote, nor ``watch_ignore``)."""
        changes = sort_changes(files, watched=self._watched, ignore=self._ignore, echoes=self._echoes)
        if changes.wanted:
            self._schedule(changes.wanted)
        if changes.unseen:
            # No module imported or read it, but user code may look at it in ways the import graph
            # does not see (a new module behind ``try: import``, ``Path(...).exists()``, a symlink).
            self._since_verified.update(changes.unseen)
            self._unseen.update(changes.unseen)
        if changes.wanted or changes.unseen:
            self._arm_verification()

    def _arm_verification(self) -> None:
        """(Re)start the wait for the saves to settle; the verification runs ``verify_after`` seconds
        after the last change, once no evaluation is running."""
        if self._verifier is not None:
            self._verifier.cancel()
        self._verifier = asyncio.ensure_future(self._verify_later())

    async def _verify_later(self) -> None:
        await asyncio.sleep(self.verify_after)
        if self._needs_verify or self._unseen:
            self._schedule(verify=True)

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
            self._verify_next = True
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
            verify, self._verify_next = self._verify_next, False
            verifying = verify and not files and not full  # a change to a module first: it is verified later
            if verify and not verifying:
                self._needs_verify = True
            if verifying and not self._needs_verify and not await self._unexplained():
                continue  # only files the worker's own code wrote changed: nothing to verify
            if verifying:
                self._reports.release()  # in the background: see ``ReportHistory.remember``
            await self._load(files, full=full or verifying, verifying=verifying)
        if self._needs_verify or self._unseen:
            self._arm_verification()

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
        if worker is not None and worker.alive and not worker.lock.locked():  # busy (a Run): verify rather than wait
            try:
                answer = await worker.request({"op": "written"}, self.timeout)
            except WorkerError as exc:
                log.info("asking the worker which files its code wrote failed: %s", exc)
            else:
                if answer.get("ok") and isinstance(answer.get("result"), dict):
                    self._echoes |= {f for f in answer["result"].get("written", []) if isinstance(f, str)}
        self._unseen -= self._echoes
        return bool(self._unseen)

    # -- loading -------------------------------------------------------------------------------
    async def _load(self, files: list[str], *, full: bool = True, verifying: bool = False) -> None:
        started = time.perf_counter()
        self._since_verified.update(files)
        try:
            discovery, models, config_errors, ignore = await asyncio.to_thread(self._read_project)
            self._imported_note = imported_note(discovery)  # the report says which files run, and why
        except OSError as exc:
            gone = not self.root.is_dir()
            if gone and self._missing is not None:
                return  # said already: ``_await_folder`` reloads when it is back
            self.evaluations += 1
            self._emit(SessionEvent("loading", self._version, "Re-evaluating the project…", changed_files=files))
            self._needs_verify = False  # nothing can be loaded: the next change tries again
            said = f"cannot read the project folder: {exc}"
            if gone:
                self._unseen.clear()  # nothing to verify against until it is back
                self._missing = asyncio.ensure_future(self._await_folder())
                said += "; waiting for it to come back, then it is loaded again"
            error = LoadError.plain(type(exc).__name__, said).to_dict()
            failed = LoadOutcome([], [error], {}, frozenset(self._known), None)
            self._hold(failed, list(self._known), [], files, time.perf_counter() - started, False)
            return
        names = [m.name for m in discovery.modules]
        errors = list(discovery.errors) + config_errors
        outcome: LoadOutcome | None = None
        decision = decide(Change(tuple(files), full), self._held(discovery.modules))
        if isinstance(decision, VerifyOnly):
            # Nothing the held worker imported or read changed: no update, no event; a fresh load
            # verifies it (a new module behind ``try: import``, a file looked at but not opened).
            log.debug("%s: %s; verifying in the background", self.root, decision.reason)
            self._needs_verify = True
            return
        if isinstance(decision, Incremental):
            self.evaluations += 1
            self._emit(SessionEvent("loading", self._version, "Re-evaluating the changed modules…", changed_files=files))
            # The prompts of the modules that are not kept stale are current: a target the update does
            # not evaluate again keeps its report.
            previous = {p["id"]: p for name, ps in self._known.items() if name not in decision.keep_stale for p in ps}
            assert self._worker is not None
            update = await update_project(
                self._worker, discovery.modules, files, self.timeout, retry=decision.retry, previous=previous, protect=decision.protect
            )
            if isinstance(update, str):
                self.fallbacks += 1
                log.info("incremental update of %s fell back to a full load: %s", self.root, update)
            else:
                outcome = self._keep_broken(update, decision, discovery.modules)
                self._needs_verify = True
        elif not verifying:  # a verification runs in the background: the report shown stays until it is done
            self.evaluations += 1
            self._emit(SessionEvent("loading", self._version, "Re-evaluating the project…", changed_files=files))
        self._ignore = ignore
        if outcome is None:
            self._needs_verify = False  # a change from here on is verified by another load
            self._unseen.clear()
            self._files = [m.path for m in discovery.modules if m.path and not m.package]
            outcome = await load_project(self._pool, self.root, discovery.modules, self.timeout, models)
            if outcome.worker is not None:
                self._preload, self._counted = outcome.preload, outcome.counted
            self._refs, self._faulted = list(discovery.modules), outcome.faulted
        self._broken = outcome.broken
        self._watched, self._imported = outcome.watched, set(outcome.imported)
        # what the stores the project reads held as this load read them: a later event that leaves them so is no change
        self._store_states = {f: file_state(self.root / f) for f in self._watched if not f.endswith("/") and not is_relevant(self.root, str(self.root / f))}
        self._echoes = set(outcome.written)
        self._hold(outcome, names, errors, files, time.perf_counter() - started, bool(discovery.modules), verifying=verifying)
        if outcome.kind == "incremental":
            return  # the spare made after the last full load still waits for the next one
        # The next change's worker warms up while the person edits, primed with this load's libraries,
        # the texts it counted (token counts are cached by content: unchanged parts then cost nothing)
        # and the project's files compiled as they are now (an unchanged file is not compiled again).
        spare = await self._pool.warm()
        if spare is not None:
            counted = self._counted or {"texts": report_texts(self._report), "separated": []}
            message = {"op": "prime", "root": str(self.root), "modules": self._preload, "files": self._files, **counted}
            self._spawn(self._prime(spare, message))

    def _read_project(self) -> tuple[Any, dict[str, Any], list[LoadErrorDict], list[str]]:
        """Discovery, model profiles and watch_ignore of ``pyproject.toml`` (in a thread)."""
        discovery = discover(self.root)
        models, model_errors = read_model_config(self.root)
        ignore, ignore_errors = read_watch_ignore(self.root)
        return discovery, models, read_tool_keys(self.root) + model_errors + ignore_errors, ignore

    def _held(self, modules: list[ModuleRef]) -> Held:
        """What this session holds, for ``reload_rules.decide``."""
        worker = self._worker
        return Held(
            worker_alive=self._worker is not None and self._worker.alive,
            same_modules=self._refs == modules,
            has_report=self._report is not None,
            module_files=frozenset(os.path.relpath(m.path, self.root) for m in modules if m.path),
            imported=frozenset(self._imported),
            watched=self._watched,
            broken=self._broken,
            faulted=self._faulted,
            holds_stale=frozenset(
                name for name, ps in self._known.items()
                if name in self._broken and worker is not None and any(self._owners.get(p["id"]) is worker for p in ps)
            ),
        )

    def _keep_broken(self, update: LoadOutcome, decision: Incremental, modules: list[ModuleRef]) -> LoadOutcome:
        """The broken modules this update did not import again stay broken (``Incremental.still_broken``):
        their errors stay, and so do their last good prompts (stale, see ``_merge``)."""
        still = decision.still_broken(update.reimported)
        if not still or self._report is None:
            return update
        files = {os.path.relpath(m.path, self.root) for m in modules if m.name in still and m.path}
        kept = [e for e in self._report["errors"] if e["file"] in files]
        return dataclasses.replace(update, broken=update.broken | still, errors=[*kept, *update.errors])

    def _merge(self, outcome: LoadOutcome, names: list[str]) -> tuple[list[PromptReport], dict[str, WorkerProcess]]:
        """This load's prompts, plus the last good prompts of its broken modules (marked stale).

        Returns the prompts in module order and, for each stale one, the worker that holds it.
        """
        kept = last_good(names, outcome.broken, self._known, outcome.prompts, outcome.owners)
        module_of = dict(outcome.owners)
        stale: list[PromptReport] = []
        owners: dict[str, WorkerProcess] = {}
        for name, prompt in kept.stale:
            holder = self._owners.get(prompt["id"], self._worker)
            stale.append({**prompt, "stale": True})
            module_of[prompt["id"]] = name
            if holder is not None:
                owners[prompt["id"]] = holder
        self._known = kept.known
        rank = {name: i for i, name in enumerate(names)}
        # A prompt report handed on unchanged by an incremental load keeps its copy (and so its hash).
        copies: dict[int, tuple[PromptReport, PromptReport]] = {}
        fresh: list[PromptReport] = []
        for p in outcome.prompts:
            known_copy = self._copies.get(id(p))
            copy = known_copy[1] if known_copy is not None and known_copy[0] is p else {**p, "stale": False}
            copies[id(p)] = (p, copy)
            fresh.append(copy)
        self._copies = copies
        prompts = sorted([*fresh, *stale], key=lambda p: (rank.get(module_of.get(p["id"], ""), len(rank)), p["line"] or 0))
        return prompts, owners

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
        before = self._hashes
        errors = distinct([*errors, *outcome.errors])  # a shared module's error once, not once per importer
        good = not errors
        prompts, owners = self._merge(outcome, names)
        cache = self._hash_cache
        hashes = prompt_hashes(prompts, cache)
        self._hash_cache = {id(p): cache[id(p)] for p in prompts if id(p) in cache}
        # Shown as the truth at rest: a fresh load of every module, with no change since it started.
        verified = outcome.kind == "full" and not self._needs_verify and not self._unseen and not self._dirty
        disagreements = 0
        if verifying:
            disagreements = self._compare(before, hashes, errors)
            if not disagreements and self._report is not None:
                self._confirm(outcome, prompts, owners, hashes, verified, files)
                return
        self._version += 1
        report: Report = {
            "version": self._version,
            "project": str(self.root),
            "generated_at": datetime.now(UTC).isoformat(),
            "duration_ms": outcome.duration_ms,
            "stale": any(p["stale"] for p in prompts),
            "errors": errors,
            "prompts": prompts,
            "hash": content_hash(hashes, errors),
            "notice": None if prompts or errors else EMPTY_NOTICE.format(root=self.root),
            "modules_found": found_modules,
            "load": outcome.kind,
            "reevaluated": list(outcome.reevaluated),
            "verified": verified,
            "disagreements": disagreements,
            "imported_note": self._imported_note,
        }
        self._swap_workers(outcome.worker, owners)
        self._hashes = hashes
        self._reports.remember(report)
        self._report = report
        self._reports.record(report, files)
        after = self._hashes
        changed = sorted(k for k in after.keys() | before.keys() if before.get(k) != after.get(k))
        extra: dict[str, Any] = {"load": outcome.kind, "reevaluated": list(outcome.reevaluated), "verification": "corrected" if disagreements else ""}
        if good:
            summary = f"Report {self._version}: {len(prompts)} prompt(s) in {elapsed * 1000:.0f} ms"
            if disagreements:
                summary += f", verified: a fresh load corrected {len(changed)} prompt(s)"
            if files:
                summary += f" after changes to {', '.join(files[:3])}{'…' if len(files) > 3 else ''}"
            if outcome.kind == "incremental":
                summary += f" ({len(outcome.reevaluated)} re-evaluated)"
            self._emit(SessionEvent("report", self._version, summary, changed_files=files, changed_prompts=changed, **extra))
        else:
            first = errors[0]
            where = f"{first['file']}:{first['line']}: " if first.get("file") else ""
            summary = f"{where}{first['type']}: {first['message']}".splitlines()[0][:300]
            if report["stale"]:
                summary += " (its module's last good prompts are shown, marked stale)"
            self._emit(SessionEvent("error", self._version, summary, changed_files=files, changed_prompts=changed, **extra))

    def _compare(self, before: dict[str, str], after: dict[str, str], errors: list[LoadErrorDict]) -> int:
        """How many prompts (and the error list, as one) a fresh load shows differently from the report
        shown, logged: each is a change the incremental evaluation did not see."""
        shown = self._report
        changed = sorted(k for k in after.keys() | before.keys() if before.get(k) != after.get(k))
        where = lambda errs: [(e["file"], e["line"], e["type"], e["message"]) for e in errs]  # noqa: E731 - not the traceback: its frames differ
        errors_differ = shown is not None and where(shown["errors"]) != where(errors)
        count = len(changed) + int(errors_differ)
        self.verifications += 1
        self.disagreements += count
        files = ", ".join(sorted(self._since_verified)[:10]) or "none"
        if count:
            what = ", ".join(changed[:10]) + ("…" if len(changed) > 10 else "")
            log.warning(
                "verifying %s: a fresh load disagreed with the report shown on %d prompt(s)%s: %s (changes since the last "
                "verified report: %s); the fresh load is shown",
                self.root, len(changed), " and the load errors" if errors_differ else "", what or "none", files,
            )
        else:
            log.info("verifying %s: a fresh load agrees with the report shown (changes since the last verified report: %s)", self.root, files)
        self._since_verified = set()
        return count

    def _confirm(
        self, outcome: LoadOutcome, prompts: list[PromptReport], owners: dict[str, WorkerProcess], hashes: dict[str, str], verified: bool,
        files: list[str],
    ) -> None:
        """A verification that agrees: hold its fresh worker; the report keeps its version and says it is
        verified (one "report" event when that changed, so the front ends show it). Its prompts are the
        fresh load's (equal): the next update hands those on, and the history reuses their digests."""
        shown = self._report
        assert shown is not None
        self._swap_workers(outcome.worker, owners)
        self._hashes = hashes
        report: Report = {
            **shown, "prompts": prompts, "verified": verified, "disagreements": 0, "load": "full", "imported_note": self._imported_note,
            "reevaluated": list(outcome.reevaluated), "duration_ms": outcome.duration_ms,
        }
        self._report = report
        self._reports.replace(shown, report)
        self._reports.record(report, files)
        if verified and not shown["verified"]:
            summary = f"Report {self._version} verified: a fresh load of the whole project agrees"
            self._emit(SessionEvent("report", self._version, summary, load="full", reevaluated=list(outcome.reevaluated), verification="agreed"))

    def _swap_workers(self, worker: WorkerProcess | None, owners: dict[str, WorkerProcess]) -> None:
        """Hold the new worker and the owners of stale prompts; retire every other worker."""
        before = [self._worker, *self._owners.values()]
        self._worker, self._owners = worker, owners
        keep = {id(w) for w in [worker, *owners.values()] if w is not None}
        for old in {id(w): w for w in before if w is not None}.values():
            if id(old) not in keep:
                self._retire(old)

    def _retire(self, worker: WorkerProcess) -> None:
        """Close a worker once its current job (if any) is answered."""
        self._retiring.add(worker)

        async def close_when_idle() -> None:
            async with worker.lock:
                pass
            await worker.close()
            self._retiring.discard(worker)

        self._spawn(close_when_idle())

    async def _prime(self, spare: WorkerProcess, message: dict[str, Any]) -> None:
        try:
            await spare.request(message, self.timeout)
        except WorkerError as exc:  # the spare is replaced when it is taken; the load reports faults
            log.warning("priming the spare worker failed: %s", exc)

    # -- jobs in the worker --------------------------------------------------------------------
    async def _job(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send a job to the worker holding the prompt (the current project, or the last good version
        of a stale prompt's module); ``{"ok", "result" | "error"}``."""
        prompt_id = str(message.get("prompt_id"))
        if prompt_id not in self._owners and (self._worker is None or not self._worker.alive):
            self._worker = None
            await self.reload()
        worker = self._owners.get(prompt_id) or self._worker
        if worker is None or not worker.alive:
            prompt = find_prompt(self._report, prompt_id)
            if prompt is not None and prompt.get("stale"):
                why = (
                    f"{prompt.get('kind', 'prompt')} {prompt_id!r} is shown as it was when {prompt.get('file')} last loaded, "
                    "and that version can no longer be evaluated; fix the module's load error to evaluate it again"
                )
                return {"ok": False, "error": LoadError.plain("StaleError", why, file=prompt["file"], line=prompt["line"]).to_dict()}
            errors = (self._report["errors"] if self._report is not None else []) or [LoadError.plain("LoadError", "the project could not be loaded").to_dict()]
            return {"ok": False, "error": errors[0]}
        try:
            return await worker.request(message, self.timeout)
        except WorkerError as exc:
            if self._worker is worker:
                self._worker = None
            self._owners = {k: w for k, w in self._owners.items() if w is not worker}
            await worker.close()
            error = exc.error
            prompt = find_prompt(self._report, prompt_id)
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
            {"op": "evaluate", "prompt_id": prompt_id, "example": example, "input": input, "token_budget": token_budget, "input_budget": input_budget,
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
        answer = await self._job({"op": "run", "prompt_id": prompt_id, "example": example, "input": input, "confirm": confirm})
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
        return await self._job({"op": "replay_step", "prompt_id": str(run.get("target")), "run": run.get("id"), "step": step, "overrides": overrides,
                                "source": source, "where": where or {}})

    async def replay_continue(self, run: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
        """The agent forked at a recorded step and run on in the worker (``replay_continue.py``):
        ``{"ok", "result" | "error"}``, the result the child run, ``{"confirm"}`` or ``{"error"}``."""
        return await self._job({"op": "replay_continue", "prompt_id": str(run.get("target")), "run": run.get("id"), **request})

    async def replay_send(self, prompt_id: str, request: dict[str, Any]) -> dict[str, Any]:
        """A replayed request sent to the target's model in the worker (``replay_send.py``):
        ``{"ok", "result" | "error"}``, the result the child run or ``{"confirm": ...}``."""
        return await self._job({"op": "replay_send", "prompt_id": prompt_id, **request})

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
        message = {
            "op": "prepare", "prompt_id": prompt_id, "example": example, "input": input, "contributor": contributor,
            "allow_models": allow_models, "token_budget": token_budget,
        }
        answer = await self._job(message)
        if not answer["ok"]:
            return {"prepared": [], "skipped": [], "error": answer["error"]}
        result: PrepareResult = answer["result"]
        if result["prepared"]:
            await self.reload()
        return result

    def previous_system(self, prompt_id: str, example: str) -> str | None:
        """The system text of this prompt and example in the previous distinct report, if any
        (this session's reports, then the history file's)."""
        return self._reports.previous_system(self._report, prompt_id, example)
