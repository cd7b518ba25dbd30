"""Evaluate one revision of a project: every prompt with every example, in isolated workers as ``check`` does.

``export_side`` makes a revision's folder (a temporary export with the working tree's ignored data,
or the work tree itself); ``evaluate_project`` loads it fresh in a ``ProjectSession`` (workers,
timeouts, per-module isolation) and also plans extra inputs (recorded runs) as examples. No model is
called: only planning happens. ``as_compared`` and ``review_document`` turn two reports into the one
review document the command, the web page and the TUI all show.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ....review.revisions import Finding, WorkTree, copy_ignored, export, outside_links, resolve

# Local stores a project keeps beside its source (never committed) that planning reads: prepared
# summaries are keyed by content, so the ones prepared in the work tree serve every revision.
SHARED_STORES = (".crux/summaries.sqlite3",)


@dataclass
class Side:
    """One revision to compare: ``rev`` as named (None: the working tree), its ``sha``, its folder."""

    rev: str | None
    sha: str | None
    root: Path | None  # None: the project did not exist at this revision
    top: Path | None = None  # the folder holding the revision's whole work tree
    findings: list[Finding] = field(default_factory=list)

    def label(self) -> str:
        return self.rev if self.rev is not None else "working tree"


def export_side(tree: WorkTree, rev: str | None, project: Path, scratch: Path) -> Side:
    """The working tree (``rev`` None) or revision ``rev`` exported under ``scratch``, with the
    working tree's copies of the files git ignores (``revisions.copy_ignored``)."""
    if rev is None:
        return Side(None, None, project, tree.top, outside_links(tree))
    sha = resolve(tree, rev)
    findings: list[Finding] = []
    root = export(tree, sha, scratch, findings)
    if root is not None:
        copy_ignored(tree, project, root)
        for name in SHARED_STORES:
            source = project / name
            if source.is_file():
                (root / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, root / name)
    return Side(rev, sha, root, scratch, findings)


def _replacements(side: Side, tree: WorkTree) -> list[tuple[str, str]]:
    """(absolute path, what it reads as) for the side's folders: messages say project-relative paths."""
    pairs: list[tuple[str, str]] = []
    up = "../" * len(Path(tree.subdir).parts) if tree.subdir else ""
    for folder, relative in ((side.root, ""), (side.top, up)):
        if folder is None:
            continue
        for spelled in {str(folder), str(folder.resolve())}:
            pairs += [(spelled + "/", relative), (spelled, relative.rstrip("/") or ".")]
    return sorted(set(pairs), key=lambda pair: -len(pair[0]))


def _relative(text: Any, pairs: list[tuple[str, str]]) -> Any:
    if not isinstance(text, str):
        return text
    for absolute, relative in pairs:
        text = text.replace(absolute, relative)
    return text


def as_compared(report: Mapping[str, Any] | None, side: Side, tree: WorkTree) -> dict[str, Any] | None:
    """``report`` as the review compares it: paths in its error messages project-relative (an
    export's temporary folder and the working tree then read the same), the side's findings
    added to its errors, and prompts shown stale (their module failed to load: the session keeps
    the last version) left out, as a fresh load leaves them out."""
    if report is None:
        return None
    pairs = _replacements(side, tree)

    def fixed(error: Any) -> Any:
        return {**error, "message": _relative(error.get("message"), pairs)} if isinstance(error, Mapping) else error

    prompts = []
    for prompt in report.get("prompts") or ():
        if prompt.get("stale"):
            continue
        examples = prompt.get("examples") or ()
        if any(e.get("error") or e.get("preview_error") for e in examples):
            examples = [{**e, **{k: fixed(e[k]) for k in ("error", "preview_error") if e.get(k)}} for e in examples]
            prompt = {**prompt, "examples": examples}
        prompts.append(prompt)
    errors = [fixed(e) for e in report.get("errors") or ()] + [f.to_error() for f in side.findings]
    return {**report, "prompts": prompts, "errors": errors}


def valid_text(value: Any) -> Any:
    """``value`` (a document) with each string that is no valid UTF-8 (lone surrogates, as Python
    decodes undecodable bytes) repaired: each bad character becomes U+FFFD. JSON of it is UTF-8."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in value)
        return value
    if isinstance(value, dict):
        return {valid_text(k): valid_text(v) for k, v in value.items()}
    if isinstance(value, list):
        return [valid_text(v) for v in value]
    return value


def review_document(
    root: Path, base: Side, head: Side, base_report: dict[str, Any] | None, head_report: dict[str, Any] | None,
    *, timeout: float, timing: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The one review document of two compared reports (``as_compared``), for the command and the
    inspector alike: priced from the head's model profiles, its text valid UTF-8, then through the
    project's ``redact`` hook when it names one (``RedactError`` when that fails)."""
    from ....core.record.pricing import price_for
    from ....review.compare import review
    from ....review.revisions import work_tree
    from ....review.sources import Sources
    from .redact import redact_document, redact_setting
    from ...session.discovery import read_model_config

    profiles = read_model_config(head.root or root)[0]["models"]
    tree = work_tree(root)
    document = review(
        base_report, head_report,
        base_info={"rev": base.rev, "sha": base.sha}, head_info={"rev": head.rev, "sha": head.sha},
        pricer=lambda model: price_for(model, profiles), timing=timing,
        sources=Sources(tree.top, tree.subdir, base.sha, head.sha, root),
    )
    document = valid_text(document)
    redact = redact_setting(root)
    if redact is None:
        return document
    kept = document.pop("timing")
    return {**redact_document(root, redact, document, timeout), "timing": kept}


async def _planned(session: Any, inputs: Mapping[str, Sequence[tuple[str, dict[str, Any]]]] | None) -> dict[str, Any]:
    """The session's report, each prompt's ``inputs`` planned too and appended to its examples."""
    loaded = session.report
    report: dict[str, Any] = dict(loaded) if loaded is not None else {"prompts": [], "errors": []}
    report["prompts"] = list(report.get("prompts") or ())
    report["errors"] = list(report.get("errors") or ())
    if inputs:
        prompts = []
        for prompt in report["prompts"]:
            extra = []
            for name, data in inputs.get(prompt["id"], ()):
                example = await session.evaluate(prompt["id"], input=data)
                extra.append({**example, "name": name})
            prompts.append({**prompt, "examples": list(prompt["examples"]) + extra} if extra else prompt)
        report["prompts"] = prompts
    return report


def _session(root: Path, timeout: float) -> Any:
    from ...session.service import ProjectSession

    return ProjectSession(root, timeout=timeout, watch=False, history=False, prewarm=False, fork=False)


async def evaluate_project(
    root: Path,
    *,
    timeout: float = 10.0,
    inputs: Mapping[str, Sequence[tuple[str, dict[str, Any]]]] | None = None,
) -> dict[str, Any]:
    """The project's report (``inspector.report_types.Report``) from a fresh load, each prompt's
    ``inputs`` (name, input) planned too and appended to its examples under that name."""
    session = _session(root, timeout)
    try:
        await session.start()
        return await _planned(session, inputs)
    finally:
        await session.stop()
