"""Plain-text rendering of reports for ``crux-devtools inspect`` and ``check``.

Reads report dicts only (never core objects), so it works on anything a worker returned.
"""

from __future__ import annotations

import textwrap
from typing import Any

from ...errors import LoadError, further_fields
from ..shown.expectation_view import expectation_count, expectation_rows
from .sent import body, candidate_tokens, render_sent_example, status_words
from ...report_types import ExampleReport, LoadErrorDict, PromptReport, Report
from ....statuses import fails, term, word

RULE = "-" * 72


def location(error: dict[str, Any], default_file: str = ".") -> str:
    """``FILE:LINE`` of an error (line 0 when unknown), for editors and CI annotations."""
    return f"{error.get('file') or default_file}:{error.get('line') or 0}"


def one_line(text: str) -> str:
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    return " | ".join(lines) if lines else ""


def failure_line(error: dict[str, Any], context: str = "") -> str:
    """``FILE:LINE: ErrorType: message`` on one line."""
    message = one_line(error.get("message", ""))
    if context:
        message = f"{context}: {message}"
    return f"{location(error)}: {error.get('type', 'Error')}: {message}"


def failures(report: Report, *, strict: bool = False) -> list[str]:
    """Every failure of a report, one line each: load errors, then each example whose status fails
    (``statuses.fails``: the status the worker decided, never decided again here), with what failed;
    under ``strict``, each prompt that could not be checked too (``not_checked``)."""
    lines = [failure_line(dict(e)) for e in report["errors"]]
    for prompt in report["prompts"]:
        for example in prompt["examples"]:
            if fails(example["status"]):
                lines.extend(_example_failures(prompt, example))
        if strict and prompt["status"] == "not-checked":
            lines.append(_not_checked_line(prompt, "NotChecked: "))
    return lines


EXPECTATION_TYPES = {"failed": "ExpectationFailed", "invalid": "InvalidExpectation", "unplanned": "ExpectationNotChecked"}


def expectation_results(report: Report) -> list[dict[str, Any]]:
    """Every expectation result of the report, each with its ``prompt`` and ``example`` (``check --json``)."""
    return [
        {"prompt": prompt["id"], "example": example["name"], **result}
        for prompt in report["prompts"]
        for example in prompt["examples"]
        for result in example.get("expectations", [])
    ]


def expectation_failures(report: Report) -> list[str]:
    """One ``FILE:LINE: Type: message`` line per expectation that does not hold, at the line that wrote it."""
    lines = []
    for result in expectation_results(report):
        if result["state"] == "held":
            continue
        message = f"{result['prompt']!r} example {result['example']!r}: expect().{result['expect']}"
        if result["held"]:
            message += f": {result['held']}"
        if result["reason"]:
            message += f"; {result['reason']}"
        lines.append(f"{result['file'] or '?'}:{result['line'] or 0}: {EXPECTATION_TYPES[result['state']]}: {message}")
    return lines


def not_checked(report: Report) -> list[str]:
    """One line per prompt ``check`` could not check (required inputs and no examples)."""
    return [_not_checked_line(p, "not checked: ") for p in report["prompts"] if p["status"] == "not-checked"]


def _not_checked_line(prompt: PromptReport, head: str) -> str:
    why = prompt["note"] or f"{prompt['kind']} {prompt['id']!r}: {term('not-checked').means}"
    return f"{prompt['file']}:{prompt['line'] or 0}: {head}{why}"


def _example_failures(prompt: PromptReport, example: ExampleReport) -> list[str]:
    """What failed in an example whose status fails, one line each (at least one line)."""
    where = f"{prompt['kind']} {prompt['id']!r} example {example['name']!r}"
    lines: list[str] = []
    if example["error"] is not None:
        error = LoadError.from_dict(example["error"]).located(prompt["file"], prompt["line"])
        lines.append(failure_line(dict(error.to_dict()), where))
    failure = example["preview_error"]
    if failure is not None:
        refusal = LoadError.plain(f"RequestCompositionError[{failure['code']}]", failure["message"], file=prompt["file"], line=prompt["line"])
        lines.append(failure_line(dict(refusal.to_dict()), where + " (planning)"))
    lines.extend(failure_line({"file": prompt["file"], "line": prompt["line"], **problem}, where) for problem in _refusals(example))
    if not lines:  # the status says it fails: say so, even when no detail explains it
        status = term(example["status"])
        lines.append(failure_line({"file": prompt["file"], "line": prompt["line"], "type": status.word, "message": status.means}, where))
    return lines


def _refusals(example: ExampleReport) -> list[dict[str, str]]:
    """What ``generate`` would refuse or silently leave out for this example, as error dicts."""
    out: list[dict[str, str]] = []
    preview = example["preview"]
    if preview is not None and preview["status"] == "over-limit":
        reason = (preview["warnings"] or [""])[0]
        out.append({
            "type": f"RequestCompositionError[{preview['error_code'] or 'REQUEST_TOO_LARGE'}]",
            "message": f"plan: over-limit, {preview['input_tokens']} of {preview['max_input_tokens']} input tokens; {reason}",
        })
    inspection = example["inspection"]
    if inspection is not None and not inspection["fits"]:
        out.append({
            "type": "OverTokenBudget",
            "message": (
                f"the system text is {inspection['system_tokens']} tokens, over token_budget={inspection['token_budget']} "
                "even after dropping every context it may drop; shorten the prompt's own text or raise the budget"
            ),
        })
    for sentence in inspection["unmatched"] if inspection is not None else []:
        out.append({"type": "UnmatchedCase", "message": f"{sentence}; add a case for it or make the key one of the cases"})
    return out


def warnings(report: Report) -> list[str]:
    """Planner warnings that do not fail ``check`` (an unprepared summary, say), one line each."""
    lines: list[str] = []
    for prompt in report["prompts"]:
        for example in prompt["examples"]:
            preview, inspection = example["preview"], example["inspection"]
            if preview is None or preview["status"] == "over-limit":
                continue
            where = f"{prompt['file']}:{prompt['line'] or 0}: warning: {prompt['kind']} {prompt['id']!r} example {example['name']!r}"
            over_budget = inspection is not None and not inspection["fits"]  # already a failure
            lines.extend(
                f"{where}: {one_line(w)}" for w in preview["warnings"] if not (over_budget and "over token_budget" in w)
            )
    return lines


def render_error(error: LoadErrorDict, *, traceback: bool = True) -> str:
    lines = [line.strip() for line in error["message"].splitlines() if line.strip()]
    if len(lines) > 1:  # e.g. one line per bad field of an input: kept one per line
        out = [f"  {location(dict(error))}: {error['type']}:", *(f"    {line}" for line in lines)]
    else:
        out = [f"  {failure_line(dict(error))}"]
    out.extend(f"    {label}: {text}" for label, text in further_fields(error))
    if traceback and error["traceback"]:
        out.append(textwrap.indent(error["traceback"].rstrip(), "    "))
    return "\n".join(out)


def render_example(example: ExampleReport, brief: bool = False) -> str:
    """One example as the resolver made it (``inspect --resolved``): every part in full, before planning."""
    out: list[str] = []
    inspection = example["inspection"]
    if example["error"] is not None:
        out.append(f"  example {example['name']!r}: {word(example['status'])}")
        out.append(render_error(example["error"], traceback=False))
        return "\n".join(out)
    if inspection is None:
        return f"  example {example['name']!r}: no inspection"
    budget = inspection["token_budget"]
    out.append(
        f"  example {example['name']!r}: {inspection['total_tokens']} tokens "
        f"(system {inspection['system_tokens']}, prompt {inspection['prompt_tokens']}), "
        f"budget {budget if budget is not None else 'none'}, {status_words(example)}"
    )
    if example["input"]:
        out.append(f"    input: {example['input']}")
    out.append("    system text:")
    for part in inspection["parts"]:
        if part["status"] != "active":
            continue
        header = f"{part['source']} [{part['kind']}"
        if part["priority"] is not None:
            header += f", priority {part['priority']}"
        header += f"] {part['tokens']} tokens"
        out.append(f"    ┌─ {header}")
        if part["detail"]:  # what a memory read, and what its budget left out
            out.append(f"    │ ({part['detail']})")
        out.extend(body(part["text"], brief))
    out.append("    └─")
    if inspection["prompt"]:
        out.append("    user prompt:")
        out.extend(body(inspection["prompt"], brief))
    for exclusion in inspection["excluded_contexts"]:
        out.append(f"    excluded: {exclusion['id']} ({exclusion['reason']}) {exclusion['detail']}")
    for drop in inspection["dropped_contexts"]:
        out.append(f"    dropped: {drop['id']} (priority {drop['priority']}, {drop['tokens']} tokens, {drop['reason']})")
    out.append(f"    tools: {', '.join(inspection['tools']) or 'none'}")
    if example["truncated"]:
        out.append("    note: long texts were truncated in this report; token counts are of the full text")
    preview = example["preview"]
    if preview is not None:
        out.append(f"    plan: {preview['status']}, {preview['input_tokens']} of {preview['max_input_tokens']} input tokens ({preview['measurement']})")
        for adaptation in preview["adaptations"]:
            out.append(
                f"      adapted {adaptation['contributor']} -> {adaptation['representation']}: "
                f"{adaptation['full_tokens']} -> {adaptation['selected_tokens']} tokens"
            )
        for candidate in preview["candidates"]:
            mark = "selected" if candidate["selected"] else (candidate["rejection_reason"] or "-")
            out.append(f"      candidate {candidate['contributor']} @ {candidate['representation']}: {candidate_tokens(candidate)}, {mark}")
    failure = example["preview_error"]
    if failure is not None:
        out.append(f"    plan failed: {failure['code']}: {one_line(failure['message'])}")
    return "\n".join(out)


def render_prompt(prompt: PromptReport, *, resolved: bool = False, brief: bool = False) -> str:
    """One prompt: by default each example as sent; ``resolved``: as the resolver made it."""
    where = f"{prompt['file']}:{prompt['line'] or 0}"
    if resolved:
        out = [RULE, f"{prompt['kind']} {prompt['id']}  ({where})  status: {word(prompt['status'])}, {prompt['total_tokens']} input tokens as planned"]
    else:
        out = [RULE, f"{prompt['kind']} {prompt['id']}  ({where})  status: {word(prompt['status'])}, {len(prompt['examples'])} example(s)"]
    if prompt.get("note"):
        out.append(f"  {prompt['note']}")
    for example in prompt["examples"]:
        sent = None if resolved else render_sent_example(prompt, example, brief)
        out.append(sent if sent is not None else render_example(example, brief))
        out.extend(expectation_lines(example))
    return "\n".join(out)


def expectation_lines(example: ExampleReport) -> list[str]:
    """The example's expectations under it in ``inspect``: the count, then one line per claim (the rows the page and the TUI show)."""
    rows = expectation_rows(example)
    if not rows:
        return []
    out = [f"    expectations: {expectation_count(example)}"]
    for r in rows:
        line = f"      {r.mark} {r.expect} {r.word} ({r.where})"
        why = "; ".join(x for x in (r.held, r.reason) if x)
        out.append(line + (f": {why}" if why else ""))
    return out


def render_report(report: Report, *, resolved: bool = False, brief: bool = False) -> str:
    """The whole report as text: load errors first, then each prompt (as sent, or ``resolved``)."""
    out = [f"project {report['project']}: {len(report['prompts'])} prompt(s)" + (" [STALE: showing the last good report]" if report.get("stale") else "")]
    if report["errors"]:
        out.append("load errors:")
        out.extend(render_error(e) for e in report["errors"])
    if report["notice"]:
        out.append(report["notice"])
    out.extend(render_prompt(p, resolved=resolved, brief=brief) for p in report["prompts"])
    return "\n".join(out)
