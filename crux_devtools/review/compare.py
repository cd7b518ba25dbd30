"""Two project reports in, the review document out: every prompt/agent and example compared.

``review(base, head, ...)`` returns the document ``crux-devtools diff --format json`` prints::

    {"schema": 1, "base": {"rev", "sha"}, "head": {"rev", "sha"},
     "summary": {"prompts": {added, removed, changed, unchanged}, "examples": {...}},
     "prompts": [{"id", "kind", "file", "line", "status", "note", "examples": [
         {"name", "status", "base": {"input_tokens", "status"} | None, "head": ... | None,
          "changes": [...], "cache_prefix": {...} | None (None: the same plan at both), "cost": {"model", "delta_usd_per_1000"},
          "expectations": [...] (only with example(..., expect=...): ``expectations.expectations_at``)}]}],
     "not_compared": [{"id", "file", "reason"}], "failures": [{"revision", "file", "line", "type", "message"}],
     "timing": {...}}

Changes are those of ``changes.compare``; with ``sources`` (``review.sources.Sources``), a ``text``
change also carries ``edit`` (``{"file", "line"}``: the first line of its definition the source diff
changed, or None) and a ``budget`` change the ``file``/``line`` of the setting at head. It is deterministic: the same two reports give the same
document, byte for byte once dumped (temporary export folders never appear in it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .changes import Change, Counter, compare, snapshot_from_example
from .expectations import expectations_at
from .sources import Sources, edited_line, setting_line

SCHEMA = 1
Pricer = Callable[[str | None], Any]  # model name -> a core.record.pricing.Price, or None (unpriced)


def _errors_by_file(report: Mapping[str, Any] | None) -> dict[str | None, list[Mapping[str, Any]]]:
    found: dict[str | None, list[Mapping[str, Any]]] = {}
    for error in (report or {}).get("errors") or ():
        found.setdefault(error.get("file"), []).append(error)
    return found


def _side(example: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if example is None:
        return None
    preview = example.get("preview") or {}
    return {"input_tokens": preview.get("input_tokens"), "status": example.get("status")}


def _model(prompt: Mapping[str, Any], example: Mapping[str, Any]) -> str | None:
    preview = example.get("preview") or {}
    return preview.get("model") or (prompt.get("plan_model") or {}).get("name")


def _cost(model: str | None, delta: int | None, pricer: Pricer | None) -> dict[str, Any]:
    price = pricer(model) if pricer is not None and model else None
    if price is None or delta is None:
        return {"model": model, "delta_usd_per_1000": None}
    return {"model": model, "delta_usd_per_1000": round(delta * 1000 * price.input / 1_000_000, 6)}


def _location(text: Any) -> tuple[str | None, int | None]:
    """``("pyproject.toml", 13)`` from ``"... at pyproject.toml:13"`` or ``"pyproject.toml:13"``."""
    if not isinstance(text, str) or ":" not in text:
        return None, None
    file, _, line = text.rsplit(" at ", 1)[-1].rpartition(":")
    return (file, int(line)) if file and line.isdigit() else (None, None)


def _located(change: Change, prompt: Mapping[str, Any], sources: Sources | None) -> Change:
    """``change`` with where its edit is: a text change's ``edit``, a budget setting's ``file:line``."""
    if change["kind"] == "text":
        file, line = change.get("file"), change.get("line")
        at = None
        if sources is not None and file and isinstance(line, int):
            at = edited_line(sources.text("base", file), sources.text("head", file), line)
        return {**change, "edit": {"file": file, "line": at} if at is not None else None}
    if change["kind"] == "budget":
        file, line = prompt.get("file"), prompt.get("line")
        found = setting_line(sources.text("head", file), line, change["field"]) if sources is not None and file and isinstance(line, int) else None
        if found is not None:
            return {**change, "file": file, "line": found}
        plan_model = prompt.get("plan_model") or {}
        if change["field"] == "max" and plan_model.get("profile"):
            file, line = _location(plan_model["profile"])
        elif change["field"] == "model" and plan_model.get("source") == "project":
            file, line = _location(plan_model.get("label"))
        return {**change, "file": file, "line": line}
    return change


def _compare_example(
    prompt_base: Mapping[str, Any] | None, prompt_head: Mapping[str, Any] | None,
    base: Mapping[str, Any] | None, head: Mapping[str, Any] | None,
    base_errors: list[Mapping[str, Any]], head_errors: list[Mapping[str, Any]],
    counter: Counter | None, pricer: Pricer | None, sources: Sources | None = None,
) -> dict[str, Any]:
    name = (head or base or {}).get("name")
    entry: dict[str, Any] = {"name": name, "status": "unchanged", "base": _side(base), "head": _side(head),
                             "changes": [], "cache_prefix": None}
    expectations = expectations_at(base, head)
    if expectations is not None:  # only examples written with example(..., expect=...)
        entry["expectations"] = expectations
    prompt = prompt_head or prompt_base or {}
    if base is None or head is None or prompt_base is None or prompt_head is None:
        entry["status"] = "added" if base is None else "removed"
        entry["cost"] = _cost(_model(prompt, head or base or {}), None, pricer)
        return entry
    if base == head and base_errors == head_errors:
        # The same plan at both revisions (often the very report, when nothing the prompt reads
        # differs): nothing to compare, and no prefix to measure, since the whole request is shared.
        entry["cost"] = _cost(_model(prompt_head, head), 0 if isinstance(entry["head"]["input_tokens"], int) else None, pricer)
        return entry
    changes, prefix = compare(
        snapshot_from_example(prompt_base, base, base_errors), snapshot_from_example(prompt_head, head, head_errors), counter
    )
    entry["changes"], entry["cache_prefix"] = [_located(c, prompt_head, sources) for c in changes], prefix
    if changes:
        entry["status"] = "changed"
    before, after = entry["base"]["input_tokens"], entry["head"]["input_tokens"]
    delta = after - before if isinstance(before, int) and isinstance(after, int) else None
    entry["cost"] = _cost(_model(prompt_head, head), delta, pricer)
    return entry


def review(
    base: Mapping[str, Any] | None,
    head: Mapping[str, Any] | None,
    *,
    base_info: Mapping[str, Any],
    head_info: Mapping[str, Any],
    counter: Counter | None = None,
    pricer: Pricer | None = None,
    timing: Mapping[str, Any] | None = None,
    sources: Sources | None = None,
) -> dict[str, Any]:
    """The review document of ``base`` -> ``head`` (reports; None: the project did not exist there);
    ``sources`` reads the project's files at both revisions, to say which line an edit is on."""
    base_prompts = {p["id"]: p for p in (base or {}).get("prompts") or ()}
    head_prompts = {p["id"]: p for p in (head or {}).get("prompts") or ()}
    order = list(head_prompts) + [pid for pid in base_prompts if pid not in head_prompts]
    base_errors, head_errors = _errors_by_file(base), _errors_by_file(head)
    prompts: list[dict[str, Any]] = []
    not_compared: list[dict[str, Any]] = []
    for pid in order:
        pb, ph = base_prompts.get(pid), head_prompts.get(pid)
        prompt = ph or pb or {}
        file = prompt.get("file")
        if not (ph or {}).get("examples") and not (pb or {}).get("examples"):
            not_compared.append({"id": pid, "file": file, "reason": "no examples"})
            continue
        examples_b = {e["name"]: e for e in (pb or {}).get("examples") or ()}
        examples_h = {e["name"]: e for e in (ph or {}).get("examples") or ()}
        names = list(examples_h) + [n for n in examples_b if n not in examples_h]
        entries = [
            _compare_example(pb, ph, examples_b.get(n), examples_h.get(n), base_errors.get(file, []),
                             head_errors.get(file, []), counter, pricer, sources)
            for n in names
        ]
        status = "added" if pb is None else "removed" if ph is None else (
            "changed" if any(e["status"] != "unchanged" for e in entries) else "unchanged")
        note = None
        missing_at = "head" if ph is None else "base" if pb is None else None
        if missing_at is not None:
            faults = (head_errors if missing_at == "head" else base_errors).get(file)
            if faults:
                first = faults[0]
                note = f"its module failed to load at {missing_at}: {first.get('file')}:{first.get('line')}: {first.get('type')}"
        prompts.append({"id": pid, "kind": prompt.get("kind"), "file": file, "line": prompt.get("line"), "status": status,
                        "note": note, "examples": entries})
    failures = [
        {"revision": side, "file": e.get("file"), "line": e.get("line"), "type": e.get("type"),
         "message": e.get("message")}
        for side, report in (("base", base), ("head", head))
        for e in (report or {}).get("errors") or ()
    ]
    for side, report in (("base", base), ("head", head)):
        if report is None:
            failures.append({"revision": side, "file": None, "line": None, "type": "ProjectMissing",
                             "message": "the project folder did not exist at this revision"})
    def count(items: list[str]) -> dict[str, int]:
        return {k: items.count(k) for k in ("added", "removed", "changed", "unchanged")}

    return {
        "schema": SCHEMA,
        "base": {"rev": base_info.get("rev"), "sha": base_info.get("sha")},
        "head": {"rev": head_info.get("rev"), "sha": head_info.get("sha")},
        "summary": {"prompts": count([p["status"] for p in prompts]),
                    "examples": count([e["status"] for p in prompts for e in p["examples"]])},
        "prompts": prompts,
        "not_compared": not_compared,
        "failures": failures,
        "timing": dict(timing or {}),
    }


def changed(document: Mapping[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Every (prompt, example) of ``document`` that is not unchanged, in order."""
    return [(p, e) for p in document["prompts"] for e in p["examples"] if e["status"] != "unchanged"]
