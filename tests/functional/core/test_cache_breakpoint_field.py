"""The explicit breakpoint field of a chat-completions body: sent only when the model's profile names
it (``cache_breakpoint_field``), on the text part before each system breakpoint; without it the body
is byte for byte what it was."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from crux_devtools import ModelCapacityProfile, OpenAICompatibleModel, ScriptedModel, context, generate, preview, prompt
from crux_devtools.core.plan.cache_plan import CachePolicy
from crux_devtools.inspector.session.discovery import read_model_config
from crux_devtools.inspector.worker.planning import cache_policy
from cache_provider import CacheProvider

CATALOG = "## Catalog\n" + "\n".join(f"- SKU{i:04d}: plan {i}, {i * 10} GB" for i in range(300))


class Ask(BaseModel):
    user: str
    question: str = "what ships fastest?"


ask = prompt("ask", system="You answer questions about the catalogue.", prompt=lambda i: i.question, input=Ask,
             use=[context("catalog", system=CATALOG), context("user-profile", system=lambda i: f"## User\nThe user is {i.user}.")])


def sent_with(policy: CachePolicy):
    return preview(ask, input={"user": "Ada"}, model=ScriptedModel(["x"], capacity=ModelCapacityProfile(200_000, 1000, "estimated", policy))).sent


def test_a_profile_that_names_the_field_gets_it_on_the_part_before_each_system_breakpoint():
    sent = sent_with(CachePolicy(min_tokens=1024, breakpoint_field="prompt_cache_breakpoint"))
    body = sent.to_openai("gpt-5.6")
    system = body["messages"][0]
    assert system["role"] == "system" and isinstance(system["content"], list)
    assert "".join(part["text"] for part in system["content"]) == sent.system  # the same text, cut in parts
    marked = [part for part in system["content"] if "prompt_cache_breakpoint" in part]
    assert [len("".join(p["text"] for p in system["content"][: system["content"].index(m) + 1])) for m in marked] == [
        b["offset"] for b in sent.cache["breakpoints"] if b["after"] == "system"
    ]
    assert all(m["prompt_cache_breakpoint"] == {"mode": "explicit"} and m["type"] == "text" for m in marked)
    assert body["prompt_cache_key"] == sent.cache["key"]
    assert "cache_control" not in json.dumps(body)


def test_without_the_field_the_body_is_what_it_was():
    plain = sent_with(CachePolicy(min_tokens=1024))
    named = sent_with(CachePolicy(min_tokens=1024, breakpoint_field="prompt_cache_breakpoint"))
    assert "breakpoint_field" not in plain.cache and "breakpoint_field" not in CachePolicy(min_tokens=1024).to_dict()
    body = plain.to_openai("gpt-4o")
    assert body["messages"][0] == {"role": "system", "content": plain.system}
    assert "prompt_cache_breakpoint" not in json.dumps(body)
    # the Anthropic body is the same whichever: the field is OpenAI's
    assert json.dumps(plain.to_anthropic("m")) == json.dumps(named.to_anthropic("m"))


def test_a_model_that_takes_no_breakpoints_gets_no_field_even_when_named():
    sent = sent_with(CachePolicy(min_tokens=1024, breakpoints=False, breakpoint_field="prompt_cache_breakpoint"))
    assert sent.to_openai("m")["messages"][0]["content"] == sent.system


def test_an_unknown_field_is_refused():
    with pytest.raises(ValueError, match="breakpoint_field must be one of prompt_cache_breakpoint"):
        CachePolicy(breakpoint_field="cache_control")


def test_the_profile_key_reaches_the_policy_and_a_bad_one_is_an_error_at_its_line(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.crux-devtools.models.gpt-5-6]\ncontext_window = 400000\ncache = "auto"\ncache_breakpoint_field = "prompt_cache_breakpoint"\n'
        '[tool.crux-devtools.models.typo]\ncontext_window = 8000\ncache = "auto"\ncache_breakpoint_field = "breakpoint"\n',
        encoding="utf-8",
    )
    config, errors = read_model_config(tmp_path)
    assert cache_policy(config["models"]["gpt-5-6"]) == CachePolicy("auto", None, "5m", True, "prompt_cache_breakpoint")
    [error] = errors
    assert error["line"] == 8 and "cache_breakpoint_field must be 'prompt_cache_breakpoint'" in error["message"]


def test_the_adapter_sends_the_marked_parts_to_the_provider():
    policy = CachePolicy(min_tokens=1024, breakpoint_field="prompt_cache_breakpoint")
    with CacheProvider(min_tokens=1024) as provider:
        gpt = OpenAICompatibleModel(provider.base_url, "gpt-5.6", api_key="k", capacity=ModelCapacityProfile(200_000, 1000, "estimated", policy))
        step = generate(ask, input={"user": "Ada"}, model=gpt).steps[0]
    [call] = provider.calls
    assert call.body["messages"][0]["content"] == step.sent.to_openai("gpt-5.6")["messages"][0]["content"]
    assert sum(1 for part in call.body["messages"][0]["content"] if "prompt_cache_breakpoint" in part) == 2
