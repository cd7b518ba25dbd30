"""``ReportHistory``: the reports a session has shown, for ``previous_system`` (the prompt page's diff).

With a history file (``history.py``, ``.crux/devtools.sqlite3``) every report is written to it in a
thread after it is shown, and only the few reports whose write may still be running stay in memory;
without one (``history=False``, or a damaged or read-only ``.crux``: one warning) the newest 20
distinct reports stay in memory.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from .history import History, open_history, system_of
from ..report_types import Report

log = logging.getLogger(__name__)


class ReportHistory:
    """The shown reports, newest last (``recent``), and the history file they are written to (``file``)."""

    def __init__(self, root: Path, enabled: bool = True) -> None:
        self.file: History | None
        self.warning: str | None  # why there is no history file although one was asked for
        self.file, self.warning = open_history(root) if enabled else (None, None)
        self.recent: list[Report] = []  # distinct reports, newest last
        self.released: list[Report] = []  # reports no longer kept, freed at the next verification (see ``remember``)
        self.writes: set[asyncio.Future[None]] = set()  # history writes under way, finished before closing

    def record(self, report: Report, files: list[str]) -> None:
        """Write the report to the history file, off the event loop: the report is shown first."""
        if self.file is not None:
            errors = report["errors"]
            write = asyncio.ensure_future(asyncio.to_thread(self.file.record, report, ok=not errors, errors=errors, changed_files=files))
            self.writes.add(write)
            write.add_done_callback(self._written)

    def _written(self, write: asyncio.Future[None]) -> None:
        self.writes.discard(write)
        if not write.cancelled() and write.exception() is not None:
            log.error("writing the history file failed: %r", write.exception())

    def remember(self, report: Report) -> None:
        """Keep the newest distinct reports: 20 without a history file; with one, only the few whose
        history write may still be running (the file answers the rest)."""
        if self.recent and self.recent[-1]["hash"] == report["hash"]:
            return
        keep = 19 if self.file is None else 3
        before = self.recent
        self.recent = [r for r in before if r["hash"] != report["hash"]][-keep:] + [report]
        # Freeing a report whose prompts a verification replaced costs tens of milliseconds (hundreds
        # of prompts): not on a save's way to its report, but at the next verification.
        kept = {id(r) for r in self.recent}
        self.released.extend(r for r in before if id(r) not in kept)

    def replace(self, shown: Report, report: Report) -> None:
        """``report`` says what ``shown`` said (a verification that agrees): it takes its place."""
        self.recent = [report if r is shown else r for r in self.recent]
        self.released.append(shown)

    def release(self) -> None:
        """Free the reports no longer kept (in the background, before a verification)."""
        self.released.clear()

    def previous_system(self, shown: Report | None, prompt_id: str, example: str) -> str | None:
        """The system text of this prompt and example in the report before ``shown`` that differs.

        The reports in memory are searched first; the history file covers earlier sessions (one
        indexed read: its newest version whose text differs from the one shown, so a report it may
        still be writing changes nothing).
        """
        if shown is None:
            return None
        now = system_of(shown, prompt_id, example)
        if self.file is not None and not self.writes:  # every report is in the file: one indexed read
            return self.file.previous_system(prompt_id, example, now)
        for report in reversed(self.recent[:-1]):
            text = system_of(report, prompt_id, example)
            if text is not None and text != now:
                return text
        if self.file is not None:
            return self.file.previous_system(prompt_id, example, now)
        return None

    async def settled(self) -> None:
        """Wait for the history writes under way (in threads: they compete with the next load for the CPU)."""
        if self.writes:
            await asyncio.gather(*list(self.writes), return_exceptions=True)

    async def close(self) -> None:
        await self.settled()
        if self.file is not None:
            self.file.close()
            self.file = None
