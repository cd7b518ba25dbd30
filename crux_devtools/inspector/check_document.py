"""``crux-devtools check --json``: what ``check`` decides, as one JSON document.

The same lines the text output prints (``cli_text.failures``, ``warnings``, ``not_checked``), each
``FILE:LINE: ...`` so an editor or an agent knows where to look, with the verdict and its counts.
"""

from __future__ import annotations

from typing import Any

from .cli_text import failures, not_checked, warnings
from .report_types import Report


def check_document(report: Report, *, strict: bool = False) -> dict[str, Any]:
    """``ok`` is false exactly when ``check`` exits 1 (a failure line, or with ``strict`` a prompt it
    could not check)."""
    failed = failures(report, strict=strict)
    unchecked = not_checked(report)
    return {
        "ok": not failed,
        "strict": strict,
        "failures": failed,
        "warnings": warnings(report),
        "not_checked": unchecked,
        "prompts": len(report["prompts"]),
        "examples": sum(len(p["examples"]) for p in report["prompts"]),
        "load_errors": len(report["errors"]),
        "notice": report["notice"],
    }
