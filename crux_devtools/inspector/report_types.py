"""The report contract of ``api.py``'s docstring, as types: what the worker produces, the session
holds and both front ends read.

The types themselves live in ``crux_devtools/shapes.py`` (one definition per shape, below every
layer, so the core's ``to_dict()`` returns them too); this module names the ones the report is made
of, for the inspector and the front ends. ``tests/functional/inspector/test_report_contract.py`` validates real reports
against them (extra keys forbidden), so the types cannot drift from what is produced, and
``wire.py`` derives the check of every worker message from them.

Two kinds of error, each in one place:

- ``LoadErrorDict``: a fault in user code or in the worker (an exception, a timeout, a crash, a bad
  config): ``report["errors"]``, ``ExampleReport["error"]``, a failed run's ``error``.
- ``PlanErrorDict``: the planner refused the request (``RequestCompositionError.to_dict()``, a
  ``code`` such as ``REQUEST_TOO_LARGE``): ``ExampleReport["preview_error"]`` only. Any other
  exception raised while planning is a fault of user code, so it is the example's ``error``.
"""

from __future__ import annotations

from ..shapes import (
    ContextEntry,
    ContributionDict,
    DiagnosticDict,
    ExampleReport,
    ExpectationResultDict,
    InspectionDict,
    LoadErrorDict,
    PartDict,
    PlanErrorDict,
    PlanModel,
    PreparedSummary,
    PrepareResult,
    PreviewDict,
    PromptReport,
    Report,
    RunSummary,
    SkippedSummary,
    Status,
    SummaryState,
    SummaryStateName,
)

__all__ = [
    "ContextEntry",
    "ContributionDict",
    "DiagnosticDict",
    "ExampleReport",
    "ExpectationResultDict",
    "InspectionDict",
    "LoadErrorDict",
    "PartDict",
    "PlanErrorDict",
    "PlanModel",
    "PrepareResult",
    "PreviewDict",
    "PromptReport",
    "Report",
    "RunSummary",
    "Status",
    "SkippedSummary",
    "PreparedSummary",
    "SummaryState",
    "SummaryStateName",
]
