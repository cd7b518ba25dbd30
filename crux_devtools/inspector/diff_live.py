"""The review of a live session's working tree against a git revision, for the web page and the TUI.

``LiveDiff(session)`` compares ``session.report`` (the working tree the session watches, as of its
latest load) with a base revision. The base is exported and evaluated once per commit sha (in
workers, then the export is deleted) and kept; the head side is the session's report, so a save
that the session re-evaluates gives a new review at the cost of the comparison alone.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

from ..review.compare import review
from .diff_evaluate import evaluate_project, export_side
from .diff_redact import RedactError, redact_document, redact_setting
from ..review.revisions import RevisionError, resolve, work_tree


class LiveDiff:
    """``await document(base)``: the review document of ``base`` -> the session's working tree, or
    ``{"error": "one line"}`` when the folder is not in a git work tree or ``base`` is unknown."""

    def __init__(self, session: Any, *, timeout: float = 10.0) -> None:
        self.session = session
        self.timeout = timeout
        self._bases: dict[str, dict[str, Any] | None] = {}  # sha -> the base report (None: no project there)
        self._documents: dict[tuple[str, str, Any], dict[str, Any]] = {}
        self._lock = asyncio.Lock()
        self.base_evaluations = 0  # how many times a base was evaluated (tests: cached per sha)

    async def _base(self, root: Path, rev: str) -> tuple[str, dict[str, Any] | None]:
        tree = await asyncio.to_thread(work_tree, root)  # git in a thread: the event loop draws a screen or serves pages
        sha = await asyncio.to_thread(resolve, tree, rev)
        async with self._lock:
            if sha not in self._bases:
                with tempfile.TemporaryDirectory(prefix="crux-diff-") as scratch:
                    side = await asyncio.to_thread(export_side, tree, rev, root, Path(scratch))
                    report = await evaluate_project(side.root, timeout=self.timeout) if side.root is not None else None
                    self._bases[sha] = _scrubbed(report, scratch)
                    self.base_evaluations += 1
        return sha, self._bases[sha]

    async def document(self, base: str = "HEAD") -> dict[str, Any]:
        if getattr(self.session, "root", None) is None:
            return {"error": "the session has no project folder", "base": {"rev": base, "sha": None}}
        root = Path(self.session.root)
        try:
            sha, base_report = await self._base(root, base)
        except RevisionError as exc:
            return {"error": str(exc), "base": {"rev": base, "sha": None}}
        head = self.session.report
        key = (sha, str((head or {}).get("hash")), (head or {}).get("version"))
        if key not in self._documents:
            try:
                document = await asyncio.to_thread(_review, root, base, sha, base_report, head, self.timeout)
            except RedactError as exc:  # fail closed: nothing is shown unmasked
                document = {"error": str(exc), "base": {"rev": base, "sha": sha}}
            self._documents = {key: document}
        return self._documents[key]


def _scrubbed(report: dict[str, Any] | None, scratch: str) -> dict[str, Any] | None:
    if report is None:
        return None
    errors = [{**e, "message": str(e.get("message")).replace(scratch + "/", "")} for e in report.get("errors") or ()]
    return {**report, "errors": errors}


def _review(root: Path, rev: str, sha: str, base: dict[str, Any] | None, head: dict[str, Any] | None, timeout: float) -> dict[str, Any]:
    from ..core.record.pricing import price_for
    from ..review.sources import Sources
    from .discovery import read_model_config

    profiles = read_model_config(root)[0]["models"]
    tree = work_tree(root)
    document = review(base, head, base_info={"rev": rev, "sha": sha}, head_info={"rev": None, "sha": None},
                      pricer=lambda model: price_for(model, profiles), sources=Sources(tree.top, tree.subdir, sha, None, root))
    redact = redact_setting(root)
    return redact_document(root, redact, document, timeout) if redact is not None else document
