"""``crux-devtools check --json``: what ``check`` decides, as one JSON document.

The same lines the text output prints (``cli_text.failures``, ``expectation_failures``, ``warnings``,
``not_checked``), each ``FILE:LINE: ...`` so an editor or an agent knows where to look, every
expectation's result, and the verdict with its counts.
"""

from __future__ import annotations

from typing import Any

from .report import expectation_failures, expectation_results, failures, not_checked, warnings
from ...report_types import Report


def check_document(report: Report, *, strict: bool = False) -> dict[str, Any]:
    """``ok`` is false exactly when ``check`` exits 1 (a failure line: a load error, a failing
    example, an expectation that does not hold, or with ``strict`` a prompt it could not check);
    ``expectations`` holds every expectation's result, ``held`` how many held."""
    failed = failures(report, strict=strict) + expectation_failures(report)
    results = expectation_results(report)
    return {
        "ok": not failed,
        "strict": strict,
        "failures": failed,
        "expectations": results,
        "held": sum(r["state"] == "held" for r in results),
        "warnings": warnings(report),
        "not_checked": not_checked(report),
        "prompts": len(report["prompts"]),
        "examples": sum(len(p["examples"]) for p in report["prompts"]),
        "load_errors": len(report["errors"]),
        "notice": report["notice"],
    }
