"""What an MCP tool answers, without a server: safe JSON text, compact answers that fit and say what they cut."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from crux_devtools.mcp_server.answers import ANSWER_TOKENS, agent_json, answer_text, count_tokens
from crux_devtools.mcp_server.tools import decisions, where

UNSAFE = "\x1b\x07\x7f\x9b\u200b\u200e\u202e\u2066\ufeff"


@settings(max_examples=200, deadline=None)
@given(st.recursive(st.text() | st.integers() | st.booleans() | st.none(), lambda kids: st.lists(kids) | st.dictionaries(st.text(), kids), max_leaves=20))
def test_any_value_becomes_json_that_parses_back_exactly_with_no_raw_control_character(value: object) -> None:
    text = agent_json({"value": value})
    assert json.loads(text) == {"value": value}
    assert not any(ch in text for ch in UNSAFE)
    assert not any(0xD800 <= ord(ch) <= 0xDFFF for ch in text) and not any(ord(ch) < 0x20 for ch in text)
    text.encode("utf-8")  # a lone surrogate would not encode


def test_a_huge_answer_is_cut_to_the_budget_keeping_its_keys_and_counting_what_went() -> None:
    document = {
        "decisions": [{"id": f"ctx-{i}", "where": f"a.py:{i}", "decision": "dropped"} for i in range(30)],
        "prompts": [{"id": f"p{i}", "system": "word " * 2_000, "examples": [{"name": str(j)} for j in range(50)]} for i in range(20)],
    }
    text = answer_text(document)
    answer = json.loads(text)
    assert count_tokens(text) <= ANSWER_TOKENS and set(answer) == {"decisions", "prompts", "cut"}
    cut = answer["cut"]
    assert cut["answer_tokens"] == count_tokens(text) and cut["full_tokens"] == count_tokens(agent_json(document)) > 10 * ANSWER_TOKENS
    assert cut["texts_cut"] > 0 and cut["list_items_cut"] > 0 and cut["first_paths"] and "detail" in cut["hint"]
    assert len(answer["decisions"]) == 30  # what an agent acts on is cut last
    assert json.loads(answer_text(document, "full")) == document


def test_a_small_answer_is_whole_and_says_nothing_was_cut() -> None:
    document = {"ok": True, "failures": []}
    assert json.loads(answer_text(document)) == document


def test_each_decision_names_the_file_and_line_to_edit() -> None:
    prompt = {
        "id": "reply", "file": "reply.py", "line": 9,
        "contexts": [{"id": "voice", "file": "shared.py", "line": 4}, {"id": "inline", "file": None, "line": None}],
    }
    example = {
        "name": "one", "status": "fits", "error": None, "preview_error": None,
        "inspection": {
            "token_budget": 100,
            "parts": [
                {"source": "<prompt>", "status": "active", "reason": None, "priority": None, "tokens": 5},
                {"source": "voice", "status": "dropped", "reason": "budget", "priority": 30, "tokens": 20},
                {"source": "inline", "status": "excluded", "reason": "when", "priority": 50, "tokens": 0},
            ],
            "excluded_contexts": [{"id": "inline", "reason": "when", "detail": "its when(...) returned False"}],
        },
        "preview": {"input_tokens": 12, "contributions": [{"contributor": "voice", "representation": "summary", "tokens": 7}]},
    }
    made = decisions(prompt, example)  # type: ignore[arg-type]
    assert [(c["id"], c["decision"], c["where"]) for c in made["contexts"]] == [
        ("<prompt>", "sent", "reply.py:9"), ("voice", "dropped", "shared.py:4"), ("inline", "excluded", "reply.py:9")]
    assert made["contexts"][2]["detail"] == "its when(...) returned False"
    assert made["rungs"] == [{"contributor": "voice", "rung": "summary", "tokens": 7, "where": "shared.py:4"}]
    assert where("a.py", None) == "a.py" and where(None, 3) is None


def test_names_and_the_literal_request_outlast_everything_else() -> None:
    document = {"prompts": [{"id": "p" * 300, "file": "deep/" * 60, "sent": {"system": "You are Ari. " * 60}, "noise": ["filler text " * 300] * 30}]}
    answer = json.loads(answer_text(document, budget=1_000))
    [prompt] = answer["prompts"]
    assert prompt["id"] == "p" * 300 and prompt["file"] == "deep/" * 60
    assert prompt["sent"]["system"] == "You are Ari. " * 60  # whole, while the noise was cut
    assert len(prompt["noise"]) < 30 and answer["cut"]["answer_tokens"] <= 1_000
