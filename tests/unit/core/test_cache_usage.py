"""Cache reads and writes as each provider reports them, kept apart from plain input and priced at
their own rates (a rate the profile lacks makes the call unpriced)."""

from __future__ import annotations

import pytest

from crux_devtools.core.record.pricing import Price, cost_usd
from crux_devtools.core.run.models.anthropic import parse_anthropic_usage
from crux_devtools.core.run.models.openai import parse_usage


@pytest.mark.parametrize("spelling", ["prompt_tokens_details", "input_tokens_details"])
def test_openai_cache_reads_and_writes_are_read_in_both_api_spellings(spelling):
    raw = {"prompt_tokens": 3_000, "completion_tokens": 20, spelling: {"cached_tokens": 2_000, "cache_write_tokens": 400}}
    assert parse_usage(raw) == {"input_tokens": 3_000, "output_tokens": 20, "cache_read_tokens": 2_000, "cache_write_tokens": 400}


def test_openai_usage_without_cache_details_has_no_cache_keys():
    assert parse_usage({"prompt_tokens": 12, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": 0}}) == {"input_tokens": 12, "output_tokens": 3}


def test_anthropic_writes_keep_their_one_hour_part_apart():
    raw = {
        "input_tokens": 50, "output_tokens": 7, "cache_read_input_tokens": 1_000, "cache_creation_input_tokens": 300,
        "cache_creation": {"ephemeral_5m_input_tokens": 100, "ephemeral_1h_input_tokens": 200},
    }
    usage = parse_anthropic_usage(raw)
    assert usage == {"input_tokens": 1_350, "output_tokens": 7, "cache_read_tokens": 1_000, "cache_write_tokens": 300, "cache_write_1h_tokens": 200}
    price = Price(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75, cache_write_1h=6.0)
    assert cost_usd(usage, price) == pytest.approx((50 * 3 + 1_000 * 0.3 + 100 * 3.75 + 200 * 6 + 7 * 15) / 1e6)
    # The same usage with no one-hour rate is unpriced, not priced at the 5-minute or input rate.
    assert cost_usd(usage, Price(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75)) is None


def test_anthropic_split_alone_still_counts_the_writes():
    raw = {"input_tokens": 10, "output_tokens": 1, "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 90}}
    assert parse_anthropic_usage(raw) == {"input_tokens": 100, "output_tokens": 1, "cache_read_tokens": 0, "cache_write_tokens": 90, "cache_write_1h_tokens": 90}
