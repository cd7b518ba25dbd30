"""What tokens cost: a model's prices and the cost of a call's usage, or nothing when no price is known.

Prices come from two places, in this order:

1. a model profile in ``pyproject.toml`` (USD per million tokens)::

       [tool.crux-devtools.models.gpt-4o]
       context_window = 128000
       input_price = 2.50          # per million input tokens
       output_price = 10.00        # per million output tokens
       cache_read_price = 1.25     # optional: cached input tokens read
       cache_write_price = 3.125   # optional: input tokens written to the cache (5-minute lifetime)
       cache_write_1h_price = 5.0  # optional: input tokens written with a one-hour lifetime

2. the optional ``genai-prices`` package, for the models it knows (looked up by name; install it
   with ``pip install genai-prices``).

Anything else is *unpriced*: ``price_for`` returns None and every caller says "unpriced" instead of
guessing. A call that read or wrote cached tokens is unpriced too when the price has no rate for
them: a cache token is never priced at the input rate. This module does no I/O of its own and imports nothing heavy; ``genai-prices`` is imported
only when a profile has no price.
"""

from __future__ import annotations

import math

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

PriceSource = Literal["profile", "genai-prices"]

_MILLION = 1_000_000


@dataclass(frozen=True, slots=True)
class Price:
    """A model's prices in USD per million tokens. A cache rate that is None is unknown: usage
    with such tokens is unpriced (``cost_usd`` returns None), never priced at the input rate."""

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None
    source: PriceSource = "profile"
    model: str | None = None
    cache_write_1h: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "input": self.input, "output": self.output, "cache_read": self.cache_read,
            "cache_write": self.cache_write, "cache_write_1h": self.cache_write_1h,
            "source": self.source, "model": self.model,
        }


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts of one call. ``input_tokens`` is the whole input, cached parts included;
    ``cache_write_1h_tokens`` is the part of ``cache_write_tokens`` written with a one-hour lifetime."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cache_write_1h_tokens: int = 0

    @classmethod
    def of(cls, usage: Mapping[str, Any] | None) -> Usage | None:
        """A provider's usage dict (``input_tokens``/``output_tokens``, optional cache counts; the
        OpenAI names ``prompt_tokens``/``completion_tokens`` too), or None when it holds no counts."""
        if not isinstance(usage, Mapping):
            return None

        def count(*names: str) -> int | None:
            for name in names:
                value = usage.get(name)
                if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                    return value
            return None

        tokens_in = count("input_tokens", "prompt_tokens")
        tokens_out = count("output_tokens", "completion_tokens")
        if tokens_in is None and tokens_out is None:
            return None
        return cls(
            input_tokens=tokens_in or 0,
            output_tokens=tokens_out or 0,
            cache_read_tokens=count("cache_read_tokens", "cache_read_input_tokens") or 0,
            cache_write_tokens=count("cache_write_tokens", "cache_creation_input_tokens") or 0,
            cache_write_1h_tokens=count("cache_write_1h_tokens") or 0,
        )


def price_from_profile(profile: Mapping[str, Any] | None, model: str | None = None) -> Price | None:
    """The price a model profile carries (both ``input_price`` and ``output_price``), else None."""
    if not profile:
        return None
    tokens_in, tokens_out = profile.get("input_price"), profile.get("output_price")
    if tokens_in is None or tokens_out is None:
        return None
    return Price(float(tokens_in), float(tokens_out), _optional(profile.get("cache_read_price")),
                 _optional(profile.get("cache_write_price")), "profile", model,
                 _optional(profile.get("cache_write_1h_price")))


def price_for(model: str | None, profiles: Mapping[str, Mapping[str, Any]] | None = None, *, known_prices: bool = True) -> Price | None:
    """The price of ``model``: its profile's, else ``genai-prices``' (when installed and
    ``known_prices``), else None (unpriced)."""
    if not model:
        return None
    own = price_from_profile((profiles or {}).get(model), model)
    if own is not None or not known_prices:
        return own
    return _known_price(model)


def cost_usd(usage: Usage | Mapping[str, Any] | None, price: Price | None) -> float | None:
    """What ``usage`` costs at ``price`` in USD, cache reads, 5-minute writes and 1-hour writes each
    at their own rate; None when either is unknown, or when the usage has cache tokens of a kind the
    price has no rate for."""
    counts = usage if isinstance(usage, Usage) else Usage.of(usage)
    if counts is None or price is None:
        return None
    cache_read = min(counts.cache_read_tokens, counts.input_tokens)
    cache_write = min(counts.cache_write_tokens, counts.input_tokens - cache_read)
    write_1h = min(counts.cache_write_1h_tokens, cache_write)
    write_5m = cache_write - write_1h
    plain = counts.input_tokens - cache_read - cache_write
    total = plain * price.input + counts.output_tokens * price.output
    for tokens, rate in ((cache_read, price.cache_read), (write_5m, price.cache_write), (write_1h, price.cache_write_1h)):
        if tokens:
            if rate is None:
                return None
            total += tokens * rate
    return total / _MILLION


def input_cost_usd(input_tokens: int, price: Price | None) -> float | None:
    """What ``input_tokens`` uncached input tokens cost at ``price``, or None when unpriced."""
    if price is None:
        return None
    return input_tokens * price.input / _MILLION


def cache_usage_text(usage: Usage | Mapping[str, Any] | None) -> str | None:
    """The cache part of a provider's usage in words, as every front end shows it beside the input:
    ``cache read 2,000 · written 400 (1h 200)``; None when the provider reported no cache tokens."""
    counts = usage if isinstance(usage, Usage) else Usage.of(usage)
    if counts is None or not (counts.cache_read_tokens or counts.cache_write_tokens):
        return None
    text = f"cache read {counts.cache_read_tokens:,} · written {counts.cache_write_tokens:,}"
    return text + (f" (1h {counts.cache_write_1h_tokens:,})" if counts.cache_write_1h_tokens else "")


USD_COLUMN_DECIMALS = 6  # the most decimals a column of costs shows: a millionth of a dollar


def _usd_decimals(value: float) -> int:
    """How many decimals ``format_usd`` shows ``value`` (above 0) with: cents from a dollar up, four
    significant places down to $0.0001 (no trailing zeros past the cents), two below that."""
    if value >= 1:
        return 2
    if value >= 0.0001:
        text = f"{value:.4g}"  # never an exponent in this range
        return max(2, len(text.partition(".")[2]))
    return min(12, 1 - math.floor(math.log10(value)))


def _usd(amount: float, decimals: int) -> str:
    """``amount`` with ``decimals`` decimals; a sum above 0 too small for them reads ``<$0.000001``."""
    sign = "-" if amount < 0 else ""
    smallest = 10.0 ** -decimals
    if amount != 0 and abs(amount) < smallest / 2:
        return f"{sign}<${smallest:.{decimals}f}"
    return f"{sign}${abs(amount):,.{decimals}f}"


def format_usd(amount: float | None) -> str:
    """``$0.0123`` (four significant places for small sums), ``$0.000053`` (a tiny sum reads as money,
    never as an exponent), ``-$1.50``, ``$0.50``, or ``unpriced``. A column of sums is
    ``format_usd_column``'s: one precision for all of them."""
    if amount is None:
        return "unpriced"
    if amount == 0:
        return "$0.00"
    return _usd(amount, _usd_decimals(abs(amount)))


def format_usd_column(amounts: Sequence[float | None]) -> list[str]:
    """Each of ``amounts`` as money with one number of decimals for all, so that a column lines up
    and compares by eye: enough for the smallest sum above 0 (as ``format_usd`` would show it), at
    least the cents and at most ``USD_COLUMN_DECIMALS``; a sum too small for that reads
    ``<$0.000001``. ``None`` is ``unpriced``."""
    shown = [abs(a) for a in amounts if a]
    decimals = min(USD_COLUMN_DECIMALS, max((_usd_decimals(v) for v in shown), default=2))
    return ["unpriced" if amount is None else _usd(amount, decimals) for amount in amounts]


def _optional(value: Any) -> float | None:
    return None if value is None else float(value)


def _known_price(model: str) -> Price | None:
    """``genai-prices``' price for ``model`` per million tokens, or None when the package is not
    installed or does not know the model. Prices are read by pricing one million tokens of each kind."""
    try:
        from genai_prices import Usage as KnownUsage, calc_price  # type: ignore[import-not-found]
    except ImportError:
        return None

    def one_million(**counts: int) -> float | None:
        try:
            return float(calc_price(KnownUsage(**counts), model_ref=model).total_price)
        except Exception:  # an unknown model, or a package version with another API: unpriced
            return None

    tokens_in = one_million(input_tokens=_MILLION)
    tokens_out = one_million(output_tokens=_MILLION)
    if tokens_in is None or tokens_out is None:
        return None
    cache_read = one_million(input_tokens=_MILLION, cache_read_tokens=_MILLION)
    cache_write = one_million(input_tokens=_MILLION, cache_write_tokens=_MILLION)
    return Price(tokens_in, tokens_out, cache_read, cache_write, "genai-prices", model, None)
