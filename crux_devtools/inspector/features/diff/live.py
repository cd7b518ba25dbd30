"""The review of a live session's working tree against a git revision, for the web page and the TUI.

``LiveDiff(session)`` compares ``session.report`` (the working tree the session watches, as of its
latest load) with a base revision. The base is exported (with the working tree's ignored files, as
``crux-devtools diff`` does) and evaluated in workers once per commit sha, then the export is
deleted; the newest few base reports are kept (``max_bases``: each can weigh megabytes), so a save
that the session re-evaluates gives a new review at the cost of the comparison alone. The document
is the command's (``diff_evaluate.review_document``), compared the same way (``as_compared``).
"""

from __future__ import annotations

import asyncio
import tempfile
from collections import OrderedDict
from pathlib import Path
from typing import Any

from ....review.revisions import RevisionError, WorkTree, outside_links, resolve, work_tree
from .evaluate import Side, as_compared, evaluate_project, export_side, review_document
from .redact import RedactError

MAX_BASES = 3  # base reports kept: HEAD and the last couple of other revisions asked for


class LiveDiff:
    """``await document(base)``: the review document of ``base`` -> the session's working tree, or
    ``{"error": "one line"}`` when the folder is not in a git work tree or ``base`` is unknown."""

    def __init__(self, session: Any, *, timeout: float = 10.0, max_bases: int = MAX_BASES) -> None:
        self.session = session
        self.timeout = timeout
        self.max_bases = max_bases
        # sha -> (the base's side, its compared report; None: no project there), newest used last
        self._bases: OrderedDict[str, tuple[Side, dict[str, Any] | None]] = OrderedDict()
        self._documents: dict[tuple[str, str, Any], dict[str, Any]] = {}
        self._lock = asyncio.Lock()
        self.base_evaluations = 0  # how many times a base was evaluated (tests: cached per sha)

    def cached_shas(self) -> list[str]:
        """The commits whose base report is kept, oldest used first."""
        return list(self._bases)

    async def evaluated(self, rev: str) -> bool:
        """Whether the base report of the commit ``rev`` names is kept (showing it runs no code)."""
        found = await self.sha(rev)
        return found is not None and found in self._bases

    async def sha(self, rev: str = "HEAD") -> str | None:
        """The commit ``rev`` names now (None outside a git work tree or for an unknown revision)."""
        root = getattr(self.session, "root", None)
        if root is None:
            return None
        try:
            tree = await asyncio.to_thread(work_tree, Path(root))
            return await asyncio.to_thread(resolve, tree, rev)
        except RevisionError:
            return None

    async def _base(self, root: Path, tree: WorkTree, rev: str) -> tuple[str, Side, dict[str, Any] | None]:
        sha = await asyncio.to_thread(resolve, tree, rev)  # git in a thread: the event loop draws a screen or serves pages
        async with self._lock:
            if sha not in self._bases:
                with tempfile.TemporaryDirectory(prefix="crux-diff-") as scratch:
                    side = await asyncio.to_thread(export_side, tree, rev, root, Path(scratch))
                    report = await evaluate_project(side.root, timeout=self.timeout) if side.root is not None else None
                    self._bases[sha] = (side, as_compared(report, side, tree))
                    self.base_evaluations += 1
                while len(self._bases) > self.max_bases:
                    self._bases.popitem(last=False)
            self._bases.move_to_end(sha)
            side, report = self._bases[sha]
        return sha, Side(rev, sha, side.root, side.top, side.findings), report

    async def document(self, base: str = "HEAD") -> dict[str, Any]:
        if getattr(self.session, "root", None) is None:
            return {"error": "the session has no project folder", "base": {"rev": base, "sha": None}}
        root = Path(self.session.root)
        try:
            tree = await asyncio.to_thread(work_tree, root)
            sha, base_side, base_report = await self._base(root, tree, base)
        except RevisionError as exc:
            return {"error": str(exc), "base": {"rev": base, "sha": None}}
        head = self.session.report
        key = (sha, str((head or {}).get("hash")), (head or {}).get("version"))
        if key not in self._documents:
            try:
                document = await asyncio.to_thread(self._review, root, tree, base_side, base_report, head)
            except RedactError as exc:  # fail closed: nothing is shown unmasked
                document = {"error": str(exc), "base": {"rev": base, "sha": sha}}
            self._documents = {key: document}
        return self._documents[key]

    def _review(self, root: Path, tree: WorkTree, base: Side, base_report: dict[str, Any] | None,
                head: dict[str, Any] | None) -> dict[str, Any]:
        head_side = Side(None, None, root, tree.top, outside_links(tree))
        return review_document(root, base, head_side, base_report, as_compared(head, head_side, tree), timeout=self.timeout)
