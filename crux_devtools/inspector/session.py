"""``ProjectSession``: loads a project in a worker, re-evaluates on change, holds the latest report.

The web app and the TUI are thin adapters over it (see ``api.py`` for the contract). The session's
process never imports user code: discovery reads files, and every import, inspection, preview and
run happens in a worker process (``process.py``). Changes are coalesced: while one evaluation runs,
any number of further changes make at most one more.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import inspect
import json
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .api import SessionEvent
from .discovery import discover, read_model_config
from .errors import plain_error
from .history import History
from .process import WorkerError, WorkerPool, WorkerProcess

log = logging.getLogger(__name__)

EMPTY_NOTICE = (
    "No prompts found in {root}. Add a .py file that imports crux_devtools and defines a prompt at module "
    "level, e.g. `from crux_devtools import prompt` then `greeter = prompt(\"greeter\", system=\"You are kind.\")`, "
    "or list your modules in pyproject.toml under [tool.crux-devtools] modules = [\"my_prompts\"]."
)


def prompt_hashes(prompts: list[dict[str, Any]]) -> dict[str, str]:
    """A content hash per prompt report: what changed between two reports."""
    return {p["id"]: hashlib.sha256(json.dumps(p, sort_keys=True, default=repr).encode()).hexdigest() for p in prompts}


def content_hash(hashes: dict[str, str], errors: list[dict[str, Any]]) -> str:
    """Hash of what a report says (not when or how fast): the history key."""
    blob = json.dumps({"prompts": list(hashes.items()), "errors": errors}, sort_keys=True, default=repr)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:32]


def report_texts(report: dict[str, Any] | None, limit: int = 2_000) -> list[str]:
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
            for key in ("system", "prompt"):
                if inspection.get(key):
                    texts[inspection[key]] = None
    return list(texts)[:limit]


class ProjectSession:
    """The inspector's one service: the latest report of the project in ``root``, kept live.

    ``timeout`` bounds each worker job (seconds); ``debounce`` groups file events; ``watch=False``
    loads once (CLI, tests); ``history=False`` keeps no SQLite file; ``prewarm=False`` starts each
    worker only when needed; ``fork=False`` starts each worker as a fresh interpreter instead of
    forking it from the pre-warmed fork server (slower: about a second of CPU per change).
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
    ) -> None:
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise NotADirectoryError(f"project folder {str(self.root)!r} does not exist or is not a folder")
        self.timeout = timeout
        self.debounce = debounce
        self.watch = watch
        self.prewarm = prewarm
        self.history = History(self.root) if history else None
        self._report: dict[str, Any] | None = None
        self._last_good: dict[str, Any] | None = None
        self._version = 0
        self._subscribers: list[Callable[[SessionEvent], Any]] = []
        self._pool = WorkerPool(self.root, prewarm=prewarm, fork=fork)
        self._worker: WorkerProcess | None = None
        self._dirty = False
        self._pending_files: set[str] = set()
        self._runner: asyncio.Future[None] | None = None
        self._stop: asyncio.Event | None = None
        self._watch_task: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._retiring: set[WorkerProcess] = set()
        self._writes: set[asyncio.Future[None]] = set()  # history writes, finished before closing
        self._preload: list[str] = []
        self._counted: dict[str, list[Any]] | None = None  # texts the last load counted (see ``_prime``)
        self._files: list[str] = []  # the project's module files, compiled ahead by the spare
        self._hashes: dict[str, str] = {}
        self._good_hashes: dict[str, str] = {}
        self._recent: list[dict[str, Any]] = []  # distinct good reports, newest last (no history file)
        self.evaluations = 0

    # -- reading -------------------------------------------------------------------------------
    @property
    def report(self) -> dict[str, Any] | None:
        return self._report

    def subscribe(self, callback: Callable[[SessionEvent], Any]) -> Callable[[], None]:
        self._subscribers.append(callback)

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
        if self.prewarm:
            await self._pool.warm()
        await self.reload()
        if self.watch and self._watch_task is None:
            from .watcher import watch

            self._stop = asyncio.Event()
            self._watch_task = asyncio.create_task(watch(self.root, self._changed, self._stop, debounce=self.debounce))
            self._watch_task.add_done_callback(self._watch_ended)
            # The task's first step creates the inotify watch synchronously: let it run before returning,
            # so a save right after ``start()`` is seen.
            for _ in range(3):
                await asyncio.sleep(0)

    async def stop(self) -> None:
        if self._stop is not None:
            self._stop.set()
        if self._watch_task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._watch_task
            self._watch_task = None
        if self._runner is not None and not self._runner.done():
            self._runner.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._runner
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
        if self._worker is not None:
            await self._worker.close()
            self._worker = None
        await self._pool.close()
        for worker in list(self._retiring):
            await worker.close()
        self._retiring.clear()
        if self._writes:
            await asyncio.gather(*list(self._writes), return_exceptions=True)
        if self.history is not None:
            self.history.close()
            self.history = None

    async def __aenter__(self) -> ProjectSession:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def settled(self) -> None:
        """Wait until no evaluation is running or pending and the next worker is warm (benchmarks, tests)."""
        while self._runner is not None and not self._runner.done():
            await asyncio.shield(self._runner)
        await self._pool.ready()
        if self._tasks:  # priming the spare, retiring old workers
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    def _watch_ended(self, task: asyncio.Task[None]) -> None:
        if task.cancelled() or task.exception() is None:
            return
        exc = task.exception()
        log.error("watching %s stopped: %r", self.root, exc)
        self._emit(SessionEvent("error", self._version, f"Watching files stopped ({type(exc).__name__}: {exc}); reload by hand"))

    def _changed(self, files: list[str]) -> None:
        """Watcher callback: schedule a re-evaluation without waiting for it."""
        self._schedule(files)

    def _schedule(self, files: list[str] | tuple[str, ...] = ()) -> asyncio.Future[None]:
        self._pending_files.update(files)
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
            await self._load(files)

    # -- loading -------------------------------------------------------------------------------
    async def _load(self, files: list[str]) -> None:
        self.evaluations += 1
        self._emit(SessionEvent("loading", self._version, "Re-evaluating the project…", changed_files=files))
        started = time.perf_counter()
        try:
            discovery = await asyncio.to_thread(discover, self.root)
            models, model_errors = await asyncio.to_thread(read_model_config, self.root)
        except OSError as exc:
            error = plain_error(type(exc).__name__, f"cannot read the project folder: {exc}")
            self._hold([], [error], files, None, 0.0, time.perf_counter() - started, False)
            return
        errors: list[dict[str, Any]] = list(discovery.errors) + model_errors
        self._files = [m.path for m in discovery.modules if m.path and not m.package]
        prompts: list[dict[str, Any]] = []
        duration_ms = 0.0
        try:
            worker: WorkerProcess | None = await self._pool.take()
        except OSError as exc:
            errors.append(plain_error("WorkerError", f"cannot start a worker process ({exc}); check the Python environment"))
            self._hold(prompts, errors, files, None, duration_ms, time.perf_counter() - started, bool(discovery.modules))
            return
        assert worker is not None
        try:
            load = {"op": "load", "root": str(self.root), "modules": [m.to_dict() for m in discovery.modules], "models": models}
            answer = await worker.request(load, self.timeout)
        except WorkerError as exc:
            errors.append(exc.error)
            await worker.close()
            worker = None
        else:
            duration_ms = answer.get("duration_ms", 0.0)
            if answer["ok"]:
                prompts = answer["result"]["prompts"]
                errors.extend(answer["result"]["errors"])
                self._preload = answer["result"].get("preload", [])
                self._counted = answer["result"].get("counted")
            else:
                errors.append(answer["error"])
        self._hold(prompts, errors, files, worker, duration_ms, time.perf_counter() - started, bool(discovery.modules))
        # The next change's worker warms up while the person edits, primed with this load's libraries,
        # the texts it counted (token counts are cached by content: unchanged parts then cost nothing)
        # and the project's files compiled as they are now (an unchanged file is not compiled again).
        spare = await self._pool.warm()
        if spare is not None:
            counted = self._counted or {"texts": report_texts(self._last_good), "separated": []}
            message = {"op": "prime", "root": str(self.root), "modules": self._preload, "files": self._files, **counted}
            self._spawn(self._prime(spare, message))

    def _hold(
        self,
        prompts: list[dict[str, Any]],
        errors: list[dict[str, Any]],
        files: list[str],
        worker: WorkerProcess | None,
        duration_ms: float,
        elapsed: float,
        found_modules: bool,
    ) -> None:
        before = self._hashes
        self._version += 1
        good = not errors
        if good or self._last_good is None:
            hashes = prompt_hashes(prompts)
            report = {
                "version": self._version,
                "project": str(self.root),
                "generated_at": datetime.now(UTC).isoformat(),
                "duration_ms": duration_ms,
                "stale": False,
                "errors": errors,
                "prompts": prompts,
                "hash": content_hash(hashes, errors),
                "notice": None if prompts or errors else EMPTY_NOTICE.format(root=self.root),
                "modules_found": found_modules,
            }
            self._swap_worker(worker)
            self._hashes = hashes
            if good:
                self._last_good = report
                self._good_hashes = hashes
                self._remember(report)
        else:
            report = {**self._last_good, "version": self._version, "stale": True, "errors": errors}
            self._hashes = self._good_hashes
            if worker is not None:
                self._retire(worker)
        self._report = report
        if self.history is not None:  # off the event loop: the report is shown first
            write = asyncio.ensure_future(asyncio.to_thread(self.history.record, report, ok=good, errors=errors, changed_files=files))
            self._writes.add(write)
            write.add_done_callback(self._written)
        after = self._hashes
        changed = sorted(k for k in after.keys() | before.keys() if before.get(k) != after.get(k))
        if good:
            summary = f"Report {self._version}: {len(prompts)} prompt(s) in {elapsed * 1000:.0f} ms"
            if files:
                summary += f" after changes to {', '.join(files[:3])}{'…' if len(files) > 3 else ''}"
            self._emit(SessionEvent("report", self._version, summary, changed_files=files, changed_prompts=changed))
        else:
            first = errors[0]
            where = f"{first['file']}:{first['line']}: " if first.get("file") else ""
            summary = f"{where}{first['type']}: {first['message']}".splitlines()[0][:300]
            if report["stale"]:
                summary += " (showing the last good report)"
            self._emit(SessionEvent("error", self._version, summary, changed_files=files, changed_prompts=changed))

    def _written(self, write: asyncio.Future[None]) -> None:
        self._writes.discard(write)
        if not write.cancelled() and write.exception() is not None:
            log.error("writing the history file failed: %r", write.exception())

    def _remember(self, report: dict[str, Any]) -> None:
        if self._recent and self._recent[-1]["hash"] == report["hash"]:
            return
        self._recent = [r for r in self._recent if r["hash"] != report["hash"]][-19:] + [report]

    def _swap_worker(self, worker: WorkerProcess | None) -> None:
        old, self._worker = self._worker, worker
        if old is not None and old is not worker:
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
        """Send a job to the worker holding the current project; ``{"ok", "result" | "error"}``."""
        if self._worker is None or not self._worker.alive:
            self._worker = None
            await self.reload()
        worker = self._worker
        if worker is None:
            errors = (self._report or {}).get("errors") or [plain_error("LoadError", "the project could not be loaded")]
            return {"ok": False, "error": errors[0]}
        try:
            return await worker.request(message, self.timeout)
        except WorkerError as exc:
            if self._worker is worker:
                self._worker = None
            await worker.close()
            return {"ok": False, "error": exc.error}

    async def evaluate(
        self,
        prompt_id: str,
        *,
        example: str | None = None,
        input: dict[str, Any] | None = None,
        token_budget: int | None = None,
        input_budget: int | None = None,
    ) -> dict[str, Any]:
        """One example (or custom input) re-evaluated in the worker; returns an ``ExampleReport``."""
        answer = await self._job(
            {"op": "evaluate", "prompt_id": prompt_id, "example": example, "input": input, "token_budget": token_budget, "input_budget": input_budget}
        )
        if answer["ok"]:
            return answer["result"]
        name = "custom" if input is not None else (example or "")
        return {"name": name, "input": input or {}, "error": answer["error"], "inspection": None, "preview": None, "preview_error": None, "truncated": False}

    async def run(self, prompt_id: str, *, example: str | None = None, input: dict[str, Any] | None = None) -> dict[str, Any]:
        """Run an agent in the worker; returns ``{"text", "steps", "error"}``."""
        answer = await self._job({"op": "run", "prompt_id": prompt_id, "example": example, "input": input})
        if answer["ok"]:
            return answer["result"]
        return {"text": None, "steps": [], "error": answer["error"]}

    async def prepare_summaries(
        self,
        prompt_id: str,
        *,
        example: str | None = None,
        input: dict[str, Any] | None = None,
        contributor: str | None = None,
        allow_models: bool = False,
        token_budget: int | None = None,
    ) -> dict[str, Any]:
        """Prepare one example's missing summaries into ``DIR/.crux/summaries.sqlite3`` (extractive
        only, unless ``allow_models``), then reload, so every view shows the summary rung measured."""
        message = {
            "op": "prepare", "prompt_id": prompt_id, "example": example, "input": input, "contributor": contributor,
            "allow_models": allow_models, "token_budget": token_budget,
        }
        answer = await self._job(message)
        if not answer["ok"]:
            return {"prepared": [], "skipped": [], "error": answer["error"]}
        result: dict[str, Any] = answer["result"]
        if result["prepared"]:
            await self.reload()
        return result

    def previous_system(self, prompt_id: str, example: str) -> str | None:
        """The system text of this prompt and example in the previous distinct report, if any.

        Reports of this session are searched in memory first; the history file covers earlier
        sessions (and may still be writing the newest report, which is skipped either way).
        """
        from .history import system_of

        if self._last_good is None:
            return None
        now = system_of(self._last_good, prompt_id, example)
        for report in reversed(self._recent[:-1]):
            text = system_of(report, prompt_id, example)
            if text is not None and text != now:
                return text
        if self.history is not None:
            return self.history.previous_system(self._last_good["hash"], prompt_id, example, now)
        return None
