"""The change engine: two snapshots of one request in, the changes and the cache prefix out (real tiktoken)."""

from __future__ import annotations

from typing import Any

from crux_devtools import ScriptedModel, context, generate, prompt
from crux_devtools.review.changes import (
    Problem,
    compare,
    default_counter,
    snapshot_from_example,
    snapshot_from_request,
    snapshot_from_step,
)

RULES = "## House rules\n- Be kind."
TOOL = {"name": "lookup_order", "description": "Look up an order.", "parameters": {"type": "object", "properties": {}}}


def request(parts: list[tuple[str, str, str]], *, messages: list[dict[str, Any]] | None = None, tools: list[dict[str, Any]] | None = None,
            dropped: list[dict[str, Any]] | None = None, out: dict[str, str] | None = None, status: str = "fits") -> Any:
    """A snapshot whose system text is ``parts`` (id, kind, text) joined by blank lines, with real spans."""
    system, contributions = "", []
    for pid, kind, text in parts:
        if system:
            system += "\n\n"
        contributions.append({"contributor": pid, "kind": kind, "representation": "full", "tokens": default_counter().count(text),
                              "span": [len(system), len(system) + len(text)]})
        system += text
    sent = {"system": system, "messages": messages or [{"role": "user", "content": "Hi"}], "tools": tools or []}
    total = default_counter().count(system) + 10
    return snapshot_from_request(sent, contributions, input_tokens=total, status=status, out=out, dropped=dropped or (),
                                 where={"house-rules": ("shared.py", 35), "prompt": ("app.py", 3), "messages": ("app.py", 3)})


BASE = [("<prompt>", "prompt-system", "You are Ari."), ("house-rules", "context", RULES), ("billing", "context", "## Billing\nQuote EUR.")]


def test_identical_requests_have_no_changes_and_the_whole_request_is_the_cached_prefix() -> None:
    changes, prefix = compare(request(BASE), request(BASE))
    assert changes == []
    assert prefix is not None and prefix["broken_by"] is None
    assert prefix["common_tokens"] == prefix["head_tokens"] == prefix["base_tokens"] > 20


def test_a_changed_context_is_named_with_its_file_and_line_and_breaks_the_cache_there() -> None:
    edited = [BASE[0], ("house-rules", "context", RULES + "\n- Never guess."), BASE[2]]
    changes, prefix = compare(request(BASE), request(edited))
    kinds = [c["kind"] for c in changes]
    assert kinds == ["tokens", "text"]
    [text] = [c for c in changes if c["kind"] == "text"]
    assert (text["context"], text["file"], text["line"]) == ("house-rules", "shared.py", 35)
    assert text["head_tokens"] > text["base_tokens"]
    tokens = changes[0]
    assert tokens["delta"] == tokens["head"] - tokens["base"] > 0 and tokens["percent"] > 0
    assert prefix is not None and prefix["broken_by"] == "house-rules"
    # the common prefix is the prompt's text and the rules up to the edit, not the whole request
    assert default_counter().count("You are Ari.") < prefix["common_tokens"] < prefix["head_tokens"]


def test_a_context_that_left_for_the_budget_and_one_that_joined_say_why() -> None:
    base = request(BASE, out={"brand-voice": "when"})
    head = request([BASE[0], BASE[1], ("brand-voice", "context", "Warm.")], dropped=[{"id": "billing", "reason": "budget"}])
    changes, prefix = compare(base, head)
    assert {"kind": "context-left", "id": "billing", "reason": "budget"} in changes
    assert {"kind": "context-joined", "id": "brand-voice", "reason": "when"} in changes
    assert prefix is not None and prefix["broken_by"] == "brand-voice"


def test_tools_rungs_messages_status_and_errors() -> None:
    other = {**TOOL, "description": "Find an order."}
    base = request(BASE, tools=[TOOL, {**TOOL, "name": "refund"}])
    head = request(BASE, tools=[other, {**TOOL, "name": "escalate"}], messages=[{"role": "user", "content": "Hello"}], status="over")
    head = type(head)(**{**head.__dict__, "rungs": {**head.rungs, "billing": "summary"}, "errors": (Problem("boom", "app.py", 9),)})
    changes, prefix = compare(base, head)
    assert [c for c in changes if c["kind"].startswith("tool")] == [
        {"kind": "tool-removed", "name": "refund"}, {"kind": "tool-added", "name": "escalate"},
        {"kind": "tool-changed", "name": "lookup_order", "what": "description"},
    ]
    assert {"kind": "rung", "contributor": "billing", "base": "full", "head": "summary", "cause": "pressure"} in changes
    assert {"kind": "status", "base": "fits", "head": "over"} == changes[0]
    assert {"kind": "error", "message": "boom", "file": "app.py", "line": 9, "appeared": True} in changes
    assert any(c["kind"] == "text" and c["context"] == "messages" for c in changes)
    assert prefix is not None and prefix["broken_by"] == "tools" and prefix["common_tokens"] < 20 < prefix["head_tokens"]


def test_an_example_report_becomes_a_snapshot_with_attribution() -> None:
    prompt = {"id": "p", "file": "app.py", "line": 3, "contexts": [{"id": "house-rules", "file": "shared.py", "line": 35}]}
    system = "You are Ari.\n\n" + RULES
    example = {
        "name": "e", "status": "fits", "error": None, "preview_error": None,
        "inspection": {"parts": [{"source": "house-rules", "kind": "context", "status": "active"}],
                       "excluded_contexts": [{"id": "account", "reason": "when-wrapper"}], "dropped_contexts": []},
        "preview": {"input_tokens": 40, "sent": {"system": system, "messages": [], "tools": []}, "dropped": [],
                    "contributions": [{"contributor": "<prompt>", "kind": "prompt-system", "representation": "full", "tokens": 4, "span": [0, 12]},
                                      {"contributor": "house-rules", "kind": "context", "representation": "full", "tokens": 9, "span": [14, len(system)]}]},
    }
    snap = snapshot_from_example(prompt, example, [{"type": "SyntaxError", "message": "bad", "file": "app.py", "line": 7}])
    assert snap.contexts_in == ("house-rules",) and snap.out == {"account": "when"}
    assert snap.text_of("house-rules") == RULES and snap.text_of("prompt") == "You are Ari."
    assert snap.where["house-rules"] == ("shared.py", 35) and snap.errors == (Problem("SyntaxError: bad", "app.py", 7),)


def test_a_side_that_sends_nothing_has_no_cache_prefix() -> None:
    empty = snapshot_from_request(None, input_tokens=None, status="error", errors=[Problem("ValueError: x", "app.py", 2)])
    changes, prefix = compare(request(BASE), empty)
    assert prefix is None
    # the status and the error say it all: no "context left the request" or "tool no longer offered" per part
    assert [c["kind"] for c in changes] == ["status", "error"]
    back, _ = compare(empty, request(BASE, tools=[TOOL]))
    assert [c["kind"] for c in back] == ["status", "error"]


def test_a_recorded_step_compared_with_a_replanned_one() -> None:

    def step_of(rules_text: str) -> dict[str, Any]:
        rules = context("rules", system=rules_text)
        result = generate(prompt("p", system="You are Ari.", use=[rules]), input={}, model=ScriptedModel(["hi"]))
        return result.steps[0].to_dict()

    recorded = snapshot_from_step(step_of("Be kind."))
    assert recorded.contexts_in == ("rules",) and recorded.text_of("rules") == "Be kind."
    same, prefix = compare(recorded, snapshot_from_step(step_of("Be kind.")))
    assert same == [] and prefix is not None and prefix["broken_by"] is None
    changes, prefix = compare(recorded, snapshot_from_step(step_of("Be kind and brief.")))
    assert [c["kind"] for c in changes] == ["tokens", "text"] and changes[1]["context"] == "rules"
    assert prefix is not None and prefix["broken_by"] == "rules"


def test_a_prompt_planned_the_same_at_both_revisions_is_not_compared_again() -> None:
    from crux_devtools.review.compare import review

    class Counting:
        calls = 0

        def count(self, text: str) -> int:
            self.calls += 1
            return default_counter().count(text)

    sent = {"system": "You are Ari.\n\n" + RULES, "messages": [{"role": "user", "content": "Hi"}], "tools": []}
    example = {"name": "a", "status": "fits", "preview": {"sent": sent, "input_tokens": 20}}
    report = {"prompts": [{"id": "p", "kind": "prompt", "file": "app.py", "line": 3, "examples": [example]}], "errors": []}
    changed_sent = {**sent, "system": sent["system"] + "\n- Be brief."}
    other = {"prompts": [{**report["prompts"][0], "examples": [{**example, "preview": {"sent": changed_sent, "input_tokens": 24}}]}], "errors": []}
    counter = Counting()
    same = review(report, report, base_info={}, head_info={}, counter=counter)
    [entry] = same["prompts"][0]["examples"]
    assert entry["status"] == "unchanged" and entry["changes"] == [] and entry["cache_prefix"] is None
    assert entry["base"] == entry["head"] == {"input_tokens": 20, "status": "fits"}
    assert counter.calls == 0  # no token of it was counted again
    moved = review(report, other, base_info={}, head_info={}, counter=counter)
    [entry] = moved["prompts"][0]["examples"]
    assert entry["status"] == "changed" and entry["cache_prefix"]["broken_by"] is not None and counter.calls > 0


def test_a_trailing_context_that_left_the_system_text_is_named_as_what_broke_the_cache() -> None:
    changes, prefix = compare(request(BASE), request(BASE[:2]))
    assert {"kind": "context-left", "id": "billing", "reason": "removed"} in changes
    assert prefix is not None and prefix["broken_by"] == "billing"  # not the messages that follow it
    _, joined = compare(request(BASE[:2]), request(BASE))
    assert joined is not None and joined["broken_by"] == "billing"


def test_the_same_literal_request_is_no_change_whatever_else_differs() -> None:
    base = request(BASE)
    # another token count, other reasons for what is out, other rungs: the request sent is the same
    head = type(base)(**{**base.__dict__, "input_tokens": (base.input_tokens or 0) + 7, "out": {"tone": "when"},
                         "settings": {"optimize_at": 100}, "rungs": {**base.rungs, "billing": "summary"}})
    assert compare(base, head)[0] == []


def test_a_difference_no_kind_explains_is_a_request_change_naming_the_part() -> None:
    base = request(BASE, tools=[TOOL, {**TOOL, "name": "refund"}])
    # the same blocks with the same texts, joined by other separators; the same tools in another order
    system = base.system.replace("\n\n", "\n\n\n")
    parts = []
    for p in base.parts:
        shift = base.system[: p.start].count("\n\n")
        parts.append(type(p)(p.id, p.start + shift, p.end + shift, p.tokens, p.rung))
    head = type(base)(**{**base.__dict__, "system": system, "parts": tuple(parts), "tools": tuple(reversed(base.tools)), "max_tokens": 500})
    assert [head.text_of(p.id) for p in head.parts] == [base.text_of(p.id) for p in base.parts]
    changes, _ = compare(base, head)
    assert [c for c in changes if c["kind"] == "request"] == [
        {"kind": "request", "part": "system"}, {"kind": "request", "part": "tools"}, {"kind": "request", "part": "max_tokens"},
    ]


def test_moved_blocks_are_an_order_change_and_no_request_change() -> None:
    moved = [BASE[0], BASE[2], BASE[1]]
    changes, prefix = compare(request(BASE), request(moved))
    assert changes[-1] == {"kind": "order", "base": ["prompt", "house-rules", "billing"], "head": ["prompt", "billing", "house-rules"]}
    assert [c["kind"] for c in changes] == ["order"] and prefix is not None and prefix["broken_by"] == "billing"


def test_a_text_change_carries_the_unified_diff_of_its_text() -> None:
    edited = [BASE[0], ("house-rules", "context", RULES + "\n- Never guess."), BASE[2]]
    [text] = [c for c in compare(request(BASE), request(edited))[0] if c["kind"] == "text"]
    assert text["diff"] == "--- base\n+++ head\n@@ -1,2 +1,3 @@\n ## House rules\n - Be kind.\n+- Never guess."
