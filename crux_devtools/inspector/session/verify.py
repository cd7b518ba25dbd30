"""Verification at rest: when a fresh load checks the report shown, and what it compares.

An update's report is fast but not verified: the import graph cannot see everything user code does
at import. The ``Verifier`` of a session keeps what is left to verify and runs the timer:

- ``needed``: the report shown is not one a fresh load of every module gave with no change since
  (an update's, or one a change skipped); ``unseen``: changed files no module imported or read;
  ``since``: every change since the last verified report (said in the log); ``echoes``: files the
  held worker's own code wrote (their change is no change);
- ``arm()`` (re)starts the timer after every change that counts and after each load while something
  is left: ``after`` seconds with no change, it asks the session's runner for a verification
  (``request``), which runs once no evaluation is running;
- ``take(files, full)``: whether the runner's job is the verification (a change that came with it
  is loaded first, and verified later);
- a verification is a fresh full load; ``disagreement`` compares it with the report shown (prompt
  hashes, and the load errors without their tracebacks, whose frames differ), ``compare`` counts and
  logs it, and the fresh load replaces the report where they differ (``held_report.Merged.shown``)
  or only marks it verified where they agree (``Merged.confirmed``);
- ``is_verified``: a report is verified when it comes from a full load with nothing left to verify
  and no change pending.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..report_types import LoadErrorDict
from .held_report import changed_prompts

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Disagreement:
    """Where a fresh load differs from the report shown."""

    changed: tuple[str, ...] = ()  # prompt ids whose content differs (or that one of them lacks)
    errors_differ: bool = False  # the load errors differ (file, line, type, message)

    @property
    def count(self) -> int:
        """Prompts, and the error list as one, that the fresh load corrects."""
        return len(self.changed) + int(self.errors_differ)


def disagreement(
    shown: Mapping[str, str], fresh: Mapping[str, str], shown_errors: Sequence[LoadErrorDict] | None, fresh_errors: Sequence[LoadErrorDict]
) -> Disagreement:
    """Compare a fresh load's prompt hashes and errors with the report shown (``shown_errors`` is
    ``None`` when no report is shown yet: its errors cannot differ)."""
    where = lambda errs: [(e["file"], e["line"], e["type"], e["message"]) for e in errs]  # noqa: E731 - not the traceback: its frames differ
    errors_differ = shown_errors is not None and where(shown_errors) != where(fresh_errors)
    return Disagreement(tuple(changed_prompts(shown, fresh)), errors_differ)


class Verifier:
    """What one session has left to verify, and the timer that asks for the verification."""

    def __init__(self, root: Path, after: float, request: Callable[[], object]) -> None:
        self.root = root
        self.after = after  # seconds with no change before a verification
        self._request = request  # asks the session's runner for a verification load
        self.needed = False
        self.unseen: set[str] = set()
        self.since: set[str] = set()
        self.echoes: set[str] = set()
        self.asked = False  # the runner's next job is a verification
        self.timer: asyncio.Task[None] | None = None
        self.verifications = 0  # verification loads run (tests, benchmarks)
        self.disagreements = 0  # prompts (and error lists) a verification corrected, in total

    @property
    def pending(self) -> bool:
        """Something is left to verify."""
        return self.needed or bool(self.unseen)

    def saw(self, unseen: Iterable[str]) -> None:
        """Changed files no module imported or read: user code may look at them in ways the import
        graph does not see (a new module behind ``try: import``, ``Path(...).exists()``, a symlink)."""
        files = set(unseen)
        self.since |= files
        self.unseen |= files

    def arm(self) -> None:
        """(Re)start the wait for the saves to settle; the verification runs ``after`` seconds
        after the last change, once no evaluation is running."""
        if self.timer is not None:
            self.timer.cancel()
        self.timer = asyncio.ensure_future(self._later())

    async def _later(self) -> None:
        await asyncio.sleep(self.after)
        if self.pending:
            self._request()

    def take(self, files: Sequence[str], full: bool) -> bool:
        """Whether the runner's job (``files`` changed, ``full`` load asked for) is the verification
        asked for: a change that came with it is loaded first, and verified later."""
        verify, self.asked = self.asked, False
        verifying = verify and not files and not full
        if verify and not verifying:
            self.needed = True
        return verifying

    def explained(self, written: Iterable[str]) -> bool:
        """The held worker's code wrote ``written``: those are echoes. Whether a changed file that no
        module read is left unexplained (so worth a verification)."""
        self.echoes |= set(written)
        self.unseen -= self.echoes
        return bool(self.unseen)

    def fresh_load(self) -> None:
        """A full load starts: every change before it is in it (a change from here on is verified by another load)."""
        self.needed = False
        self.unseen.clear()

    def is_verified(self, kind: str, dirty: bool) -> bool:
        """Shown as the truth at rest: a fresh load of every module, with no change since it started."""
        return kind == "full" and not self.needed and not self.unseen and not dirty

    def compare(
        self, shown: Mapping[str, str], fresh: Mapping[str, str], shown_errors: Sequence[LoadErrorDict] | None, fresh_errors: Sequence[LoadErrorDict]
    ) -> int:
        """How many prompts (and the error list, as one) a fresh load shows differently from the report
        shown, logged: each is a change the incremental evaluation did not see."""
        found = disagreement(shown, fresh, shown_errors, fresh_errors)
        count = found.count
        changed = list(found.changed)
        self.verifications += 1
        self.disagreements += count
        files = ", ".join(sorted(self.since)[:10]) or "none"
        if count:
            what = ", ".join(changed[:10]) + ("…" if len(changed) > 10 else "")
            log.warning(
                "verifying %s: a fresh load disagreed with the report shown on %d prompt(s)%s: %s (changes since the last "
                "verified report: %s); the fresh load is shown",
                self.root, len(changed), " and the load errors" if found.errors_differ else "", what or "none", files,
            )
        else:
            log.info("verifying %s: a fresh load agrees with the report shown (changes since the last verified report: %s)", self.root, files)
        self.since = set()
        return count

    def cancel(self) -> None:
        if self.timer is not None:
            self.timer.cancel()

    @property
    def waiting(self) -> bool:
        """The timer runs (a verification may be asked for)."""
        return self.timer is not None and not self.timer.done()
