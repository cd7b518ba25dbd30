"""Each MCP tool's document, computed by the functions behind the CLI's JSON output.

``ProjectTools`` holds one live ``ProjectSession`` (user code runs in its worker processes, as for
``serve`` and ``tui``), so a warm answer needs no new process. Before answering, it looks at the
project's files and, when one the report depends on changed since the last answer, re-evaluates it
first: an agent that edits a file and asks again sees its edit, whatever the file watcher has seen.

Documents (no SDK here; ``server.py`` registers them):

| tool           | document                                                     |
|----------------|--------------------------------------------------------------|
| ``list_targets`` | ``GET /api/prompts``'s list, with the load errors            |
| ``inspect``    | ``inspect --json`` (``cli.common.select_report``), with ``decisions`` |
| ``check``      | ``check --json`` (``inspector/features/text/check_document.py``)           |
| ``diff``       | ``diff --format json``: against the working tree the page's  |
|                | ``LiveDiff`` (base kept per commit), else ``build_review``   |
| ``cache``      | ``cache --format json`` when the project has that command     |
| ``runs``       | ``runs --json``                                             |
| ``run``        | one recorded run (or one of its steps), as ``runs --json``    |
| ``replay``     | ``replay --json`` (``replay_source.replay_variant``)          |

A fault the caller can fix (an unknown target, example, run or step; a bad override) is a
``ToolFault`` whose message names what is known; a project that fails to load answers its load
errors, never a crash.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from ..inspector.report_types import ExampleReport, PromptReport, Report
    from ..inspector.session.service import ProjectSession

SKIP_DIRS = frozenset({"__pycache__", "node_modules", "venv", "env"})
KNOWN_RUNS_SHOWN = 20  # an unknown run's error names the newest this many


class ToolFault(Exception):
    """A request the caller can fix; ``fields`` are the facts the answer names (known ids ...)."""

    def __init__(self, message: str, **fields: Any) -> None:
        super().__init__(message)
        self.message = message
        self.fields = fields


def where(file: str | None, line: int | None) -> str | None:
    """``FILE:LINE`` (``FILE`` alone when the line is unknown), or None."""
    if not file:
        return None
    return f"{file}:{line}" if line else file


def decisions(prompt: PromptReport, example: ExampleReport) -> dict[str, Any]:
    """What the resolver and the planner decided for one example, each with the ``file:line`` to edit:
    read from the example's inspection and plan (never decided again here)."""
    own = where(prompt["file"], prompt["line"])
    sites = {c["id"]: where(c.get("file"), c.get("line")) or own for c in prompt["contexts"]}
    inspection = example["inspection"]
    preview = example["preview"]
    contexts: list[dict[str, Any]] = []
    if inspection is not None:
        details = {e["id"]: e.get("detail") for e in inspection["excluded_contexts"]}
        for part in inspection["parts"]:
            source = part["source"]
            row: dict[str, Any] = {
                "id": source, "decision": "sent" if part["status"] == "active" else part["status"], "tokens": part["tokens"],
                "priority": part["priority"], "where": own if source.startswith("<") else sites.get(source, own),
            }
            if part["reason"] is not None:
                row["reason"] = part["reason"]
            detail = details.get(source) or part.get("detail")
            if detail:
                row["detail"] = detail
            contexts.append(row)
    rungs = []
    if preview is not None:
        for c in preview["contributions"]:
            if c["representation"] != "full":
                rungs.append({"contributor": c["contributor"], "rung": c["representation"], "tokens": c["tokens"],
                              "where": sites.get(c["contributor"], own)})
    found: dict[str, Any] = {
        "target": prompt["id"], "example": example["name"], "status": example["status"], "where": own,
        "input_tokens": preview["input_tokens"] if preview is not None else None,
        "token_budget": inspection["token_budget"] if inspection is not None else None,
        "contexts": contexts,
    }
    if rungs:
        found["rungs"] = rungs
    if example["error"] is not None:
        found["error"] = {**example["error"], "where": where(example["error"].get("file"), example["error"].get("line"))}
    if example["preview_error"] is not None:
        found["plan_error"] = example["preview_error"]["message"]
    return found


def changed_examples(review: dict[str, Any], report: Report | None) -> list[dict[str, Any]]:
    """Each example the review found changed, with its changes, each naming the ``file:line`` of the
    context it is about (from the working tree's report, when the head is the working tree)."""
    sites: dict[str, dict[str, str | None]] = {}
    for prompt in report["prompts"] if report is not None else []:
        own = where(prompt["file"], prompt["line"])
        sites[prompt["id"]] = {c["id"]: where(c.get("file"), c.get("line")) or own for c in prompt["contexts"]}
    rows = []
    for prompt in review["prompts"]:
        own = where(prompt.get("file"), prompt.get("line"))
        for example in prompt["examples"]:
            if example["status"] == "unchanged":
                continue
            changes = []
            for change in example["changes"]:
                place = where(change.get("file"), change.get("line"))
                named = change.get("context") or change.get("id")
                if place is None and isinstance(named, str):
                    place = sites.get(prompt["id"], {}).get(named)
                changes.append({**change, "where": place or own})
            rows.append({"target": prompt["id"], "example": example["name"], "status": example["status"], "where": own,
                         "base": example.get("base"), "head": example.get("head"), "changes": changes})
    return rows


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every project file outside hidden and tool folders: relative path -> (mtime_ns, size)."""
    found: dict[str, tuple[int, int]] = {}
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith(".") or entry.name in SKIP_DIRS:
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(Path(entry.path))
                elif entry.is_file():
                    st = entry.stat()
                    found[os.path.relpath(entry.path, root)] = (st.st_mtime_ns, st.st_size)
            except OSError:
                continue
    return found


class ProjectTools:
    """The read tools over one project's live session (see the module docstring)."""

    def __init__(self, session: ProjectSession, *, timeout: float = 10.0) -> None:
        self.session = session
        self.root = session.root
        self.timeout = timeout
        self._seen: dict[str, tuple[int, int]] | None = None
        from ..inspector.features.diff.live import LiveDiff

        self._live = LiveDiff(session, timeout=timeout)

    async def start(self) -> None:
        self._seen = snapshot(self.root)
        await self.session.start()

    async def stop(self) -> None:
        await self.session.stop()

    async def fresh(self) -> Report:
        """The session's report, re-evaluated first when a file it depends on changed since last asked."""
        now = snapshot(self.root)
        before = now if self._seen is None else self._seen  # the first look: the session just loaded these
        changed = sorted({f for f in now.keys() | before.keys() if now.get(f) != before.get(f)})
        self._seen = now
        wanted = [f for f in changed if self.session.is_watched(f)]
        if wanted:
            await self.session.reload(wanted)
        report = self.session.report
        if report is None:
            raise ToolFault(f"{self.root}: the project was not loaded")
        return report

    # -- the project ---------------------------------------------------------------------------
    async def list_targets(self) -> dict[str, Any]:
        from ..inspector.api import is_stale
        from ..web.routes.api import summary

        report = await self.fresh()
        return {
            "project": str(self.root),
            "targets": [summary(p, is_stale(report, p), report["verified"]) for p in report["prompts"]],
            "errors": report["errors"],
            "notice": report["notice"],
        }

    async def inspect(
        self, target: str | None = None, example: str | None = None, input: dict[str, Any] | None = None,
        budget: int | None = None, input_budget: int | None = None, model: str | None = None,
    ) -> dict[str, Any]:
        from ..cli.common import select_report

        if example is not None and input is not None:
            raise ToolFault("use either example or input, not both")
        await self.fresh()
        try:
            report = await select_report(self.session, target, example, input, budget, input_budget, model)
        except click.ClickException as exc:
            raise ToolFault(exc.message) from None
        if target is not None and not report["prompts"] and report["errors"]:
            raise ToolFault(f"{target!r} is not in the report: the project has load errors", errors=report["errors"])
        made = [decisions(p, e) for p in report["prompts"] for e in p["examples"]]
        return {"decisions": made, **report}

    async def check(self, strict: bool = False) -> dict[str, Any]:
        from ..inspector.features.text.check_document import check_document

        return check_document(await self.fresh(), strict=strict)

    async def diff(self, base: str = "HEAD", head: str | None = None) -> dict[str, Any]:
        from ..cli.diff import build_review
        from ..inspector.features.diff.redact import RedactError
        from ..review.revisions import RevisionError

        if head is None:  # the working tree is the session's report: as the page's Diff, the base is kept per commit
            report = await self.fresh()
            review = await self._live.document(base)
            if "error" in review:
                raise ToolFault(str(review["error"]))
            return {"changed": changed_examples(review, report), **review}
        try:
            review = await build_review(self.root, base, head, timeout=self.timeout)
        except (RevisionError, RedactError, click.ClickException) as exc:
            raise ToolFault(exc.message if isinstance(exc, click.ClickException) else str(exc)) from None
        return {"changed": changed_examples(review, None), **review}

    async def cache(self, target: str | None = None) -> dict[str, Any]:
        """``cache --format json``: the command's own document function."""
        from ..cli.cache import cache_document

        try:
            return dict(await cache_document(self.root, self.timeout, target, 0, None))
        except click.ClickException as exc:
            raise ToolFault(exc.message) from None

    # -- recorded runs ---------------------------------------------------------------------------
    def _store(self) -> Any:
        from ..core.record.runstore import RunStore

        return RunStore.for_project(self.root, create=False)

    def _read(self, call: Any) -> Any:
        from ..core.record.runstore import RunStoreError

        store = self._store()
        try:
            return call(store)
        except RunStoreError as exc:
            raise ToolFault(str(exc)) from None
        finally:
            store.close()

    def runs(self, target: str | None = None, status: str | None = None, limit: int = 20) -> dict[str, Any]:
        from ..core.record.runstore import RUN_STATUSES

        if status is not None and status not in RUN_STATUSES:
            raise ToolFault(f"status {status!r} is not one of {', '.join(RUN_STATUSES)}", known=list(RUN_STATUSES))
        if limit < 1:
            raise ToolFault(f"limit must be at least 1, got {limit}")

        def whole(store: Any) -> list[dict[str, Any]]:
            return [store.get(r["id"]) or r for r in store.list(target=target, status=status, limit=limit)]

        return {"runs": self._read(whole)}

    def _known_runs(self) -> list[str]:
        return [r["id"] for r in self._read(lambda store: store.list(limit=KNOWN_RUNS_SHOWN))]

    def recorded(self, run_id: str) -> dict[str, Any]:
        found = self._read(lambda store: store.get(run_id))
        if found is None:
            known = self._known_runs()
            raise ToolFault(f"no recorded run {run_id!r}; known runs (newest {KNOWN_RUNS_SHOWN}): {', '.join(known) or 'none'}", known=known)
        return dict(found)

    def run(self, id: str, step: int | None = None) -> dict[str, Any]:
        found = self.recorded(id)
        if step is None:
            return found
        steps = found.get("steps") or []
        for s in steps:
            if s.get("index") == step:
                return {"run": id, "target": found.get("target"), "file": found.get("file"), "line": found.get("line"), "step": s}
        known = [s.get("index") for s in steps]
        raise ToolFault(f"run {id!r} has no step {step}; its steps: {', '.join(map(str, known)) or 'none'}", known=known)

    async def replay(self, run: str, step: int = 0, *, source: str = "recorded", **override_values: Any) -> dict[str, Any]:
        """``override_values``: each replay override under its form name, as the CLI's options take it
        (``max=2000``, ``rung=["catalog=summary"]``; ``cli.replay.build_overrides``)."""
        from ..cli.replay import build_overrides
        from ..inspector.features.replay.source import SOURCES, replay_variant

        if source not in SOURCES:
            raise ToolFault(f"source {source!r} is not one of {', '.join(SOURCES)}", known=list(SOURCES))
        self.run(run, step)  # an unknown run or step: the error names the known ones
        try:
            overrides = build_overrides(self.root, override_values)
        except click.ClickException as exc:
            raise ToolFault(exc.format_message()) from None
        await self.fresh()
        replayed = await replay_variant(self.session, self.recorded(run), step, overrides, source)
        if replayed.document is None:
            raise ToolFault(str(replayed.error), no_plan_inputs=replayed.no_plan_inputs)
        return replayed.document
