"""Recording runs: every ``generate``/``agenerate`` of the process, written to ``DIR/.crux/runs.sqlite3``.

Turned on with ``record_runs(DIR)`` or the environment variable ``CRUX_DEVTOOLS_RECORD=DIR`` (read
at the first ``generate`` of the process, never at import). While nothing records, ``begin`` costs
one check per run.

A run is built when ``agenerate`` returns or raises (``Step.to_dict()`` of every step), ``redact``
is applied, and it is written at once, on the calling thread: about a millisecond per run (see
``benchmarks/bench_runs.py``), and when ``generate`` returns its run is in the store. (A writer
thread was tried first: handing it the work cost the application more, as the two threads took
turns holding the GIL.) Recording never changes a run's outcome and never raises into the
application: a write or a ``redact`` that fails turns that recorder off with one warning on the
``crux_devtools`` logger.

A write that finds the database locked by another process for longer than ``busy_timeout`` (a
backup, the ``sqlite3`` shell) is not a fault: the run waits in memory (``PENDING_CAP`` runs at most)
and a background thread retries until the lock is free, then writes the waiting runs in order.
Runs made meanwhile join the queue without waiting for the lock. Recording stays on.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .runstore import RUNS_FILE, RunStore, is_locked, iso_now, new_run_id, storable

logger = logging.getLogger("crux_devtools")

ENV_VAR = "CRUX_DEVTOOLS_RECORD"

Redact = Callable[[dict[str, Any]], dict[str, Any]]
PENDING_CAP = 10_000  # runs held while the database is locked; beyond it the oldest is dropped
RETRY_SECONDS = 0.2  # pause between two attempts at a locked database (each also waits busy_timeout)


class RunRecorder:
    """Writes runs to ``dir/.crux/runs.sqlite3``. ``record_runs`` makes one and turns it on.

    ``redact(run) -> run`` may rewrite each run before it is written; ``keep`` is how many of the
    newest runs the store keeps; ``busy_timeout`` is how long (seconds) a write waits for another
    process's lock before its run is queued and retried in the background (recording stays on). ``close()`` stops recording; a recorder
    is also a context manager. Safe to share between threads and across ``fork``.
    """

    def __init__(self, dir: str | os.PathLike[str] = ".", *, redact: Redact | None = None, keep: int = 1000, busy_timeout: float = 2.0) -> None:
        if redact is not None and not callable(redact):
            raise TypeError(f"redact must be a function run -> run, got {type(redact).__name__}")
        if isinstance(keep, bool) or not isinstance(keep, int) or keep < 1:
            raise ValueError(f"keep must be a positive int (how many of the newest runs to keep), got {keep!r}")
        self.dir = Path(os.path.abspath(os.fspath(dir)))
        self.path = self.dir / RUNS_FILE
        self.redact = redact
        self.keep = keep
        self.busy_timeout = busy_timeout
        self.enabled = True
        self.failure: str | None = None  # why recording stopped, once it has
        self.written = 0
        self._lock = threading.Lock()
        self._store: RunStore | None = None
        self._pid = os.getpid()
        self._pending: list[dict[str, Any]] = []  # runs waiting for another process's lock to go
        self._retrying: threading.Thread | None = None
        self._wake = threading.Event()  # set by ``flush``: try again now
        self.dropped = 0  # runs lost because more than PENDING_CAP waited for a lock
        _recorders.add(self)

    def __repr__(self) -> str:
        state = "on" if self.enabled else f"off ({self.failure})" if self.failure else "off"
        return f"<RunRecorder {str(self.path)!r} {state}, {self.written} written>"

    def __enter__(self) -> RunRecorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop recording and close the store (after writing runs still waiting for a lock, if the
        lock goes within ``busy_timeout``)."""
        if self._pending and self._pid == os.getpid():
            self.flush(self.busy_timeout)
        _deactivate(self)
        with _lock:
            if self in _redacting:
                _redacting.remove(self)
        with self._lock:
            self.enabled = False
            if self._store is not None and self._pid == os.getpid():
                self._store.close()
            self._store = None

    def write(self, run: dict[str, Any]) -> dict[str, Any] | None:
        """Redact and write one run; returns what was written (``None`` if nothing was). Never raises."""
        if not self.enabled:
            return None
        redacted = self.redacted(run)
        return None if redacted is None else self.store(redacted)

    def redacted(self, run: dict[str, Any]) -> dict[str, Any] | None:
        """``run`` through this recorder's ``redact`` (``run`` itself when it has none); ``None``
        when the hook failed, which turns this recorder off. Never raises."""
        if self.redact is None:
            return run
        try:
            redacted = self.redact(run)
            if not isinstance(redacted, dict):
                raise TypeError(f"redact returned {type(redacted).__name__}; it must return the run dict")
        except Exception as exc:  # noqa: BLE001 - user code: recording stops, the application never sees it
            self.disable(f"redact raised {type(exc).__name__}: {exc}" + (WITHHELD if self in _redacting else ""))
            return None
        return redacted

    def store(self, run: dict[str, Any]) -> dict[str, Any] | None:
        """Write one run that is already redacted; returns what was written. Never raises."""
        if not self.enabled:
            return None
        if _suspended is not None and run.get("origin") != "inspector":
            _say_suspended()
            return None
        run = relative_file(run, self.dir)
        try:
            with self._lock:
                if not self.enabled:
                    return None
                if self._pending:  # the database is locked: queue behind the runs already waiting
                    self._queue(run)
                    return None
                try:
                    self._store_here().write(run, keep=self.keep)
                except Exception as exc:
                    if not is_locked(exc):
                        raise
                    self._queue(run)
                    return None
                self.written += 1
        except Exception as exc:  # noqa: BLE001 - any fault of the disk or the data turns recording off, once
            self.disable(f"could not write a run: {exc}")
            return None
        return run

    @property
    def pending(self) -> int:
        """How many runs wait for another process to release the database."""
        return len(self._pending)

    def _queue(self, run: dict[str, Any]) -> None:
        """Hold ``run`` until the lock is free and make sure a retry thread is on it (under ``_lock``)."""
        if not self._pending:
            logger.info("crux_devtools: %s is locked by another process; runs wait in memory until it is free", self.path)
        self._pending.append(run)
        if len(self._pending) > PENDING_CAP:
            del self._pending[0]
            self.dropped += 1
        if self._retrying is None or not self._retrying.is_alive():
            self._retrying = threading.Thread(target=self._retry_pending, name="crux-devtools-record-retry", daemon=True)
            self._retrying.start()

    def _retry_pending(self) -> None:
        """Write the waiting runs, oldest first, retrying while the database stays locked. The
        attempt is made outside ``_lock``: a run made meanwhile joins the queue without waiting."""
        while True:
            with self._lock:
                if not self.enabled or not self._pending:
                    self._retrying = None
                    return
                run, store = self._pending[0], self._store_here()
            try:
                store.write(run, keep=self.keep)
            except Exception as exc:  # noqa: BLE001 - never raises into the application
                if is_locked(exc):
                    self._wake.wait(RETRY_SECONDS)  # still held: give its holder (and the application) a turn
                    self._wake.clear()
                    continue
                with self._lock:
                    self._pending.clear()
                    self._retrying = None
                self.disable(f"could not write a run: {exc}")
                return
            with self._lock:  # only this thread removes runs from the queue
                self._pending.pop(0)
                self.written += 1

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until no run waits for a lock (at most ``timeout`` seconds); True when none does."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self._pending and self.enabled:
            thread = self._retrying
            if thread is None:
                with self._lock:
                    if self._pending and self._retrying is None:
                        self._retrying = threading.Thread(target=self._retry_pending, name="crux-devtools-record-retry", daemon=True)
                        self._retrying.start()
                continue
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                break
            self._wake.set()
            thread.join(remaining)
        return not self._pending

    def _store_here(self) -> RunStore:
        """The store, opened on first write, and again in a forked child (never the parent's connection)."""
        if self._pid != os.getpid():
            if self._store is not None:
                _inherited_stores.append(self._store)  # the parent's: kept alive, never closed here
            self._store, self._pid = None, os.getpid()
        if self._store is None:
            self._store = RunStore(self.path, busy_timeout=self.busy_timeout)
        return self._store

    def write_live(self, row: dict[str, Any]) -> None:
        """Write a streaming step's text so far (``live.py``). Skipped, never queued or retried, when
        the store is busy or recording is off; never raises and never turns recording off."""
        if not self.enabled or self._pending or self._pid != os.getpid():
            return
        if _suspended is not None and (row.get("summary") or {}).get("origin") != "inspector":
            return
        try:
            store = self._store_here()
            store.write_live(row)
        except Exception:  # noqa: BLE001 - the live view misses one update; the run is written as usual
            return

    def disable(self, reason: str) -> None:
        """Turn this recorder off with one warning; the application carries on unaffected."""
        if not self.enabled:
            return
        self.enabled = False
        self.failure = reason
        _deactivate(self)
        logger.warning("crux_devtools: recording runs to %s is off for this process: %s", self.path, reason)


_inherited_stores: list[RunStore] = []
_recorders: weakref.WeakSet[RunRecorder] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    """Locks another thread held at the fork stay held in the child forever: give it fresh ones."""
    global _lock
    _lock = threading.Lock()
    for recorder in list(_recorders):
        recorder._lock = threading.Lock()
        recorder._pending = []  # the parent writes its own waiting runs; its retry thread is not here
        recorder._retrying = None
        recorder._wake = threading.Event()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _flush_at_exit() -> None:
    """At the process's end, runs still waiting for another process's lock get one more wait."""
    for recorder in list(_recorders):
        if recorder.pending and recorder._pid == os.getpid():
            recorder.flush(recorder.busy_timeout)


atexit.register(_flush_at_exit)


def relative_file(run: dict[str, Any], root: str | os.PathLike[str]) -> dict[str, Any]:
    """``run`` with its target's file relative to ``root`` when the file lies inside it."""
    file = run.get("file")
    if isinstance(file, str) and os.path.isabs(file):
        try:
            return {**run, "file": Path(file).relative_to(root).as_posix()}
        except ValueError:
            pass
    return run


def record_runs(dir: str | os.PathLike[str] = ".", *, redact: Redact | None = None, keep: int = 1000) -> RunRecorder:
    """Record every ``generate``/``agenerate`` of this process into ``dir/.crux/runs.sqlite3``.

    Returns the ``RunRecorder``: ``.close()`` (or leaving its ``with`` block) stops recording.
    ``redact(run) -> run`` may rewrite a run before it is written; only the newest ``keep`` runs are
    kept. Recording never changes a run's outcome and never raises into the application.
    """
    recorder = RunRecorder(dir, redact=redact, keep=keep)
    if _suspended is not None:
        recorder.enabled, recorder.failure = False, _suspended
        _say_suspended()
        return recorder
    with _lock:
        _active.append(recorder)
        if redact is not None:
            _redacting.append(recorder)
    return recorder


# -- process-wide state: the recorders that are on, and the scope of the inspector's own runs ------
_lock = threading.Lock()
_active: list[RunRecorder] = []
# The recorders whose ``redact`` is in force for every run of the process, until ``close()``: a
# recorder a failing hook turned off stays here, so its runs are withheld rather than sent unmasked.
_redacting: list[RunRecorder] = []
WITHHELD = "; until it is closed, no run of this process is stored or exported (they would leave unmasked)"
_env_checked = False


def _deactivate(recorder: RunRecorder) -> None:
    with _lock:
        if recorder in _active:
            _active.remove(recorder)


# Listeners take each run after every recorder has written it (the OpenTelemetry export): they see
# the same redacted run the recorders wrote, and must not block (``listener.write(run)``).
_listeners: list[Any] = []


def add_listener(listener: Any) -> None:
    if _suspended is not None:
        _say_suspended()
        return
    with _lock:
        _listeners.append(listener)


def remove_listener(listener: Any) -> None:
    with _lock:
        if listener in _listeners:
            _listeners.remove(listener)


def _check_env() -> None:
    """Turn recording on from ``CRUX_DEVTOOLS_RECORD``, once per process (at the first run)."""
    global _env_checked
    with _lock:
        if _env_checked:
            return
        _env_checked = True
    folder = os.environ.get(ENV_VAR, "").strip()
    if folder:
        try:
            record_runs(folder)
        except Exception as exc:  # noqa: BLE001 - a bad variable must not break the application
            logger.warning("crux_devtools: %s=%r does not turn recording on: %s", ENV_VAR, folder, exc)


# -- inside the inspector's worker: the application's own recording is off ------------------------
# ``inspect``, ``check``, ``serve`` and ``tui`` import and evaluate a project and must write nothing:
# the worker calls ``suspend`` before any user code runs. Then ``record_runs`` (and so
# ``CRUX_DEVTOOLS_RECORD``) gives a recorder that is off, ``record_call`` writes nothing and
# ``emit_otel`` gets no run; only the inspector's own Run is recorded (origin "inspector").
_suspended: str | None = None
_said_suspended = False


def suspend(reason: str) -> None:
    """Turn the application's recording and span export off for the rest of this process."""
    global _suspended
    _suspended = reason


def _say_suspended() -> None:
    global _said_suspended
    if not _said_suspended:
        _said_suspended = True
        logger.warning("crux_devtools: %s", _suspended)


@dataclass
class Scope:
    """Runs made inside ``recording_scope``: their origin, an extra recorder, and the runs built."""

    origin: str = "app"
    recorder: RunRecorder | None = None
    runs: list[dict[str, Any]] = field(default_factory=list)


_scope: ContextVar[Scope | None] = ContextVar("crux_devtools_recording_scope", default=None)


@contextlib.contextmanager
def recording_scope(*, origin: str = "inspector", recorder: RunRecorder | None = None) -> Iterator[Scope]:
    """For the devtools' own runs: runs made inside get ``origin``, also go to ``recorder`` (not
    turned on process-wide) and are collected in ``scope.runs`` as redacted for the stores (only
    identity and status when a ``redact`` failed)."""
    scope = Scope(origin, recorder)
    token = _scope.set(scope)
    try:
        yield scope
    finally:
        _scope.reset(token)


# -- building a run (called by runtime.agenerate) --------------------------------------------------
def begin(target: Any, input: Any) -> RunCapture | None:
    """A capture for one run, or ``None`` when nothing records (the common, free case)."""
    if not _env_checked:
        _check_env()
    scope = _scope.get()
    if not _active and scope is None and not _listeners:
        return None
    try:
        return RunCapture(target, input, scope)
    except Exception as exc:  # noqa: BLE001
        _internal_failure(exc)
        return None


class RunCapture:
    """What one run needs for its record, gathered while ``agenerate`` runs."""

    __slots__ = ("target", "raw_input", "scope", "started_at", "started", "model", "validated", "plan_inputs", "id", "live")

    def __init__(self, target: Any, input: Any, scope: Scope | None) -> None:
        self.target = target
        self.raw_input = input
        self.scope = scope
        self.started_at = iso_now()
        self.started = time.perf_counter()
        self.model: Any = None
        self.validated: Any = None
        self.plan_inputs: Any = None
        self.id = new_run_id()  # known from the start: a live page of the run names it
        self.live: Any = None  # the LiveRun, once a step streams

    def consumers(self) -> list[RunRecorder]:
        """The recorders this run goes to: every one ``record_runs`` turned on, and the scope's."""
        consumers = [r for r in _active_now() if r.enabled]
        scope = self.scope
        if scope is not None and scope.recorder is not None and scope.recorder.enabled and scope.recorder not in consumers:
            consumers.append(scope.recorder)
        return consumers

    def live_step(self, index: int) -> Any:
        """A ``LiveStep`` for step ``index``, which streams: its text so far is written to the stores
        this run goes to while it arrives (``live.py``). ``None`` when no store takes it. Never raises."""
        try:
            if self.live is None:
                consumers = self.consumers()
                if not consumers:
                    return None
                from .live import LiveRun

                with _lock:
                    hooks = [r.redact for r in _redacting if r.redact is not None]
                hooks += [r.redact for r in consumers if r.redact is not None and r.redact not in hooks]
                self.live = LiveRun(self.id, self._live_summary(), consumers, hooks)
            return self.live.step(index)
        except Exception as exc:  # noqa: BLE001 - a live view fault never reaches the application
            _internal_failure(exc)
            return None

    def _live_summary(self) -> dict[str, Any]:
        """What a live page shows of the run before it is written (no input: it is redacted with the run)."""
        from ..plan.budget import model_name_of
        from ..compose.prompts import Prompt

        target = self.target
        site = getattr(target, "defined_at", None)
        model = self.model
        name = model if isinstance(model, str) else model_name_of(model) if model is not None else None
        return {
            "target": str(getattr(target, "id", "") or ""), "kind": "prompt" if isinstance(target, Prompt) else "agent",
            "file": site[0] if site else None, "line": site[1] if site else None,
            "origin": self.scope.origin if self.scope is not None else "app", "started_at": self.started_at, "model": name,
        }

    def plan_made(self, index: int, plan: Any, setup: Any) -> None:
        """Step ``index`` was planned: keep what its plan was made from (so it can be replayed)."""
        if self.plan_inputs is None:
            from ..plan.plan_inputs import PlanInputs

            self.plan_inputs = PlanInputs()
        self.plan_inputs.add(index, plan, setup)

    def planned(self, model: Any, validated_input: Any) -> None:
        """The model the run calls and its validated input, known once the run is set up."""
        self.model = model
        self.validated = validated_input

    def finish(self, result: Any = None, exc: BaseException | None = None) -> dict[str, Any] | None:
        """Build the run and hand it to every recorder. Never raises."""
        try:
            if self.live is not None:
                self.live.close()
            run = self._build(result, exc)
            consumers = self.consumers()
            scope = self.scope
            shared = redacted(run, consumers)
            if scope is not None:  # what the devtools show of their own run: as redacted, never more
                scope.runs.append(withheld(run) if shared is None else {k: v for k, v in shared.items() if k != "plan_inputs"})
            if shared is None:
                return run
            for recorder in consumers:
                recorder.store(shared)
            for listener in list(_listeners):
                listener.write(shared)
            return run
        except Exception as exc2:  # noqa: BLE001 - a recording fault never reaches the application
            _internal_failure(exc2)
            return None

    def _build(self, result: Any, exc: BaseException | None) -> dict[str, Any]:
        from ..plan.budget import model_name_of
        from ..errors import ErrorInfo
        from ..compose.prompts import Prompt

        target = self.target
        kind = "prompt" if isinstance(target, Prompt) else "agent"
        prompt = target if kind == "prompt" else getattr(target, "prompt", None)
        site = getattr(target, "defined_at", None)
        if result is None:
            result = getattr(exc, "result", None)  # a run that raised: its steps so far, its stop reason and its error
        if result is not None:
            steps = list(result.steps)
            status = {"text": "ok", "max_steps": "max_steps"}.get(result.stop_reason, "error")
            error = result.error.to_dict() if result.error is not None else None
            text = result.text
        else:
            steps = list(getattr(exc, "steps", None) or [])
            status = "error"
            error = ErrorInfo.from_exception(exc).to_dict() if exc is not None else None
            text = None
        step_dicts = [_step_dict(s) for s in steps]
        model = self.model if self.model is not None else (getattr(target, "model", None) or getattr(prompt, "model", None))
        model_name = model_name_of(model) if not isinstance(model, str) else model
        if model_name is None and step_dicts:
            model_name = (step_dicts[0].get("request") or {}).get("model")
        usage = _sum_usage(step_dicts)
        return {
            "id": self.id,
            "target": str(getattr(target, "id", "") or ""),
            "kind": kind,
            "file": site[0] if site else None,
            "line": site[1] if site else None,
            "origin": self.scope.origin if self.scope is not None else "app",
            "started_at": self.started_at,
            "duration_ms": round((time.perf_counter() - self.started) * 1000, 3),
            "status": status,
            "error": error,
            "model": model_name,
            "input": _input_dict(self.validated, self.raw_input),
            "text": text,
            "usage": usage,
            "steps": step_dicts,
            "plan_inputs": _built(self.plan_inputs),
        }


def redacted(run: dict[str, Any], consumers: list[RunRecorder]) -> dict[str, Any] | None:
    """``run`` redacted once for everything it goes to (every store, every exporter): through the
    ``redact`` of each recorder that ``record_runs`` turned on and of each of ``consumers``, in turn
    (each takes what the one before returned; ``run`` itself is built for this call alone, so a hook
    may change it in place). ``None`` (the run goes nowhere, with a warning) when a hook fails: a
    run is never sent on with a value one of them was there to mask."""
    with _lock:
        hooks = list(_redacting)
    hooks += [r for r in consumers if r.redact is not None and r not in hooks]
    if not hooks:
        return run
    out = run
    for recorder in hooks:
        done = recorder.redacted(out)
        if done is None:
            return None
        out = done
    return out


def withheld(run: dict[str, Any]) -> dict[str, Any]:
    """What is shown of a run a failing ``redact`` kept from every store: its identity, status and
    counts, none of its texts."""
    kept = {k: run.get(k) for k in ("id", "target", "kind", "file", "line", "origin", "started_at", "duration_ms", "model", "usage")}
    message = f"the run ended {run.get('status')!r}, but its texts are not shown: the redact hook failed, so it was neither stored nor exported"
    return {**kept, "status": "error", "error": {"type": "RedactError", "message": message, "traceback": None}, "input": None, "text": None, "steps": []}


def _step_dict(step: Any) -> dict[str, Any]:
    # ``to_dict`` already builds new plain containers (a snapshot); the store caps and cleans them.
    try:
        return step.to_dict()
    except Exception as exc:  # noqa: BLE001 - a step that cannot be converted is still a step
        return {"index": getattr(step, "index", None), "error": {"type": "RecordingError", "message": f"this step could not be recorded: {exc!r}", "traceback": None}}


def _built(plan_inputs: Any) -> dict[str, Any] | None:
    """The steps' plan inputs as data; a fault here loses only the replay of this run, never the run."""
    if plan_inputs is None:
        return None
    try:
        return plan_inputs.build()  # type: ignore[no-any-return]
    except Exception as exc:  # noqa: BLE001
        _internal_failure(exc)
        return None


def _sum_usage(steps: list[dict[str, Any]]) -> dict[str, int] | None:
    reported = [s["usage"] for s in steps if isinstance(s.get("usage"), dict)]
    if not reported:
        return None
    keys = ["input_tokens", "output_tokens", *(k for k in ("cache_read_tokens", "cache_write_tokens", "cache_write_1h_tokens") if any(k in u for u in reported))]
    return {key: sum(u.get(key) or 0 for u in reported if isinstance(u.get(key) or 0, int)) for key in keys}


def _input_dict(validated: Any, raw: Any) -> Any:
    for value, how in ((validated, "json"), (validated, "python")):
        if value is not None and hasattr(value, "model_dump"):
            try:
                return value.model_dump(mode=how)
            except Exception:  # noqa: BLE001 - fall through to a plainer form
                continue
    return storable(raw)


def _active_now() -> list[RunRecorder]:
    with _lock:
        return list(_active)


_failed_once = False


def _internal_failure(exc: Exception) -> None:
    global _failed_once
    if not _failed_once:
        _failed_once = True
        logger.warning("crux_devtools: a run could not be recorded (%s: %s); the run itself is unaffected", type(exc).__name__, exc)


__all__ = ["ENV_VAR", "RunRecorder", "Scope", "begin", "record_runs", "recording_scope"]
