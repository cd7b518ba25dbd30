"""A streamed step's text while it arrives, published to the run store for the pages that show it.

While a run is recorded and one of its steps streams (``generate(..., on_text=...)``, or
``record_call``'s ``call.stream(...)``), the step's text so far is written to the store's
``live_runs`` table: once when the step starts, at once when its first piece arrives, then at most
every ``LIVE_EVERY`` seconds, the last pieces included (never more than ``LIVE_EVERY`` late). The
application's thread only appends each piece to a list; one daemon thread per process does the
writes. When the run is written, its live row goes in the same transaction.

The text goes through every ``redact`` in force before it is written, as the finished run will; a
hook that fails on it (or a store that is locked) skips that update, never the run. A row left by
a process that died mid-stream is not shown (its pid is gone).

``stream_figures`` gives a finished (or live) step's time to first token and tokens per second, the
one computation every page and the TUI show.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

LIVE_EVERY = 0.05  # seconds between two writes of one step's text
IDLE_SECONDS = 30.0  # the writing thread ends after this long with nothing to write (a new step starts it again)


def stream_figures(first_token_ms: Any, latency_ms: Any, output_tokens: Any) -> tuple[float | None, float | None]:
    """``(time to first token in ms, output tokens per second after it)`` of a streamed step;
    ``None`` for what cannot be told (no first token yet, no usage, no time after the first token)."""
    ttft = float(first_token_ms) if isinstance(first_token_ms, (int, float)) and not isinstance(first_token_ms, bool) else None
    rate = None
    if ttft is not None and isinstance(latency_ms, (int, float)) and type(output_tokens) is int and output_tokens > 0:
        streaming_ms = float(latency_ms) - ttft
        if streaming_ms > 0:
            rate = output_tokens / (streaming_ms / 1000)
    return ttft, rate


def figures_text(first_token_ms: Any, latency_ms: Any, output_tokens: Any) -> str | None:
    """``"first token 120 ms · 48.2 tok/s"`` (``1.3 s`` from a second on; what is known of it), or
    ``None`` for a step not streamed."""
    ttft, rate = stream_figures(first_token_ms, latency_ms, output_tokens)
    if ttft is None:
        return None
    text = f"first token {ttft:,.0f} ms" if ttft < 1000 else f"first token {ttft / 1000:,.1f} s"
    return text + (f" · {rate:,.1f} tok/s" if rate is not None else "")


def step_stream_text(step: Any) -> str | None:
    """A recorded step's ``first token 120 ms · 48.2 tok/s`` (the provider's output tokens over the
    time after the first token), or ``None`` for a step that was not streamed."""
    stream = step.get("stream") if isinstance(step, dict) else None
    if not isinstance(stream, dict):
        return None
    usage = step.get("usage")
    return figures_text(stream.get("first_token_ms"), step.get("latency_ms"), usage.get("output_tokens") if isinstance(usage, dict) else None)


class LiveRun:
    """One recorded run whose steps may stream: where its live rows go (the recorders the run will
    be written to, chosen when it starts) and what is known of it so far."""

    def __init__(self, run_id: str, summary: dict[str, Any], recorders: list[Any], hooks: list[Any]) -> None:
        self.id = run_id
        self.summary = summary
        self.recorders = recorders
        self.hooks = hooks  # redact hooks in force: the live text goes through them
        self.closed = False
        self.withheld = False  # a hook failed on the live text: nothing more is shown of it
        self.started = time.time()

    def step(self, index: int) -> LiveStep:
        """A live step: its row is written at once (the page shows the step started)."""
        step = LiveStep(self, index)
        _publisher.wake(step)
        return step

    def close(self) -> None:
        """The run is being written: no more live writes for it."""
        self.closed = True

    def row(self, step: LiveStep) -> dict[str, Any] | None:
        """The live row of ``step`` as the stores take it (redacted), or ``None`` to write nothing."""
        text = "".join(step.parts)
        if self.hooks:
            text_or_none = self._redacted(step.index, text)
            if text_or_none is None:
                return None
            text = text_or_none
        now = time.perf_counter()
        first = step.first_token
        return {
            "run_id": self.id, "started": self.started, "summary": self.summary, "index": step.index, "text": text,
            "first_token_ms": round((first - step.started) * 1000, 3) if first is not None else None,
            "elapsed_ms": round((now - step.started) * 1000, 3), "chunks": step.pieces, "pid": os.getpid(),
        }

    def _redacted(self, index: int, text: str) -> str | None:
        if self.withheld:
            return None
        run: dict[str, Any] = {**self.summary, "id": self.id, "status": "running", "text": text, "steps": [{"index": index, "response_text": text}]}
        try:
            for hook in self.hooks:
                run = hook(run)
            steps = run.get("steps") if isinstance(run, dict) else None
            shown = steps[-1].get("response_text") if isinstance(steps, list) and steps and isinstance(steps[-1], dict) else None
        except Exception:  # noqa: BLE001 - a hook that cannot take a partial run: the live text is not shown
            shown = None
        if shown is not None and not isinstance(shown, str):
            shown = None
        if shown is None:
            self.withheld = True
        return shown


class LiveStep:
    """One streaming step: ``add`` takes each piece of text (the hot path: an append and a check)."""

    __slots__ = ("run", "index", "parts", "started", "first_token", "pieces", "dirty", "sent_at", "__weakref__")

    def __init__(self, run: LiveRun, index: int) -> None:
        self.run = run
        self.index = index
        self.parts: list[str] = []
        self.started = time.perf_counter()
        self.first_token: float | None = None
        self.pieces = 0
        self.dirty = True
        self.sent_at = 0.0

    def add(self, text: str) -> None:
        self.parts.append(text)
        self.pieces += 1
        if self.first_token is None:
            self.first_token = time.perf_counter()
        if not self.dirty:
            self.dirty = True
            _publisher.wake(self)

    def first_token_ms(self) -> float | None:
        return round((self.first_token - self.started) * 1000, 3) if self.first_token is not None else None


class _Publisher:
    """The thread that writes live rows: a step's first row and first text at once, then its text
    at most every ``LIVE_EVERY`` seconds."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._waiting: dict[LiveStep, None] = {}
        self._thread: threading.Thread | None = None
        self._pid = os.getpid()

    def wake(self, step: LiveStep) -> None:
        with self._cond:
            if self._pid != os.getpid():  # a forked child: the parent's thread is not here
                self._thread, self._pid = None, os.getpid()
            self._waiting[step] = None
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="crux-devtools-live", daemon=True)
                self._thread.start()
            self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._waiting:
                    if not self._cond.wait(IDLE_SECONDS) and not self._waiting:  # (a step may come as the wait times out)
                        self._thread = None
                        return
                now = time.perf_counter()
                due = [s for s in self._waiting if s.first_token is not None and s.sent_at and s.sent_at + LIVE_EVERY > now and s.pieces > 1]
                ready = [s for s in self._waiting if s not in due]
                if not ready:
                    self._cond.wait(min(s.sent_at + LIVE_EVERY for s in due) - now)
                    continue
                for step in ready:
                    del self._waiting[step]
                    step.dirty = False
            for step in ready:
                self._publish(step)

    @staticmethod
    def _publish(step: LiveStep) -> None:
        run = step.run
        if run.closed:
            return
        step.sent_at = time.perf_counter()
        try:
            row = run.row(step)
        except Exception:  # noqa: BLE001 - never raises: the run itself is recorded as usual
            return
        if row is None:
            return
        for recorder in run.recorders:
            if run.closed:
                return
            recorder.write_live(row)


_publisher = _Publisher()


def _after_fork_in_child() -> None:
    global _publisher
    _publisher = _Publisher()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


__all__ = ["LIVE_EVERY", "LiveRun", "LiveStep", "figures_text", "step_stream_text", "stream_figures"]
