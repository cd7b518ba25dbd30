"""The engine of the pytest plugin: a target planned in the test's own process, as ``check`` plans it.

Runs user code, like the worker (it is imported only when a test asks for ``crux_plan`` or uses
the ``crux_examples`` marker). A request is planned by ``evaluate.evaluate_example``, the worker's
own function, so a test, ``check`` and the inspector read one answer; expectations are judged by the
core's evaluator (``expectations.py``). No model is called and the network guard is on while user
code runs.
"""

from __future__ import annotations

from collections.abc import Mapping
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ...core.plan.agents import Agent
from ...core.compose.prompts import Prompt
from ...core.plan.expectations import Expect, ExpectationResult, Vocabulary, evaluate, result_line
from . import netguard
from ..session.discovery import discover, read_model_config
from ..errors import relative
from .evaluate import evaluate_example, example_inputs
from .expectations import facts_of
from .planning import PlanningDefaults
from ..report_types import ExampleReport
from .imports import LoadedProject, Target, load_project

DOING = "planning a request in crux_plan (no model is called in a test of the plan)"


@dataclass(frozen=True, slots=True)
class CruxExample:
    """One example of a target (the ``crux_example`` fixture): its ``name`` and ``input``."""

    target: str
    name: str
    input: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class PlannedRequest:
    """One request as planned for a target and input, without a model.

    ``sent`` is the ``ModelRequest`` (``to_openai()``/``to_anthropic()``; None when nothing would be
    sent), ``contexts`` the ids in the request in order, ``excluded`` and ``dropped`` ``{id: reason}``,
    ``rungs`` ``{contributor: rung}``, ``tools`` the names offered, ``status`` the example's status
    (``check``'s), ``cache_prefix_tokens`` the tokens before the first part that is not static.
    ``report`` is the whole ``ExampleReport`` the inspector shows for it."""

    target: str
    example: str
    sent: Any
    contexts: tuple[str, ...]
    excluded: Mapping[str, str]
    dropped: Mapping[str, str]
    rungs: Mapping[str, str]
    tools: tuple[str, ...]
    input_tokens: int | None
    status: str
    cache_prefix_tokens: int | None
    report: Mapping[str, Any] = field(repr=False)
    _facts: Any = field(repr=False)
    _vocabulary: Vocabulary = field(repr=False)
    _root: Path | None = field(default=None, repr=False)

    def results(self, expect: Expect) -> tuple[ExpectationResult, ...]:
        """Each expectation of ``expect`` against this plan (the evaluator ``check`` uses)."""
        if not isinstance(expect, Expect):
            raise TypeError(f"check(expect) takes expect()..., got {type(expect).__name__}")
        results = evaluate(expect, self._facts, self._vocabulary)
        if self._root is None:
            return results
        return tuple(dataclasses.replace(r, file=relative(self._root, r.file)) for r in results)

    def check(self, expect: Expect) -> None:
        """Raise ``AssertionError`` naming every expectation that does not hold, where it was written and why."""
        __tracebackhide__ = True  # pytest shows the test line, not this one
        failed = [r for r in self.results(expect) if not r.ok]
        if failed:
            lines = "\n".join("  " + result_line(r.to_dict()) for r in failed)
            raise AssertionError(f"{len(failed)} expectation(s) of {self.target!r} ({self.example}) do not hold:\n{lines}")


class Project:
    """The project at pytest's rootdir, imported once (on first use) under the network guard."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()
        self._loaded: LoadedProject | None = None
        self._defaults: PlanningDefaults | None = None

    def loaded(self) -> LoadedProject:
        if self._loaded is None:
            netguard.install(self.root)
            found = discover(self.root)
            with netguard.holding(DOING):
                self._loaded = load_project(self.root, [m.to_dict() for m in found.modules])
            config, _errors = read_model_config(self.root)
            self._defaults = PlanningDefaults.load(self.root, config)
        return self._loaded

    def defaults(self) -> PlanningDefaults:
        self.loaded()
        assert self._defaults is not None  # noqa: S101 - set by loaded()
        return self._defaults

    def target(self, target: Any) -> Target:
        """A target by id (found in the project) or by object (a prompt or an agent)."""
        if isinstance(target, (Prompt, Agent)):
            for known in self.loaded().targets:
                if known.obj is target:
                    return known
            file, line = (target.prompt if isinstance(target, Agent) else target).defined_at or ("<unknown>", None)
            if isinstance(target, Agent):
                return Target(target.id, "agent", target, module="", file=file, line=line)
            return Target(target.id, "prompt", target, module="", file=file, line=line)
        if not isinstance(target, str):
            raise TypeError(f"crux_plan(target): a prompt, an agent or an id, got {type(target).__name__}")
        loaded = self.loaded()
        for known in loaded.targets:
            if known.id == target:
                return known
        ids = ", ".join(sorted(t.id for t in loaded.targets)) or "none"
        problems = "".join(f"; {e['file']}:{e['line']}: {e['type']}: {e['message'].splitlines()[0] if e['message'] else ''}" for e in loaded.import_errors)
        raise LookupError(f"no prompt or agent with id {target!r} in {self.root}; known ids: {ids}{problems}")

    def examples(self, target: Any) -> list[CruxExample]:
        found = self.target(target)
        return [CruxExample(found.id, name, MappingProxyType(dict(data))) for name, data in example_inputs(found)]

    def plan(self, target: Any, example: str | None = None, input: Mapping[str, Any] | None = None,
             budget: int | None = None, model: Any = None) -> PlannedRequest:
        found = self.target(target)
        if example is not None and input is not None:
            raise TypeError("crux_plan: give example= or input=, not both")
        examples = dict(example_inputs(found))
        if input is not None:
            name, data = "custom", dict(input)
        elif example is not None:
            if example not in examples:
                raise LookupError(f"{found.kind} {found.id!r} has no example {example!r}; known examples: {', '.join(examples) or 'none'}")
            name, data = example, examples[example]
        else:
            name, data = next(iter(examples.items()), ("custom", {}))
        if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int) or budget <= 0):
            raise TypeError(f"crux_plan(budget=...) must be a positive int (the input budget's max), got {budget!r}")
        held: list[Any] = []
        with netguard.holding(DOING):
            report = evaluate_example(self.root, found, name, data, input_budget=budget, defaults=self.defaults(), model=model, keep_preview=held)
        return planned_request(found, report, held[0] if held else None, self.root)


def planned_request(target: Target, report: ExampleReport, preview: Any, root: Path | None = None) -> PlannedRequest:
    facts = facts_of(target.prompt, {"file": target.file, "line": target.line, "contexts": []}, report)
    sent = preview.sent if preview is not None else None
    return PlannedRequest(
        target=target.id,
        example=report["name"],
        sent=sent,
        contexts=facts.contexts,
        excluded=MappingProxyType(dict(facts.excluded)),
        dropped=MappingProxyType(dict(facts.dropped)),
        rungs=MappingProxyType(dict(facts.rungs)),
        tools=facts.tools,
        input_tokens=facts.input_tokens,
        status=facts.status,
        cache_prefix_tokens=facts.cache_prefix_tokens,
        report=MappingProxyType(dict(report)),
        _facts=facts,
        _vocabulary=Vocabulary.of(target.prompt),
        _root=root,
    )
