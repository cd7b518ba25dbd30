"""The tree's "changed" marks: which prompts' requests differ from git ``HEAD``.

The same review as the web list's marks and the Diff screen (``d``): the session's one ``LiveDiff``
(the base revision evaluated once per commit) compares the report on screen with ``HEAD``, and
``review_view`` lists the prompts with a changed example. It is asked again after each report, in a
worker (the UI never waits for it), and again when the commit ``HEAD`` names moves (a commit, a
checkout: the working tree may not change at all), which the session's ``HeadWatcher`` reports;
answers may come back out of order, and an older report's answer never replaces a newer one's. Outside a git work tree, or when the comparison fails, there are no
marks: the reason is the tree's tooltip, nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import work
from textual.message import Message


BASE = "HEAD"


@dataclass(frozen=True, slots=True)
class ChangeMarks:
    """The prompts whose requests differ from ``base``; ``note`` says why there are none to show."""

    base: str
    changed: frozenset[str]
    note: str | None = None
    sha: str | None = None  # the commit ``base`` named when they were worked out

    def legend(self) -> str:
        """What the header says of them (nothing when no prompt differs)."""
        count = len(self.changed)
        return f"Δ {count} prompt{'s' if count != 1 else ''} differ{'s' if count == 1 else ''} from {self.base}" if count else ""

    def tooltip(self) -> str:
        if self.note is not None:
            return f"No change marks: {self.note}"
        return f"Δ after an id: that prompt's requests differ from {self.base} (d shows what changed)"


async def change_marks(session: Any, base: str = BASE) -> ChangeMarks:
    """The marks of the session's latest report against ``base``."""
    from ..review.view import review_view  # here: the review's modules are not loaded at start
    from .screens.diff import live_diff

    try:
        document = await live_diff(session).document(base)
        view = review_view(document)
    except Exception as exc:  # the comparison failed (e.g. the base revision did not load): no marks
        return ChangeMarks(base, frozenset(), f"{type(exc).__name__}: {exc}")
    sha = (document.get("base") or {}).get("sha")
    if view.error:
        return ChangeMarks(base, frozenset(), view.error, sha)
    return ChangeMarks(base, frozenset(view.changed_ids), None, sha)


@dataclass
class ChangeMarksComputed(Message):
    """A worker's answer: the marks for the ``ticket``-th request."""

    ticket: int
    marks: ChangeMarks


class ChangeMarksApp:
    """The app's side (a mixin of ``CruxTui``): ``request_change_marks`` after each report shown."""

    _marks_asked = 0  # requests made so far
    _marks_shown = 0  # the request whose answer is on screen
    change_marks: ChangeMarks | None = None  # on screen (None: no answer yet)

    def request_change_marks(self: Any) -> None:
        """Ask for the marks of the report just shown, once it is drawn (they are not in its way)."""
        self._marks_asked += 1
        self.call_after_refresh(self.compute_change_marks, self._marks_asked)

    def watch_head_moves(self: Any) -> None:
        """Ask for the marks again whenever the commit HEAD names moves (the session's one
        ``HeadWatcher``, which the web list's marks follow too)."""
        if getattr(self.session, "root", None) is None:
            return
        from ..inspector.session.head_watch import head_watcher  # with git's revisions: not needed before the first frame

        self._stop_head_watch = head_watcher(self.session).subscribe(self.head_moved)

    def stop_watching_head(self: Any) -> None:
        stop = getattr(self, "_stop_head_watch", None)
        if stop is not None:
            self._stop_head_watch = None
            stop()

    def head_moved(self: Any, sha: str) -> None:
        marks = self.change_marks
        if marks is None or marks.sha != sha:
            self.request_change_marks()

    @work(group="change-marks", exit_on_error=False)
    async def compute_change_marks(self: Any, ticket: int) -> None:
        self.post_message(ChangeMarksComputed(ticket, await change_marks(self.session)))

    def on_change_marks_computed(self: Any, message: ChangeMarksComputed) -> None:
        if message.ticket <= self._marks_shown:
            return  # a newer request's answer is on screen already
        self._marks_shown = message.ticket
        self.change_marks = message.marks
        tree = self.browser.prompt_tree
        tree.mark_changed(message.marks.changed)
        tree.tooltip = Text(message.marks.tooltip())  # literal: the reason may quote git's own words
        self.show_sub_title()
