"""A run recorded while a test watches it: ``PacedRun`` records one ``generate`` of a
``ScriptedModel`` whose answer streams in pieces, each piece going out only when the test releases
it (``release(i)``), so a test sees the run live, piece by piece, driven by its own events."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from waits import WAIT, until

from crux_devtools import ScriptedModel, generate, prompt, record_runs
from crux_devtools.core.record.runstore import RunStore

TEXT = "INV-1042 was charged once, on 3 March, by card ending 4242; nothing is owed."
CHUNK = 13
PIECES = [TEXT[i : i + CHUNK] for i in range(0, len(TEXT), CHUNK)]


class PacedRun:
    """``generate`` in a thread, recorded into ``root``; piece ``i`` of the answer waits for ``release(i)``."""

    def __init__(self, root: Path, pieces: list[str] = PIECES) -> None:
        self.root = root
        self.pieces = pieces
        self.gates = [threading.Event() for _ in pieces]
        self.result: Any = None
        self.error: BaseException | None = None
        self.chunk = max(len(p) for p in pieces)
        assert all(len(p) == self.chunk for p in pieces[:-1]), "every piece but the last is one chunk long"
        self._text = "".join(pieces)
        self.thread = threading.Thread(target=self._run, name="paced-run", daemon=True)

    def shown(self, upto: int) -> str:
        """The text once pieces ``0..upto`` have arrived."""
        return self._text[: (upto + 1) * self.chunk]

    @property
    def text(self) -> str:
        return self._text

    def _run(self) -> None:
        target = prompt("live-demo", system="You answer billing questions.", prompt=lambda i: "Was INV-1042 charged twice?")
        model = ScriptedModel([self._text], name="scripted-stream", chunk=self.chunk, before_chunk=lambda i: self.gates[i].wait(WAIT))
        try:
            with record_runs(self.root):
                self.result = generate(target, model=model, on_text=lambda piece: None)
        except BaseException as exc:  # noqa: BLE001 - the test reads it
            self.error = exc

    def start(self) -> str:
        """Start the run; returns its id once its live row is in the store."""
        self.thread.start()
        with RunStore.for_project(self.root, create=False) as store:
            until(lambda: bool(store.live_runs()), "the run's live row is in the store")
            return str(store.live_runs()[0]["id"])

    def release(self, i: int) -> None:
        self.gates[i].set()

    def finish(self) -> Any:
        for gate in self.gates:
            gate.set()
        self.thread.join(WAIT)
        assert not self.thread.is_alive(), "the paced run did not end"
        if self.error is not None:
            raise self.error
        return self.result
