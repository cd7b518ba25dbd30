"""Evaluate one revision of a project: every prompt with every example, in isolated workers as ``check`` does.

``export_side`` makes a revision's folder (a temporary export, or the work tree itself);
``evaluate_project`` loads it in a ``ProjectSession`` (workers, timeouts, per-module isolation) and
also plans extra inputs (recorded runs) as examples. No model is called: only planning happens.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..review.revisions import Finding, WorkTree, copy_ignored, export, outside_links, resolve

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


def _replacements(sides: Sequence[Side], tree: WorkTree) -> list[tuple[str, str]]:
    """(absolute path, what it reads as) for the sides' folders: messages say project-relative paths."""
    pairs: list[tuple[str, str]] = []
    up = "../" * len(Path(tree.subdir).parts) if tree.subdir else ""
    for folder, relative in [pair for side in sides for pair in ((side.root, ""), (side.top, up))]:
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


def as_compared(
    report: Mapping[str, Any] | None, side: Side, tree: WorkTree, also: Sequence[Side] = ()
) -> dict[str, Any] | None:
    """``report`` as the review compares it: paths in its error messages project-relative (an
    export's temporary folder and the working tree then read the same), the side's findings
    added to its errors, and prompts shown stale (their module failed to load: the session keeps
    the last version) left out, as a fresh load leaves them out. ``also``: other sides whose
    folders the report's code ran in."""
    if report is None:
        return None
    pairs = _replacements([side, *also], tree)

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
    from ..core.record.pricing import price_for
    from ..review.compare import review
    from .diff_redact import redact_document, redact_setting
    from .discovery import read_model_config

    profiles = read_model_config(head.root or root)[0]["models"]
    document = review(
        base_report, head_report,
        base_info={"rev": base.rev, "sha": base.sha}, head_info={"rev": head.rev, "sha": head.sha},
        pricer=lambda model: price_for(model, profiles), timing=timing,
    )
    document = valid_text(document)
    redact = redact_setting(root)
    if redact is None:
        return document
    kept = document.pop("timing")
    return {**redact_document(root, redact, document, timeout), "timing": kept}


async def _planned(
    session: Any,
    inputs: Mapping[str, Sequence[tuple[str, dict[str, Any]]]] | None,
    reuse: Mapping[int, tuple[dict[str, Any], dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """The session's report, each prompt's ``inputs`` planned too and appended to its examples.

    ``reuse`` maps ``id(report)`` of a prompt report to (that report, it with its inputs planned):
    a prompt whose report the session kept as it was (nothing it reads changed) is not planned again.
    """
    loaded = session.report
    report: dict[str, Any] = dict(loaded) if loaded is not None else {"prompts": [], "errors": []}
    report["prompts"] = list(report.get("prompts") or ())
    report["errors"] = list(report.get("errors") or ())
    if inputs:
        prompts = []
        for prompt in report["prompts"]:
            kept = (reuse or {}).get(id(prompt))
            if kept is not None and kept[0] is prompt:
                prompts.append(kept[1])
                continue
            extra = []
            for name, data in inputs.get(prompt["id"], ()):
                example = await session.evaluate(prompt["id"], input=data)
                extra.append({**example, "name": name})
            prompts.append({**prompt, "examples": list(prompt["examples"]) + extra} if extra else prompt)
        report["prompts"] = prompts
    return report


def _session(root: Path, timeout: float) -> Any:
    from .session import ProjectSession

    return ProjectSession(root, timeout=timeout, watch=False, history=False, prewarm=False, fork=False)


async def evaluate_project(
    root: Path,
    *,
    timeout: float = 10.0,
    inputs: Mapping[str, Sequence[tuple[str, dict[str, Any]]]] | None = None,
    files: Sequence[str] = (),
    watched: list[str] | None = None,
) -> dict[str, Any]:
    """The project's report (``inspector.report_types.Report``), each prompt's ``inputs`` (name,
    input) planned too and appended to its examples under that name. Those of ``files`` (relative
    paths) that can change the report (a module, ``pyproject.toml``, a file user code read) are
    appended to ``watched``."""
    session = _session(root, timeout)
    try:
        await session.start()
        report = await _planned(session, inputs)
        if watched is not None:
            watched.extend(f for f in files if session.is_watched(f))
        return report
    finally:
        await session.stop()


async def evaluate_in_turn(
    root: Path,
    source: Path,
    files: Sequence[str],
    *,
    timeout: float = 10.0,
    inputs: Mapping[str, Sequence[tuple[str, dict[str, Any]]]] | None = None,
) -> tuple[dict[str, Any], dict[str, Any], str]:
    """Both sides with one session, evaluating only what can differ: the base in ``root`` (an
    export), then ``files`` copied over from ``source`` (or deleted where ``source`` has none) and
    handed to the session as a save, so the incremental evaluator re-imports only the modules that
    import or read them and keeps every other prompt's report. Returns (base, head, how the head
    was loaded: ``"incremental"`` or ``"full"``). A prompt whose module fails at head is left out of
    the head (the session would show its base version, marked stale)."""
    session = _session(root, timeout)
    try:
        await session.start()
        loaded = list((session.report or {}).get("prompts") or ())
        base = await _planned(session, inputs)
        # A prompt report the save leaves as it was is the same object in the head's report: it is
        # neither planned nor compared twice (the session replaces a report, never edits one).
        reuse = {id(p): (p, planned) for p, planned in zip(loaded, base["prompts"])}
        for name in files:
            original, target = source / name, root / name
            if original.is_file():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(original, target)
            elif target.is_file():
                target.unlink()
        await session.reload(list(files))
        head = await _planned(session, inputs, reuse)
        head["prompts"] = [p for p in head["prompts"] if not p.get("stale")]
        return base, head, str((session.report or {}).get("load", "full"))
    finally:
        await session.stop()
