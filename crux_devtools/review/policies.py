"""``--fail-on`` policies: when a review should fail a CI job.

``POLICIES`` is the one table of them: each entry's name, the form it is written in, what it means
and its check. ``parse``, ``met`` and the help of ``crux-devtools diff`` (every policy's form and
description) are read from it, so a new policy is one entry here and its test. The README shows a
few of them and points at that help (``tests/unit/review/test_policies.py`` checks that each policy
it names is spelled as here).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..statuses import fails, word
from .expectations import broken


class PolicyError(ValueError):
    """A policy that cannot be read."""


@dataclass(frozen=True, slots=True)
class Policy:
    """A policy as written on the command line: its entry's ``name`` and its argument, if any."""

    name: str  # an entry of POLICIES
    text: str  # as written
    number: float = 0.0
    id: str = ""


Document = Mapping[str, Any]
Example = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class PolicyKind:
    """One entry of the table. ``pattern`` matches the whole text; a group ``number`` or ``id`` is
    its argument. ``check`` says why the policy fails a review document (one line each), or []."""

    name: str
    form: str  # as the help and the README write it: tokens:+P%
    pattern: re.Pattern[str]
    description: str
    check: Callable[[Policy, Document], list[str]]


def _where(prompt: Mapping[str, Any], example: Mapping[str, Any]) -> str:
    return f"{prompt['id']} / {example['name']}"


def _key(failure: Mapping[str, Any]) -> tuple[Any, ...]:
    return failure.get("file"), failure.get("type"), failure.get("message")


def _errors(document: Mapping[str, Any]) -> list[str]:
    found: list[str] = []
    base_faults = {_key(f) for f in document["failures"] if f["revision"] == "base"}
    for f in document["failures"]:
        if f["revision"] == "head" and _key(f) not in base_faults:
            found.append(f"error at head: {f.get('file')}:{f.get('line')}: {f.get('type')}: {f.get('message')}")
    def bad(side: Mapping[str, Any] | None) -> bool:  # a status check fails on (statuses.py)
        return side is not None and side.get("status") is not None and fails(str(side["status"]))

    for prompt in document["prompts"]:
        for example in prompt["examples"]:
            head, base = example.get("head"), example.get("base")
            if head is not None and bad(head) and not bad(base):
                found.append(f"{_where(prompt, example)}: {word(str(head['status']))} at head")
            for change in example["changes"]:
                if change["kind"] == "error" and change["appeared"]:
                    found.append(f"{_where(prompt, example)}: {change['message']}")
    return list(dict.fromkeys(found))


def each_example(check: Callable[[Policy, str, Example], list[str]]) -> Callable[[Policy, Document], list[str]]:
    """A document's check made of one per example (``where`` is ``prompt / example``), in order."""

    def over(policy: Policy, document: Document) -> list[str]:
        return [line for prompt in document["prompts"] for example in prompt["examples"] for line in check(policy, _where(prompt, example), example)]

    return over


def _changes(example: Example, kind: str) -> list[Mapping[str, Any]]:
    return [change for change in example["changes"] if change["kind"] == kind]


def _any(policy: Policy, where: str, example: Example) -> list[str]:
    return [f"{where}: {example['status']}"] if example["status"] != "unchanged" else []


def _tokens(policy: Policy, where: str, example: Example) -> list[str]:
    return [
        f"{where}: input tokens {c['base']} -> {c['head']} ({c['percent']}%)"
        for c in _changes(example, "tokens")
        if c["delta"] > 0 and (c["percent"] is None or c["percent"] > policy.number)
    ]


def _dropped(policy: Policy, where: str, example: Example) -> list[str]:
    return [f"{where}: {c['id']} dropped for the budget" for c in _changes(example, "context-left") if c["reason"] == "budget"]


def _context_left(policy: Policy, where: str, example: Example) -> list[str]:
    return [f"{where}: {c['id']} left ({c['reason']})" for c in _changes(example, "context-left") if c["id"] == policy.id]


def _tool_removed(policy: Policy, where: str, example: Example) -> list[str]:
    return [f"{where}: tool {c['name']} removed" for c in _changes(example, "tool-removed")]


def _cache_prefix(policy: Policy, where: str, example: Example) -> list[str]:
    prefix = example.get("cache_prefix")
    if prefix and prefix["broken_by"] is not None and prefix["common_tokens"] < policy.number:
        return [f"{where}: cacheable prefix {prefix['common_tokens']} tokens (under {int(policy.number)}), broken by {prefix['broken_by']}"]
    return []


def _expect(policy: Policy, where: str, example: Example) -> list[str]:
    return [
        f"{row['file']}:{row['line']}: {where}: expect().{row['expect']} held at base, {row['head']} at head"
        + (f": {row['held']}" if row["held"] else "") + (f"; {row['reason']}" if row["reason"] else "")
        for row in broken(example.get("expectations"))
    ]


def _exact(name: str) -> re.Pattern[str]:
    return re.compile(re.escape(name))


POLICIES: tuple[PolicyKind, ...] = (
    PolicyKind("error", "error", _exact("error"),
               "a load or plan error, or an over-limit plan, at head that base did not have", lambda policy, document: _errors(document)),
    PolicyKind("any", "any", _exact("any"), "any prompt or example added, removed or changed", each_example(_any)),
    PolicyKind("tokens", "tokens:+P%", re.compile(r"tokens:\+?(?P<number>\d+(?:\.\d+)?)%"),
               "an example's input tokens grew by more than P percent", each_example(_tokens)),
    PolicyKind("dropped", "dropped", _exact("dropped"), "a context left a request for the budget", each_example(_dropped)),
    PolicyKind("context-left", "context-left:ID", re.compile(r"context-left:(?P<id>.+)", re.S),
               "context ID left a request (for any reason)", each_example(_context_left)),
    PolicyKind("tool-removed", "tool-removed", _exact("tool-removed"), "a tool is no longer offered", each_example(_tool_removed)),
    PolicyKind("cache-prefix", "cache-prefix:N", re.compile(r"cache-prefix:(?P<number>\d+)"),
               "a changed request's cacheable prefix is under N tokens", each_example(_cache_prefix)),
    PolicyKind("expect", "expect", _exact("expect"),
               "an expectation (`example(..., expect=...)`) that held at base does not hold at head", each_example(_expect)),
)
BY_NAME = {kind.name: kind for kind in POLICIES}
NAMES = tuple(kind.form for kind in POLICIES)


def help_text() -> str:
    """The help of ``--fail-on``: what it does; the policies are listed under it (``help_rows``)."""
    return "Exit 1 when POLICY is met (repeatable); the policies are listed below."


def help_rows() -> list[tuple[str, str]]:
    """Every policy as ``diff --help`` lists it: the form it is written in, and what it fails on."""
    return [(kind.form, kind.description) for kind in POLICIES]


def parse(text: str) -> Policy:
    """A policy from its ``--fail-on`` text (a ``PolicyError`` naming the legal ones otherwise)."""
    value = text.strip()
    for kind in POLICIES:
        if m := kind.pattern.fullmatch(value):
            found = m.groupdict()
            return Policy(kind.name, value, float(found.get("number") or 0.0), found.get("id") or "")
    raise PolicyError(f"unknown --fail-on policy {text!r}; use one of: {', '.join(NAMES)}")


def met(policy: Policy, document: Document) -> list[str]:
    """Why ``policy`` fails ``document`` (one line each), or [] when it does not."""
    return BY_NAME[policy.name].check(policy, document)
