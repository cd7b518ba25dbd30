"""The held report: the report a session shows, and the rules that merge a load into it.

One frozen value (``HeldReport``) and pure methods: no processes, no files, no clock (the caller
hands in the time). The session keeps one ``HeldReport``, and after each load replaces it with
``held.merge(outcome, modules)`` made into ``Merged.shown(...)`` (a new report) or
``Merged.confirmed(...)`` (a verification that agrees). The rules, in the order a load meets them:

1. A healthy module's prompts are this load's, each a copy marked ``"stale": false``; a broken
   module shows its last good prompts marked ``"stale": true`` (``reload_rules.last_good`` picks
   them), until a load imports it again and it loads: its fresh prompts then replace them.
2. The prompts are shown in the order of the discovered modules, then by line.
3. A prompt report an incremental load hands on unchanged (the same object) keeps its copy, so it
   is hashed once (``prompt_hashes``' cache) and the history reuses its digest.
4. Every shown load is a new version; a verification that agrees keeps the version and the hash,
   and only says the report is verified.
5. ``hash`` hashes what the report says (its prompts and errors, not when or how fast): equal
   content, equal hash; ``changed_prompts`` names the prompts whose content changed.

Which worker answers a stale prompt is the session's (``workers.py``): ``Merged.stale`` names them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..errors import distinct
from ..report_types import LoadErrorDict, PromptReport, Report
from .load import LoadOutcome
from .reload_rules import last_good

EMPTY_NOTICE = (
    "No prompts found in {root}. Add a .py file that imports crux_devtools and defines a prompt at module "
    "level, e.g. `from crux_devtools import prompt` then `greeter = prompt(\"greeter\", system=\"You are kind.\")`, "
    "or list your modules in pyproject.toml under [tool.crux-devtools] modules = [\"my_prompts\"]."
)


def prompt_hashes(prompts: list[PromptReport], cache: dict[int, tuple[PromptReport, str]] | None = None) -> dict[str, str]:
    """A content hash per prompt report: what changed between two reports.

    ``cache`` (``id(report) -> (report, hash)``) skips the reports hashed before: an incremental
    load hands the unchanged prompts' reports on as the same objects (reports are never changed).
    """
    hashes: dict[str, str] = {}
    for p in prompts:
        known = cache.get(id(p)) if cache is not None else None
        if known is not None and known[0] is p:
            hashes[p["id"]] = known[1]
            continue
        digest = hashlib.sha256(json.dumps(p, sort_keys=True, default=repr).encode()).hexdigest()
        if cache is not None:
            cache[id(p)] = (p, digest)
        hashes[p["id"]] = digest
    return hashes


def content_hash(hashes: Mapping[str, str], errors: list[LoadErrorDict]) -> str:
    """Hash of what a report says (not when or how fast): the history key."""
    blob = json.dumps({"prompts": list(hashes.items()), "errors": errors}, sort_keys=True, default=repr)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:32]


def changed_prompts(before: Mapping[str, str], after: Mapping[str, str]) -> list[str]:
    """The ids of the prompts whose hash differs between two reports (added and removed ones too), sorted."""
    return sorted(k for k in after.keys() | before.keys() if before.get(k) != after.get(k))


def report_texts(report: Report | None, limit: int = 2_000) -> list[str]:
    """The distinct full texts of a report (parts, user prompts), to prime the next worker's token cache."""
    if report is None:
        return []
    texts: dict[str, None] = {}
    for prompt in report["prompts"]:
        for example in prompt["examples"]:
            inspection = example.get("inspection")
            if not inspection or example.get("truncated"):
                continue
            for part in inspection["parts"]:
                if part["text"]:
                    texts[part["text"]] = None
            for text in (inspection["system"], inspection["prompt"]):
                if text:
                    texts[text] = None
    return list(texts)[:limit]


@dataclass(frozen=True, slots=True)
class Merged:
    """A load merged into the held report, not yet shown: the prompts in order and their hashes,
    the ids of those shown stale, and the held value to build the next report from."""

    prompts: list[PromptReport]
    hashes: dict[str, str]
    stale: tuple[str, ...]  # ids of the prompts shown as their broken module last loaded well
    held: HeldReport  # ``known``, ``copies`` and the hash cache as of this load; report and version as before
    errors: list[LoadErrorDict] = field(default_factory=list)  # every error of the load (discovery's, then the load's)

    @property
    def changed(self) -> list[str]:
        """The prompts this load shows differently from the report held before it."""
        return changed_prompts(self.held.hashes, self.hashes)

    def shown(
        self, outcome: LoadOutcome, *, project: str, generated_at: str, found_modules: bool, verified: bool, disagreements: int,
        imported_note: str | None,
    ) -> HeldReport:
        """This load shown as the next version of the report."""
        version = self.held.version + 1
        prompts, errors = self.prompts, self.errors
        report: Report = {
            "version": version,
            "project": project,
            "generated_at": generated_at,
            "duration_ms": outcome.duration_ms,
            "stale": any(p["stale"] for p in prompts),
            "errors": errors,
            "prompts": prompts,
            "hash": content_hash(self.hashes, errors),
            "notice": None if prompts or errors else EMPTY_NOTICE.format(root=project),
            "modules_found": found_modules,
            "load": outcome.kind,
            "reevaluated": list(outcome.reevaluated),
            "verified": verified,
            "disagreements": disagreements,
            "imported_note": imported_note,
        }
        return dataclasses.replace(self.held, report=report, version=version, hashes=self.hashes)

    def confirmed(self, outcome: LoadOutcome, *, verified: bool, imported_note: str | None) -> HeldReport:
        """A verification that agrees with the report shown: the same version, hash and errors, its
        prompts the fresh load's (equal: the next update hands those on, and the history reuses their
        digests), and whether it is now verified."""
        shown = self.held.report
        if shown is None:
            raise ValueError("only a report already shown can be confirmed")
        report: Report = {
            **shown, "prompts": self.prompts, "verified": verified, "disagreements": 0, "load": "full", "imported_note": imported_note,
            "reevaluated": list(outcome.reevaluated), "duration_ms": outcome.duration_ms,
        }
        return dataclasses.replace(self.held, report=report, hashes=self.hashes)


@dataclass(frozen=True, slots=True)
class HeldReport:
    """The report shown (``None`` before the first load) and what the next merge needs.

    ``known``: module name -> its last good prompts (a healthy module's current ones, a broken
    module's as it last loaded well); ``hashes``: prompt id -> content hash of the report shown;
    ``copies`` and ``hash_cache`` (keyed by ``id()`` of a load's prompt report, holding it so the id
    stays its own): the copy shown for each prompt report and its hash, reused while a load hands
    the same report on. The mappings are never changed: each method returns a new value.
    """

    report: Report | None = None
    version: int = 0
    hashes: Mapping[str, str] = field(default_factory=dict)
    known: Mapping[str, Sequence[PromptReport]] = field(default_factory=dict)
    copies: Mapping[int, tuple[PromptReport, PromptReport]] = field(default_factory=dict)
    hash_cache: Mapping[int, tuple[PromptReport, str]] = field(default_factory=dict)

    def merge(self, outcome: LoadOutcome, modules: Sequence[str], errors: Sequence[LoadErrorDict] = ()) -> Merged:
        """This load's prompts, plus the last good prompts of its broken modules (marked stale), in
        module order; ``modules``: the discovered module names in order; ``errors``: the errors found
        before the load (discovery, configuration), shown before the load's own."""
        kept = last_good(modules, outcome.broken, self.known, outcome.prompts, outcome.owners)
        module_of = dict(outcome.owners)
        stale: list[PromptReport] = []
        for name, prompt in kept.stale:
            stale.append({**prompt, "stale": True})
            module_of[prompt["id"]] = name
        rank = {name: i for i, name in enumerate(modules)}
        copies: dict[int, tuple[PromptReport, PromptReport]] = {}
        fresh: list[PromptReport] = []
        for p in outcome.prompts:
            known_copy = self.copies.get(id(p))
            copy = known_copy[1] if known_copy is not None and known_copy[0] is p else {**p, "stale": False}
            copies[id(p)] = (p, copy)
            fresh.append(copy)
        prompts = sorted([*fresh, *stale], key=lambda p: (rank.get(module_of.get(p["id"], ""), len(rank)), p["line"] or 0))
        cache = dict(self.hash_cache)
        hashes = prompt_hashes(prompts, cache)
        held = HeldReport(
            self.report, self.version, self.hashes, kept.known, copies, {id(p): cache[id(p)] for p in prompts if id(p) in cache}
        )
        errors = distinct([*errors, *outcome.errors])  # a shared module's error once, not once per importer
        return Merged(prompts, hashes, tuple(p["id"] for p in stale), held, errors)

