"""The fake provider's cache behaves as the providers document theirs: it is what the cache
claims of the planner and the benchmark are checked against, so it is tested on its own first."""

from __future__ import annotations

import httpx
import pytest

from cache_provider import CacheProvider

LONG = "The catalogue lists every product with its price and stock. " * 160  # about 1,900 tokens


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def messages(system: list[dict], question: str = "hi") -> dict:
    return {"model": "claude-test", "max_tokens": 10, "system": system, "messages": [{"role": "user", "content": question}]}


def block(text: str, ttl: str | None = None, cached: bool = True) -> dict:
    out: dict = {"type": "text", "text": text}
    if cached:
        out["cache_control"] = {"type": "ephemeral", **({"ttl": ttl} if ttl else {})}
    return out


def post(provider: CacheProvider, path: str, body: dict) -> httpx.Response:
    return httpx.post(provider.root_url + path, json=body, timeout=30)


def test_a_breakpoint_prefix_is_written_once_then_read_and_the_counts_add_up():
    with CacheProvider(min_tokens=1024) as provider:
        first = post(provider, "/v1/messages", messages([block(LONG), block("per user: Ada", cached=False)])).json()["usage"]
        second = post(provider, "/v1/messages", messages([block(LONG), block("per user: Bob", cached=False)], "other")).json()["usage"]
    written = first["cache_creation_input_tokens"]
    assert written > 1024 and first["cache_read_input_tokens"] == 0
    assert second["cache_read_input_tokens"] == written and second["cache_creation_input_tokens"] == 0
    assert provider.calls[1].total == second["input_tokens"] + written
    assert first["cache_creation"] == {"ephemeral_5m_input_tokens": written, "ephemeral_1h_input_tokens": 0}


def test_a_prefix_under_the_minimum_is_never_cached():
    with CacheProvider(min_tokens=1024) as provider:
        for _ in range(2):
            usage = post(provider, "/v1/messages", messages([block("Short rules.")])).json()["usage"]
            assert usage["cache_read_input_tokens"] == usage["cache_creation_input_tokens"] == 0


def test_an_entry_expires_after_its_ttl_and_a_read_renews_it():
    clock = Clock()
    with CacheProvider(min_tokens=1024, clock=clock) as provider:
        post(provider, "/v1/messages", messages([block(LONG)]))
        clock.now += 299
        assert post(provider, "/v1/messages", messages([block(LONG)])).json()["usage"]["cache_read_input_tokens"] > 0
        clock.now += 299  # 598 s after the write, 299 after the read that renewed it
        assert post(provider, "/v1/messages", messages([block(LONG)])).json()["usage"]["cache_read_input_tokens"] > 0
        clock.now += 301
        expired = post(provider, "/v1/messages", messages([block(LONG)])).json()["usage"]
        assert expired["cache_read_input_tokens"] == 0 and expired["cache_creation_input_tokens"] > 0
        one_hour = post(provider, "/v1/messages", messages([block(LONG + "!", ttl="1h")])).json()["usage"]
        assert one_hour["cache_creation"]["ephemeral_1h_input_tokens"] == one_hour["cache_creation_input_tokens"] > 0
        clock.now += 3000
        assert post(provider, "/v1/messages", messages([block(LONG + "!", ttl="1h")])).json()["usage"]["cache_read_input_tokens"] > 0


def test_a_changed_byte_before_the_breakpoint_reads_nothing():
    with CacheProvider(min_tokens=1024) as provider:
        post(provider, "/v1/messages", messages([block("Today is Monday. " + LONG)]))
        usage = post(provider, "/v1/messages", messages([block("Today is Tuesday. " + LONG)])).json()["usage"]
    assert usage["cache_read_input_tokens"] == 0


def test_more_than_four_breakpoints_is_refused_as_the_api_does():
    with CacheProvider() as provider:
        response = post(provider, "/v1/messages", messages([block(f"part {i}") for i in range(5)]))
    assert response.status_code == 400 and "maximum of 4" in response.text


@pytest.mark.parametrize("bills_writes", [False, True])
def test_openai_reads_the_shared_prefix_per_cache_key(bills_writes):
    def chat(user: str, key: str) -> dict:
        body = {"model": "gpt-test", "prompt_cache_key": key, "messages": [{"role": "system", "content": LONG}, {"role": "user", "content": user}]}
        return post(provider, "/v1/chat/completions", body).json()["usage"]

    with CacheProvider(min_tokens=1024, bills_writes=bills_writes) as provider:
        first = chat("hello", "a")
        second = chat("goodbye", "a")
        other_key = chat("goodbye", "b")
    assert first["prompt_tokens_details"]["cached_tokens"] == 0
    cached = second["prompt_tokens_details"]["cached_tokens"]
    assert 1024 <= cached <= second["prompt_tokens"] and (cached - 1024) % 128 == 0
    assert other_key["prompt_tokens_details"]["cached_tokens"] == 0
    assert ("cache_write_tokens" in first["prompt_tokens_details"]) is bills_writes
