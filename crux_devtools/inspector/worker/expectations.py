"""*Worker* (and the pytest plugin): an example's expectations evaluated against its report.

The evaluator is the core's (``core/plan/expectations.py``); this module gives it the facts of an
``ExampleReport`` (the one the worker built, so ``check``, the inspector, ``diff`` and the plugin
read one answer) and the request's cacheable prefix (``review/prefix.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...core.compose.contexts import Context
from ...core.plan.expectations import PlanFacts, Vocabulary, evaluate
from ...review.changes import PROMPT, TOOLS, snapshot_from_example
from ...review.prefix import cacheable_prefix_tokens
from ..errors import relative
from ..report_types import ExampleReport, ExpectationResultDict, PromptReport


def static_parts(prompt: Any) -> frozenset[str]:
    """The request's owners whose text cannot change with the input: the tools, the prompt's own
    text when it is a string, and each plain context whose ``system`` is a string (not a callback,
    not a memory or skill). A structural reading: a callback that returns a constant counts as changing."""
    static = {TOOLS}
    if isinstance(prompt.system, str) or prompt.system is None:
        static.add(PROMPT)
    for reach in prompt.contexts():
        ctx = reach.context
        if type(ctx) is Context and (ctx.system is None or isinstance(ctx.system, str)):
            static.add(ctx.id)
    return frozenset(static)


def cache_prefix_of(prompt: Any, prompt_report: PromptReport | dict[str, Any], example: ExampleReport) -> int | None:
    """The example's cacheable prefix in tokens (None when it sent nothing)."""
    return cacheable_prefix_tokens(snapshot_from_example(prompt_report, example), static_parts(prompt))


def facts_of(prompt: Any, prompt_report: PromptReport | dict[str, Any], example: ExampleReport) -> PlanFacts:
    return PlanFacts.from_report(example, cache_prefix_of(prompt, prompt_report, example))


def expectation_results(root: Path | None, prompt: Any, expect: Any, prompt_report: PromptReport | dict[str, Any], example: ExampleReport) -> list[ExpectationResultDict]:
    """Each expectation of ``expect`` against ``example``, as report dicts (``file`` relative to ``root``)."""
    results = evaluate(expect, facts_of(prompt, prompt_report, example), Vocabulary.of(prompt))
    out: list[ExpectationResultDict] = []
    for result in results:
        data = result.to_dict()
        if root is not None and data["file"]:
            data["file"] = relative(root, data["file"])
        out.append(data)
    return out
