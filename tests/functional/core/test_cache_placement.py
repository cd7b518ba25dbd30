"""``cache = "auto"``: the planner places prompt-cache breakpoints at the end of the static prefix,
of the per-input prefix and after the tools, only where the prefix reaches the minimum, at most 4,
the same from request to request; the adapters lower them; without it nothing changes."""

from __future__ import annotations

from pydantic import BaseModel

from cache_provider import CacheProvider
from crux_devtools import (
    AnthropicModel, ModelCapacityProfile, OpenAICompatibleModel, ScriptedModel, agent, context, generate, preview, prompt,
    record_runs, tool, when,
)
from crux_devtools.core.plan.cache_plan import Boundary, CachePolicy, choose
from crux_devtools.core.record.replay import replay_step
from crux_devtools.core.record.runstore import RunStore
from crux_devtools.core.tokens import default_counter

CATALOG = "## Catalog\n" + "\n".join(f"- SKU{i:04d}: plan {i}, {i * 10} GB, ships in {i % 7 + 1} days" for i in range(220))


class Ask(BaseModel):
    user: str
    question: str = "what ships fastest?"


class Args(BaseModel):
    sku: str


lookup = tool("lookup", description="Look a SKU up.", parameters=Args, execute=lambda a: {"sku": a.sku, "stock": 3})
catalog = context("catalog", system=CATALOG)
profile_block = context("user-profile", system=lambda i: f"## User\nThe user is {i.user}.")
ask = prompt("ask", system="You answer questions about the catalogue.", prompt=lambda i: i.question, input=Ask,
             use=[catalog, profile_block], tools=[lookup])

AUTO = CachePolicy(min_tokens=1024)


def profile(policy: CachePolicy | None = AUTO) -> ModelCapacityProfile:
    return ModelCapacityProfile(200_000, 1000, "estimated", policy)


def test_without_a_cache_policy_the_request_has_no_cache_and_its_bodies_are_unchanged():
    sent = preview(ask, input={"user": "Ada"}, model=ScriptedModel(["x"], capacity=profile(None))).sent
    assert sent.cache is None and "cache" not in sent.to_dict()
    assert isinstance(sent.to_anthropic("m")["system"], str)
    assert "prompt_cache_key" not in sent.to_openai("m")
    assert "cache_control" not in str(sent.to_anthropic("m"))


def test_breakpoints_go_at_the_end_of_the_static_and_per_input_prefixes_with_their_tokens():
    counter = default_counter()
    sent = preview(ask, input={"user": "Ada"}, model=ScriptedModel(["x"], capacity=profile())).sent
    cache = sent.to_dict()["cache"]
    static_end = sent.system.index("## User")
    tools_tokens = counter.count('{"type":"function"')  # small: the tools alone stay under the minimum
    assert [b["after"] for b in cache["breakpoints"]] == ["system", "system"]
    first, second = cache["breakpoints"]
    assert first["offset"] == static_end and second["offset"] == len(sent.system)
    assert first["tokens"] > 1024 > tools_tokens and second["tokens"] > first["tokens"]
    assert first["ttl"] == "5m" and cache["key"].startswith("crux-")
    body = sent.to_anthropic("claude-test")
    assert "".join(b["text"] for b in body["system"]) == sent.system  # what is sent is the system text exactly
    assert [("cache_control" in b) for b in body["system"]] == [True, True]
    assert sent.to_openai("gpt-test")["prompt_cache_key"] == cache["key"]


def test_the_placement_is_stable_from_request_to_request():
    model = ScriptedModel(["x", "y"], capacity=profile())
    ada = preview(ask, input={"user": "Ada"}, model=model).sent.cache
    bob = preview(ask, input={"user": "Bob", "question": "and the slowest?"}, model=model).sent.cache
    assert ada["key"] == bob["key"]
    assert ada["breakpoints"][0] == bob["breakpoints"][0]


def test_a_static_prefix_under_the_minimum_is_not_cached_and_says_so():
    small = prompt("small", system="Be brief.", prompt=lambda i: i.question, input=Ask, use=[profile_block])
    result = preview(small, input={"user": "Ada"}, model=ScriptedModel(["x"], capacity=profile()))
    assert result.sent.cache["breakpoints"] == []
    static = default_counter().count("Be brief.\n\n")
    assert f"not cached: static prefix {static:,} tokens, under this model's 1,024 minimum" in result.warnings


def test_an_unknown_minimum_places_the_breakpoints_and_says_the_minimum_is_unknown():
    result = preview(ask, input={"user": "Ada"}, model=ScriptedModel(["x"], capacity=profile(CachePolicy())))
    assert len(result.sent.cache["breakpoints"]) == 3  # tools, static, per-input: nothing is checked
    assert any("minimum cacheable prefix is unknown" in w for w in result.warnings)


def test_a_provider_without_breakpoints_gets_only_the_key():
    result = preview(ask, input={"user": "Ada"}, model=ScriptedModel(["x"], capacity=profile(CachePolicy(min_tokens=1024, breakpoints=False))))
    assert result.sent.cache["breakpoints"] == [] and result.sent.cache["key"]
    assert "cache: this model takes no breakpoints; only prompt_cache_key is sent" in result.warnings
    assert "cache_control" not in str(result.sent.to_anthropic("m"))


def test_a_when_decided_context_is_not_static_even_with_literal_text():
    vip = context("vip-note", system="VIP customers get priority shipping.")
    gated = prompt("gated", system="You answer.", prompt=lambda i: i.question, input=Ask,
                   use=[when(lambda i: i.user == "vip", vip), catalog])
    sent = preview(gated, input={"user": "vip"}, model=ScriptedModel(["x"], capacity=profile(CachePolicy()))).sent
    assert sent.cache["breakpoints"][0]["offset"] == sent.system.index("VIP")


def test_more_than_four_places_keep_the_four_longest_and_say_which_left():
    candidates = [Boundary("system", i * 10, 2000 + i, f"block {i}") for i in range(5)]
    kept, warnings = choose(candidates, CachePolicy(min_tokens=1024))
    assert [b.label for b in kept] == ["block 1", "block 2", "block 3", "block 4"]
    assert warnings == ["cache: 5 places for a breakpoint, at most 4 are allowed; left out the shortest: block 0"]


def test_the_receipt_the_scripted_model_and_a_replay_carry_the_same_placement(tmp_path):
    model = ScriptedModel(["done"], name="cached-model", capacity=profile())
    with record_runs(tmp_path):
        result = generate(ask, input={"user": "Ada"}, model=model)
    step = result.steps[0]
    assert step.request.to_dict()["cache"] == step.sent.to_dict()["cache"] == model.requests[0].to_dict()["cache"]
    store = RunStore.for_project(tmp_path)
    run_id = store.list()[0]["id"]
    replayed = replay_step(store, run_id, 0)
    assert replayed.identical and replayed.sent["cache"] == step.sent.to_dict()["cache"]


def test_against_the_fake_provider_the_static_prefix_is_written_once_and_read_after_for_every_user():
    with CacheProvider(min_tokens=1024) as provider:
        claude = AnthropicModel("claude-test", base_url=provider.root_url, api_key="k", capacity=profile())
        planned = [generate(ask, input={"user": user}, model=claude).steps[0] for user in ("Ada", "Bob", "Cy")]
    calls = provider.calls
    static_tokens = planned[0].sent.cache["breakpoints"][0]["tokens"]
    assert calls[0].read == 0 and calls[0].written > 0
    for call in calls[1:]:
        assert abs(call.read - static_tokens) <= static_tokens * 0.01  # the projection is what the provider counted
    assert planned[1].usage["cache_read_tokens"] == calls[1].read


def test_openai_requests_carry_a_stable_prompt_cache_key_and_read_the_prefix():
    with CacheProvider(min_tokens=1024) as provider:
        gpt = OpenAICompatibleModel(provider.base_url, "gpt-test", api_key="k", capacity=profile(CachePolicy(min_tokens=1024, breakpoints=False)))
        for user in ("Ada", "Bob"):
            generate(ask, input={"user": user}, model=gpt)
    keys = {c.body["prompt_cache_key"] for c in provider.calls}
    assert len(keys) == 1 and provider.calls[1].read >= 1024


def test_an_agent_loop_reads_the_static_prefix_on_every_step_after_the_first():
    steps = 6
    with CacheProvider(min_tokens=1024) as provider:
        for _ in range(steps - 1):
            provider.reply_tool_call("lookup", {"sku": "SKU0001"})
        provider.reply_text("SKU0001 ships in 2 days.")
        claude = AnthropicModel("claude-test", base_url=provider.root_url, api_key="k", capacity=profile())
        result = generate(agent("shop", prompt=ask, model=claude, max_steps=steps), input={"user": "Ada"})
    assert len(result.steps) == steps
    assert [c.read > 0 for c in provider.calls] == [False] + [True] * (steps - 1)
