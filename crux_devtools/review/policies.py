"""``--fail-on`` policies: when a review should fail a CI job.

    error            a load or plan error, or an over-limit plan, at head that base did not have
    any              any prompt or example added, removed or changed
    tokens:+P%       an example's input tokens grew by more than P percent
    dropped          a context left a request for the budget
    context-left:ID  context ID left a request (for any reason)
    tool-removed     a tool is no longer offered
    cache-prefix:N   a changed request's cacheable prefix is under N tokens
    expect           an expectation (example(..., expect=...)) that held at base does not hold at head
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..statuses import fails, word
from .expectations import broken

NAMES = ("error", "any", "tokens:+P%", "dropped", "context-left:ID", "tool-removed", "cache-prefix:N", "expect")
_TOKENS = re.compile(r"^tokens:\+?(\d+(?:\.\d+)?)%$")
_PREFIX = re.compile(r"^cache-prefix:(\d+)$")


class PolicyError(ValueError):
    """A policy that cannot be read."""


@dataclass(frozen=True, slots=True)
class Policy:
    name: str  # error, any, tokens, dropped, context-left, tool-removed, cache-prefix, expect
    text: str  # as written
    number: float = 0.0
    id: str = ""


def parse(text: str) -> Policy:
    """A policy from its ``--fail-on`` text (a ``PolicyError`` naming the legal ones otherwise)."""
    value = text.strip()
    if value in ("error", "any", "dropped", "tool-removed", "expect"):
        return Policy(value, value)
    if m := _TOKENS.match(value):
        return Policy("tokens", value, float(m.group(1)))
    if m := _PREFIX.match(value):
        return Policy("cache-prefix", value, float(m.group(1)))
    if value.startswith("context-left:") and value[len("context-left:"):]:
        return Policy("context-left", value, id=value[len("context-left:"):])
    raise PolicyError(f"unknown --fail-on policy {text!r}; use one of: {', '.join(NAMES)}")


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


def met(policy: Policy, document: Mapping[str, Any]) -> list[str]:
    """Why ``policy`` fails ``document`` (one line each), or [] when it does not."""
    if policy.name == "error":
        return _errors(document)
    found: list[str] = []
    for prompt in document["prompts"]:
        for example in prompt["examples"]:
            where = _where(prompt, example)
            if policy.name == "expect":
                for row in broken(example.get("expectations")):
                    found.append(
                        f"{row['file']}:{row['line']}: {where}: expect().{row['expect']} held at base, {row['head']} at head"
                        + (f": {row['held']}" if row["held"] else "") + (f"; {row['reason']}" if row["reason"] else "")
                    )
            if policy.name == "any" and example["status"] != "unchanged":
                found.append(f"{where}: {example['status']}")
            prefix = example.get("cache_prefix")
            if policy.name == "cache-prefix" and prefix and prefix["broken_by"] is not None and prefix["common_tokens"] < policy.number:
                found.append(f"{where}: cacheable prefix {prefix['common_tokens']} tokens (under {int(policy.number)}), broken by {prefix['broken_by']}")
            for change in example["changes"]:
                kind = change["kind"]
                if policy.name == "tokens" and kind == "tokens" and change["delta"] > 0 and (
                    change["percent"] is None or change["percent"] > policy.number
                ):
                    found.append(f"{where}: input tokens {change['base']} -> {change['head']} ({change['percent']}%)")
                elif policy.name == "dropped" and kind == "context-left" and change["reason"] == "budget":
                    found.append(f"{where}: {change['id']} dropped for the budget")
                elif policy.name == "context-left" and kind == "context-left" and change["id"] == policy.id:
                    found.append(f"{where}: {change['id']} left ({change['reason']})")
                elif policy.name == "tool-removed" and kind == "tool-removed":
                    found.append(f"{where}: tool {change['name']} removed")
    return found
