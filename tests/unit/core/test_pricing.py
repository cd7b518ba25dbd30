"""Prices of model profiles and the cost of a call's usage; unpriced is None, never a guess."""

from __future__ import annotations

import pytest

from crux_devtools.core.record.pricing import Price, Usage, cost_usd, format_usd, input_cost_usd, price_for, price_from_profile
from crux_devtools.inspector.session.discovery import read_model_config


def test_cost_prices_cache_reads_and_writes_at_their_own_rates():
    price = Price(input=2.0, output=10.0, cache_read=0.5, cache_write=4.0)
    usage = {"input_tokens": 1_000, "output_tokens": 200, "cache_read_tokens": 400, "cache_write_tokens": 100}
    # 500 plain input, 400 read, 100 written, 200 output.
    assert cost_usd(usage, price) == pytest.approx((500 * 2 + 400 * 0.5 + 100 * 4 + 200 * 10) / 1e6)


def test_a_missing_cache_price_makes_cache_tokens_unpriced_never_the_input_price():
    price = Price(input=1.0, output=3.0)
    usage = Usage.of({"prompt_tokens": 10, "completion_tokens": 5, "cache_read_tokens": 4})
    assert usage == Usage(10, 5, 4, 0)
    assert cost_usd(usage, price) is None
    assert cost_usd({"input_tokens": 10, "output_tokens": 5, "cache_write_tokens": 3}, Price(1.0, 3.0, cache_read=0.1)) is None
    # No cache tokens: the cache rates are not needed.
    assert cost_usd({"input_tokens": 10, "output_tokens": 5}, price) == pytest.approx((10 * 1 + 5 * 3) / 1e6)


def test_one_hour_writes_are_priced_at_their_own_rate_and_unpriced_without_it():
    usage = {"input_tokens": 1_000, "output_tokens": 0, "cache_read_tokens": 100, "cache_write_tokens": 500, "cache_write_1h_tokens": 200}
    price = Price(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75, cache_write_1h=6.0)
    # 400 plain, 100 read, 300 written for 5 minutes, 200 for an hour.
    assert cost_usd(usage, price) == pytest.approx((400 * 3 + 100 * 0.3 + 300 * 3.75 + 200 * 6.0) / 1e6)
    assert cost_usd(usage, Price(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75)) is None
    profile = {"input_price": 3, "output_price": 15, "cache_read_price": 0.3, "cache_write_price": 3.75, "cache_write_1h_price": 6}
    assert price_from_profile(profile, "claude").cache_write_1h == 6.0


@pytest.mark.parametrize("usage", [None, "12 tokens", {}, {"input_tokens": "many"}, {"input_tokens": True}])
def test_no_counts_or_no_price_is_unpriced(usage):
    assert cost_usd(usage, Price(1.0, 1.0)) is None
    assert cost_usd({"input_tokens": 5}, None) is None
    assert format_usd(None) == "unpriced"
    assert input_cost_usd(5, None) is None


def test_a_profile_price_wins_and_an_unknown_model_is_unpriced():
    profiles = {"house": {"context_window": 8000, "input_price": 0.5, "output_price": 1.5}}
    assert price_for("house", profiles) == Price(0.5, 1.5, None, None, "profile", "house")
    assert price_for("no-such-model-anywhere", profiles) is None
    assert price_for(None, profiles) is None
    assert price_from_profile({"context_window": 8000}) is None


def test_format_usd():
    assert format_usd(0) == "$0.00"
    assert format_usd(1234.5) == "$1,234.50"
    assert format_usd(-0.0123) == "-$0.0123"
    assert format_usd(0.00001) == "$0.000010"
    assert format_usd(0.0000525) in ("$0.000052", "$0.000053")


def test_pyproject_prices_are_read_and_bad_ones_are_config_errors(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        "[tool.crux-devtools.models.priced]\ncontext_window = 8000\ninput_price = 2.5\noutput_price = 10\n"
        "[tool.crux-devtools.models.negative]\ncontext_window = 8000\ninput_price = -1\noutput_price = 10\n"
        "[tool.crux-devtools.models.half]\ncontext_window = 8000\ninput_price = 1\n",
        encoding="utf-8",
    )
    config, errors = read_model_config(tmp_path)
    assert config["models"]["priced"]["input_price"] == 2.5
    assert config["models"]["priced"]["output_price"] == 10.0
    assert set(config["models"]) == {"priced"}
    assert [(e["line"], e["message"].split("] ", 1)[1][:40]) for e in errors] == [
        (7, "input_price must be a non-negative numbe"),
        (9, "prices a model with both input_price and"),
    ]


def test_format_usd_reads_like_money_at_every_size():
    from crux_devtools.core.record.pricing import format_usd

    for amount, shown in [(0.0000525, "$0.000053"), (0.5, "$0.50"), (0.1, "$0.10"), (0.00031, "$0.00031"), (1e-13, "<$0.000000000001")]:
        assert format_usd(amount) == shown
    for exponent in range(-15, 4):  # never an exponent, whatever the size
        assert "e" not in format_usd(1.2345 * 10.0 ** exponent).lower()


def test_a_column_of_costs_has_one_precision_enough_for_its_smallest_sum():
    from crux_devtools.core.record.pricing import USD_COLUMN_DECIMALS, format_usd_column

    assert format_usd_column([0.0000525, 0.0123, 1.5, None, 0]) == ["$0.000053", "$0.012300", "$1.500000", "unpriced", "$0.000000"]
    assert format_usd_column([0.5, 0.25, 12]) == ["$0.50", "$0.25", "$12.00"]  # cents when cents say it
    assert format_usd_column([-0.0123, 0.00031]) == ["-$0.01230", "$0.00031"]
    assert format_usd_column([None, None]) == ["unpriced", "unpriced"]
    # capped: a sum below a millionth of a dollar does not stretch the column; it says it is smaller
    assert USD_COLUMN_DECIMALS == 6
    assert format_usd_column([1e-9, 0.01]) == ["<$0.000001", "$0.010000"]
